// `pnpm start` / `pnpm svc`: rebuild dist/ (scripts/build.ts, through tsx) only when a source
// changed since the last build, then leave the start to `exec node dist/bin/...`.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isStale, withBuildLock } from './staleness.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
// The services, and the builtin embedder's child they fork from beside them.
const bundles = ['gateway', 'indexer', 'svc', 'builtin-embedder-worker'];
if (isStale(dist, bundles)) {
  // Another start may be building already: wait for it, then build only if still stale. The
  // lock lies beside dist/, which the build removes and writes anew.
  withBuildLock(path.join(root, '.dist.lock'), () => {
    if (!isStale(dist, bundles)) return;
    const tsx = path.join(root, 'node_modules', '.bin', 'tsx');
    // The build's own output goes to stderr: stdout belongs to the command (`pnpm -s svc token`).
    const run = spawnSync(tsx, [path.join(root, 'scripts', 'build.ts'), dist], { stdio: ['ignore', 2, 2] });
    if (run.status !== 0) {
      process.stderr.write(`build failed (${run.error?.message ?? `exit ${run.status}`}); see the output above\n`);
      process.exitCode = 1;
    }
  });
  if (process.exitCode === 1) process.exit(1);
}
