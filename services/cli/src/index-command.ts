import { checkEmbedder, embedderFor, searchProviderFor } from '@tms/composition';
import type { IndexLag, Ledger } from '@tms/ledger';
import { type Embedder, Indexer, semanticCursorName } from '@tms/search';
import type { CliEnv } from './env';
import { progressBar, progressDrawer } from './progress';

export { progressBar };

/** The configured embedder, named (an openai model without configured dimensions is probed). */
async function configuredEmbedder(env: CliEnv): Promise<Embedder | null> {
  if ((env.EMBEDDER ?? 'builtin') === 'none') return null;
  const embedder = embedderFor(env, { recall: false });
  if (embedder.kind === 'openai' && env.EMBEDDINGS_DIMENSIONS === undefined) await checkEmbedder(embedder);
  return embedder;
}

function lagTable(rows: IndexLag[], done: string): string[] {
  const lines = [`workspace                      head ${done.padStart(8)}  lag`];
  for (const r of rows) {
    lines.push(
      `${r.workspaceId.padEnd(28)} ${String(r.headSequence).padStart(6)} ${String(r.indexedSequence).padStart(8)} ${String(r.headSequence - r.indexedSequence).padStart(4)}`,
    );
  }
  return lines;
}

/**
 * `svc index status`: head, indexed sequence and lag of every workspace for each arm: the
 * lexical one and, unless EMBEDDER=none, the semantic one of the configured model.
 */
export async function indexStatus(env: CliEnv, ledger: Ledger): Promise<string> {
  const provider = env.SEARCH_PROVIDER;
  const rows = await ledger.stores.indexState.lag(provider, false);
  const lines = [`provider ${provider}`, ...lagTable(rows, 'indexed')];
  const lag = rows.reduce((n, r) => n + r.headSequence - r.indexedSequence, 0);
  lines.push(`${rows.length} workspaces, ${lag} commits not yet indexed`);
  if (provider === 'none') return lines.join('\n');
  const embedder = await configuredEmbedder(env);
  try {
    if (!embedder) {
      lines.push('semantic arm off (EMBEDDER=none)');
    } else {
      const semantic = await ledger.stores.indexState.lag(semanticCursorName(provider, embedder.model), false);
      lines.push(`semantic arm ${embedder.model}`, ...lagTable(semantic, 'embedded'));
      const behind = semantic.reduce((n, r) => n + r.headSequence - r.indexedSequence, 0);
      lines.push(`${semantic.length} workspaces, ${behind} commits not yet embedded`);
    }
  } finally {
    await embedder?.close();
  }
  return lines.join('\n');
}

/**
 * `svc index rebuild [--workspace W]`: empty the provider's index and index the ledger again;
 * then, unless EMBEDDER=none, drop the workspace's vectors (every model's: those of another
 * model are never used again) and embed every text again with the configured model.
 */
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
  const lexical = await rebuildArm(targets, total, progress, {
    clear: (workspaceId) => provider.clear(workspaceId),
    cursor: provider.name,
    indexBatch: (indexer, workspaceId) => indexer.indexBatch(workspaceId),
    indexer: new Indexer(ledger, provider, { batchSize: 500 }),
    ledger,
  });
  const summary = `rebuilt ${provider.name} index: ${targets.length} workspaces, ${lexical} commits`;
  const embedder = await configuredEmbedder(env);
  if (!embedder) return summary;
  try {
    const indexer = new Indexer(ledger, provider, { batchSize: 500, embedder });
    const semantic = indexer.semantic;
    if (!semantic) return summary;
    progress.write(`embedding with ${embedder.model}\n`);
    const embedded = await rebuildArm(targets, total, progress, {
      clear: (workspaceId) => provider.clearVectors(workspaceId),
      cursor: await semantic.cursor(),
      indexBatch: (_, workspaceId) => semantic.indexBatch(workspaceId),
      indexer,
      ledger,
    });
    return `${summary}\nre-embedded with ${embedder.model}: ${targets.length} workspaces, ${embedded} commits`;
  } finally {
    await embedder.close();
  }
}

async function rebuildArm(
  targets: IndexLag[],
  total: number,
  progress: NodeJS.WriteStream,
  arm: {
    clear(workspaceId: string): Promise<void>;
    cursor: string;
    indexer: Indexer;
    indexBatch(indexer: Indexer, workspaceId: string): Promise<number>;
    ledger: Ledger;
  },
): Promise<number> {
  const bar = progressDrawer(progress, total);
  bar.start();
  for (const { workspaceId } of targets) {
    await arm.clear(workspaceId);
    await arm.ledger.stores.indexState.reset(workspaceId, arm.cursor, Date.now() / 1000);
    for (;;) {
      const indexed = await arm.indexBatch(arm.indexer, workspaceId);
      if (indexed === 0) break;
      bar.advance(indexed);
    }
  }
  bar.end();
  return bar.done;
}
