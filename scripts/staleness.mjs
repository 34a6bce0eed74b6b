// Plain JavaScript on purpose: `pnpm start` and `pnpm svc` run this check with `node` alone, so a
// built service starts without loading tsx or esbuild.
import fs from 'node:fs';
import path from 'node:path';

/** Written beside the bundles by scripts/build.ts: every source file they were built from. */
export const INPUTS_FILE = 'inputs.json';

/**
 * Whether `outDir` lacks one of `bundles`, or any source it was built from changed since (newer,
 * or gone), so that `pnpm start` and `pnpm svc` never run stale code after an edit.
 * @param {string} outDir
 * @param {string[]} bundles
 * @returns {boolean}
 */
export function isStale(outDir, bundles) {
  let built = Number.POSITIVE_INFINITY;
  /** @type {string[]} */
  let inputs;
  try {
    for (const bundle of bundles)
      built = Math.min(built, fs.statSync(path.join(outDir, 'bin', `${bundle}.mjs`)).mtimeMs);
    inputs = JSON.parse(fs.readFileSync(path.join(outDir, INPUTS_FILE), 'utf8'));
  } catch {
    return true;
  }
  for (const input of inputs) {
    try {
      if (fs.statSync(input).mtimeMs > built) return true;
    } catch {
      return true;
    }
  }
  return false;
}
