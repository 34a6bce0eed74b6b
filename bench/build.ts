/**
 * The benchmark's build: the gateway and the bench's bare baseline server, compiled by the
 * project's one build script (scripts/build.ts, which `pnpm build` runs) into bench/.build.
 *
 * Usage: tsx bench/build.ts [outDir] (default bench/.build).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BuildResult, buildBundles, REPO_ROOT } from '../scripts/build';

export const DEFAULT_OUT_DIR = path.join(REPO_ROOT, 'bench', '.build');

export const ENTRY_POINTS = {
  gateway: path.join(REPO_ROOT, 'services/gateway/src/main.ts'),
  baseline: path.join(REPO_ROOT, 'bench/baseline-server.ts'),
};

export function buildAll(outDir = DEFAULT_OUT_DIR): Promise<BuildResult<keyof typeof ENTRY_POINTS>> {
  // The baseline imports postgres.js exactly as the ledger has it installed (the same patched
  // copy), so it is looked up from the ledger when bench/ lacks it.
  return buildBundles({ entryPoints: ENTRY_POINTS, outDir, fallbackFrom: [path.join(REPO_ROOT, 'packages/ledger')] });
}

/**
 * The gateway once more, with commit chaining compiled out (docs/ledger-proofs.md): the bench's
 * reference for what chaining costs a write, measured in the same run as the chained gateway.
 */
export function buildUnchainedGateway(outDir = `${DEFAULT_OUT_DIR}-unchained`): Promise<BuildResult<'gateway'>> {
  return buildBundles({
    entryPoints: { gateway: ENTRY_POINTS.gateway },
    outDir,
    fallbackFrom: [path.join(REPO_ROOT, 'packages/ledger')],
    define: { __TMS_BENCH_UNCHAINED__: 'true' },
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const result = await buildAll(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
  process.stdout.write(`built ${Object.values(result.bundles).join(', ')}\n`);
}
