import { COMMIT_CHANNEL, type Ledger, type RevisionRow } from '@tms/ledger';
import { type ArmName, CursorRunner, type IndexingArm, memoriesOf, Wakeups } from './cursor-runner';
import type { Embedder } from './embedders/embedder';
import type { DocumentBatch, SearchDocument, SearchProvider } from './provider';
import { revisionMetadata, SemanticIndexer, type SemanticIndexerOptions } from './semantic-indexer';

export interface IndexerOptions {
  /** Commits per lexical batch (default: LEXICAL_BATCH_SIZE of the ledger's driver). */
  batchSize?: number;
  /**
   * Claim each workspace with a transaction-scoped advisory lock while a batch is planned and
   * while it is stored, so several indexer processes share the work. Off for the embedded PGlite
   * ledger, where one process owns the database.
   */
  exclusive?: boolean;
  /** Polling interval when no NOTIFY arrives (the fallback wake-up). */
  pollMs?: number;
  /**
   * The semantic arm's embedder (decisions §11); absent or kind `none`: lexical only, and no
   * semantic cursor at all. The semantic arm runs its own loop beside the lexical one, so a slow
   * or unavailable embedder only delays (backs off) the semantic arm.
   */
  embedder?: Embedder | undefined;
  /** Options of the semantic arm (batch sizes, its own `onBatch`). */
  semantic?: Omit<SemanticIndexerOptions, 'exclusive'>;
  /** A batch whose advance has committed. */
  onBatch?: (event: BatchReport) => void;
  /** A failed attempt of either arm (`arm` says which); the arm retries with backoff. */
  onError?: (error: unknown, attempt: number, arm: ArmName) => void;
  /** Called inside a batch's store transaction, between its writes and its advance (tests fail here). */
  beforeAdvance?: (workspaceId: string, sequence: number) => Promise<void> | void;
}

export interface BatchReport {
  workspaceId: string;
  commits: number;
  documents: number;
  indexedSequence: number;
}

function toDocument(row: RevisionRow): SearchDocument {
  return { ...revisionMetadata(row), text: row.text ?? '' };
}

/**
 * Commits per lexical batch by default. On Postgres a larger batch spreads each batch's fixed
 * cost (its two transactions) over more documents, and its statistics' upsert, in key order,
 * finds more of its rows on each index page: catching up 126,000 commits ran 14% faster in
 * batches of 1,000 than of 200, and at a million memories batches of 5,000 indexed about 12% more
 * a second than batches of 1,000. On PGlite a batch's statements run in the gateway's thread and
 * hold requests back while they do: it stays short.
 */
export const LEXICAL_BATCH_SIZE = { postgres: 5000, pglite: 200 } as const;

/** How often an idle indexer looks for a vector store to fill (one catalog read). */
const FILL_POLL_MS = 30_000;

/**
 * The lexical arm: a batch's documents reflect the ledger as it is when planned (which includes
 * every commit of the batch); the provider analyses them outside any transaction and stores them
 * through the fence (the Postgres provider in the fence's own transaction, with the advance).
 */
function lexicalArm(provider: SearchProvider): IndexingArm<DocumentBatch, BatchReport> {
  return {
    name: 'lexical',
    spanName: 'index batch',
    spanAttributes: (workspaceId) => ({ 'tms.workspace_id': workspaceId, 'tms.search_provider': provider.name }),
    cursor: async () => provider.name,
    // Tables emptied under the cursors (a crash) fail the pass; the retry's `prepare` rebuilds them.
    beforePass: async () => provider.verifyIntact?.(),
    async plan(stores, workspaceId, commits) {
      const revisions = await stores.memories.revisionsOfMemories(workspaceId, memoriesOf(commits));
      return {
        upserts: revisions.filter((r) => r.purgedAt === null && r.text !== null).map(toDocument),
        deletes: revisions.filter((r) => r.purgedAt !== null || r.text === null).map((r) => r.id),
      };
    },
    async work(workspaceId, batch, { final }) {
      await provider.apply(workspaceId, batch, final);
      return { documents: batch.upserts.length + batch.deletes.length };
    },
  };
}

