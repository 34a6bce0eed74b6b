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

/** A lock file older than this is taken to be left by a build that died, and is removed. */
const ABANDONED_LOCK_MS = 10 * 60_000;

/**
 * Run `fn` while holding the lock file `lockPath` (created exclusively; waited for, polling, while
 * another process holds it), so that two `pnpm start` / `pnpm svc` that find dist/ stale do not
 * rebuild it at once, and the later one sees the other's finished build.
 * @template T
 * @param {string} lockPath
 * @param {() => T} fn
 * @returns {T}
 */
export function withBuildLock(lockPath, fn) {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let announced = false;
  for (;;) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      break;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - fs.statSync(lockPath).mtimeMs > ABANDONED_LOCK_MS) fs.rmSync(lockPath, { force: true });
      } catch {
        // released meanwhile
      }
      if (!announced) {
        process.stderr.write(`waiting for another build of ${path.dirname(lockPath)} to finish\n`);
        announced = true;
      }
      Atomics.wait(pause, 0, 0, 100);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lockPath, { force: true });
  }
}
