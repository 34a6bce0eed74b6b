import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

// The shell blocks the docs show, run as written: `pnpm -s svc …` in them runs the CLI from its
// sources (as every CLI test does), from whatever directory the block is run in.

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** A `<!-- example:NAME -->` shell block of a document (docs/operations.md unless named). */
export function documentedBlock(name: string, document = 'docs/operations.md'): string {
  const text = fs.readFileSync(path.join(ROOT, document), 'utf8');
  const match = new RegExp(
    `<!-- example:${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\`\\n<!-- /example:${name} -->`,
  ).exec(text);
  if (!match?.[1]) throw new Error(`${document} has no example block ${name}`);
  return match[1];
}

/**
 * `pnpm -s svc …` as the docs write it runs `node dist/bin/svc.mjs …`; here the same program
 * runs from its sources, so the blocks run exactly as written.
 */
export const PRELUDE = `set -euo pipefail
pnpm() {
  if [ "$1" != "-s" ] || [ "$2" != "svc" ]; then echo "not a documented command: pnpm $*" >&2; return 99; fi
  shift 2
  "$NODE" --import "$TSX_LOADER" "$TMS_ROOT/services/cli/src/main.ts" "$@"
}
`;

/** The environment of a shell that set nothing of an identity provider or of dev auth. */
export function shellEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(DATABASE_URL|DATA_DIR|DEV_AUTH|NODE_ENV|SESSION_.*|OAUTH_.*|TMS_.*|EMBEDDER)$/.test(key),
    ),
  );
  const loader = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
  return { ...base, NODE: process.execPath, TMS_ROOT: ROOT, TSX_LOADER: loader, ...extra };
}

const execFileAsync = promisify(execFile);

/** A bash script (from the repository root unless `cwd`): its exit code and output, whatever the code. */
export async function bash(
  script: string,
  env: NodeJS.ProcessEnv,
  cwd = ROOT,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync('bash', ['-c', script], { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : null,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? '',
    };
  }
}