/**
 * Tails each workspace's commits in sequence order into a search provider: the lexical arm, and
 * the semantic arm when an embedder is given, each on its own cursor, both on the one cursor
 * runner (./cursor-runner.ts). A cursor advances only in the transaction that stores its batch
 * (or, for an index outside the database, once the index confirmed it), so a crash at any point
 * loses nothing: the batch is done again, and documents are keyed by revision id.
 */
export class Indexer {
  private readonly lexical: CursorRunner<DocumentBatch, BatchReport>;
  private readonly pollMs: number;
  private readonly wakeups = new Wakeups();
  /** The semantic arm, when an embedder (not `none`) was given. */
  readonly semantic: SemanticIndexer | null;

  constructor(
    private readonly ledger: Ledger,
    readonly provider: SearchProvider,
    private readonly options: IndexerOptions = {},
  ) {
    const exclusive = options.exclusive ?? ledger.driver === 'postgres';
    this.pollMs = options.pollMs ?? 1000;
    this.lexical = new CursorRunner(ledger, lexicalArm(provider), {
      batchSize: options.batchSize ?? LEXICAL_BATCH_SIZE[ledger.driver],
      exclusive,
      onBatch: options.onBatch,
      beforeAdvance: options.beforeAdvance,
    });
    this.semantic =
      options.embedder && options.embedder.kind !== 'none'
        ? new SemanticIndexer(ledger, provider, options.embedder, { ...options.semantic, exclusive })
        : null;
  }

  /**
   * Both arms until caught up (the semantic one after the lexical one); returns commits
   * indexed by the lexical arm. Throws `EmbedderUnavailableError` if the embedder cannot answer,
   * after the lexical arm caught up.
   */
  async catchUp(): Promise<number> {
    const lexical = await this.catchUpLexical();
    await this.semantic?.catchUp();
    return lexical;
  }

  /** The lexical arm only: index every workspace that is behind until all are caught up. */
  catchUpLexical(): Promise<number> {
    return this.lexical.catchUp();
  }

  /** One lexical batch of one workspace; 0 when nothing was left or another indexer holds or did it. */
  indexBatch(workspaceId: string): Promise<number> {
    return this.lexical.indexBatch(workspaceId);
  }

  /**
   * Run until `stop()`: one loop per arm, each woken by NOTIFY on every commit, polling as the
   * fallback, backing off while its provider, embedder or the database fails. The arms never
   * wait for each other. With the semantic arm, a third loop fills in the background a vector
   * store that replaces the current one (exact -> pgvector), one short step at a time.
   */
  async run(): Promise<void> {
    const unlisten = await this.ledger.handle.listen(COMMIT_CHANNEL, () => this.wakeups.wake()).catch(() => null);
    try {
      await this.provider.prepare().catch(() => {});
      const control = {
        wakeups: this.wakeups,
        pollMs: this.pollMs,
        beforeRetry: () => this.provider.prepare(),
        onError: this.options.onError,
      };
      const fill = this.provider.fillVectorStore?.bind(this.provider);
      await Promise.all([
        this.lexical.run(control),
        this.semantic?.run(control),
        // Beside the semantic cursor, not behind it: an embedder that is down does not hold the
        // fill up. A fill begins at a `prepare`, not with a commit: it is looked for now and then.
        fill &&
          this.semantic?.run({ ...control, pollMs: FILL_POLL_MS, byCommits: false }, async () => (await fill()) > 0),
      ]);
    } finally {
      await unlisten?.().catch(() => {});
    }
  }

  stop(): void {
    this.wakeups.stop();
  }

  /** Whether `run` has been asked to stop. */
  get stopping(): boolean {
    return this.wakeups.stopped;
  }
}
