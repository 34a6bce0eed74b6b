import { searchProviderFor } from '@tms/composition';
import type { Ledger } from '@tms/ledger';
import { Indexer } from '@tms/search';
import type { CliEnv } from './env';

/** A one-line progress bar, redrawn in place on a terminal and printed every 10% otherwise. */
export function progressBar(done: number, total: number, width = 30): string {
  const ratio = total === 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(ratio * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}% ${done}/${total} commits`;
}

/** `svc index status`: head, indexed sequence and lag of every workspace. */
export async function indexStatus(env: CliEnv, ledger: Ledger): Promise<string> {
  const provider = env.SEARCH_PROVIDER;
  const rows = await ledger.stores.indexState.lag(provider, false);
  const lines = [`provider ${provider}`, 'workspace                      head  indexed  lag'];
  for (const r of rows) {
    lines.push(
      `${r.workspaceId.padEnd(28)} ${String(r.headSequence).padStart(6)} ${String(r.indexedSequence).padStart(8)} ${String(r.headSequence - r.indexedSequence).padStart(4)}`,
    );
  }
  const lag = rows.reduce((n, r) => n + r.headSequence - r.indexedSequence, 0);
  lines.push(`${rows.length} workspaces, ${lag} commits not yet indexed`);
  return lines.join('\n');
}

/** `svc index rebuild [--workspace W]`: empty the provider's index and index the ledger again. */
export async function indexRebuild(
  env: CliEnv,
  ledger: Ledger,
  workspace: string | undefined,
  progress: NodeJS.WriteStream = process.stderr,
): Promise<string> {
  const provider = searchProviderFor(env, ledger);
  if (provider.name === 'none') throw new Error('SEARCH_PROVIDER=none: there is no index to rebuild');
  await provider.prepare();
  const all = await ledger.stores.indexState.lag(provider.name, false);
  const targets = workspace ? all.filter((w) => w.workspaceId === workspace) : all;
  if (workspace && targets.length === 0) throw new Error(`no workspace ${workspace}`);
  const total = targets.reduce((n, w) => n + w.headSequence, 0);
  const indexer = new Indexer(ledger, provider, { batchSize: 500 });
  let done = 0;
  let lastDecile = -1;
  const draw = () => {
    if (progress.isTTY) progress.write(`\r${progressBar(done, total)}`);
    else {
      const decile = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (decile !== lastDecile) progress.write(`${progressBar(done, total)}\n`);
      lastDecile = decile;
    }
  };
  draw();
  for (const { workspaceId } of targets) {
    await provider.clear(workspaceId);
    await ledger.stores.indexState.reset(workspaceId, provider.name, Date.now() / 1000);
    for (;;) {
      const indexed = await indexer.indexBatch(workspaceId);
      if (indexed === 0) break;
      done += indexed;
      draw();
    }
  }
  if (progress.isTTY) progress.write('\n');
  return `rebuilt ${provider.name} index: ${targets.length} workspaces, ${done} commits`;
}
