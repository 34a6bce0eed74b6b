import { SpanStatusCode, trace } from '@opentelemetry/api';
import { COMMIT_CHANNEL, type Ledger, type RevisionRow, type Stores } from '@tms/ledger';
import type { Embedder } from './embedders/embedder';
import type { SearchDocument, SearchProvider } from './provider';
import { revisionMetadata, SemanticIndexer, type SemanticIndexerOptions } from './semantic-indexer';

export interface IndexerOptions {
  /** Commits per batch. */
  batchSize?: number;
  /**
   * Claim each workspace with a transaction-scoped advisory lock, so several indexer processes
   * share the work. Off for the embedded PGlite ledger, where one process owns the database.
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
  onError?: (error: unknown, attempt: number, arm: 'lexical' | 'semantic') => void;
  /** Called between applying a batch and advancing the indexed sequence (tests crash here). */
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
 * Tails each workspace's commits in sequence order into a search provider. A batch is applied
 * to the provider first and `indexed_sequence` advanced only after the provider confirmed it,
 * so a crash at any point loses nothing (the batch is applied again, and documents are keyed by
 * revision id, so nothing is duplicated).
 */
export class Indexer {
  private readonly batchSize: number;
  private readonly exclusive: boolean;
  private readonly pollMs: number;
  private stopped = false;
  private readonly wakers = new Set<() => void>();
  /** The semantic arm, when an embedder (not `none`) was given. */
  readonly semantic: SemanticIndexer | null;

  constructor(
    private readonly ledger: Ledger,
    readonly provider: SearchProvider,
    private readonly options: IndexerOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 200;
    this.exclusive = options.exclusive ?? ledger.driver === 'postgres';
    this.pollMs = options.pollMs ?? 1000;
    this.semantic =
      options.embedder && options.embedder.kind !== 'none'
        ? new SemanticIndexer(ledger, provider, options.embedder, { ...options.semantic, exclusive: this.exclusive })
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
  async catchUpLexical(): Promise<number> {
    let total = 0;
    for (const { workspaceId } of await this.ledger.stores.indexState.lag(this.provider.name, true)) {
      for (;;) {
        const indexed = await this.indexBatch(workspaceId);
        total += indexed;
        if (indexed === 0) break;
        // PGlite answers within the microtask queue: yield so requests in the same process run.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return total;
  }

  /**
   * One batch of one workspace; 0 when nothing was left or another indexer holds it. The batch
   * is reported (`onBatch`: logs, metrics) only once its advance has committed, so a process
   * killed mid-batch never claims a batch that another indexer will do again.
   */
  indexBatch(workspaceId: string): Promise<number> {
    // A span per batch when tracing is on (the no-op API otherwise): its statements are its
    // children. The tracer is asked each time, so it follows a replaced tracer provider.
    return trace
      .getTracer('tms-indexer')
      .startActiveSpan(
        'index batch',
        { attributes: { 'tms.workspace_id': workspaceId, 'tms.search_provider': this.provider.name } },
        async (span) => {
          try {
            const commits = await this.indexBatchTraced(workspaceId);
            span.setAttribute('tms.commits', commits);
            return commits;
          } catch (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
            throw error;
          } finally {
            span.end();
          }
        },
      );
  }

  private async indexBatchTraced(workspaceId: string): Promise<number> {
    const report = this.exclusive
      ? await this.ledger.transaction(async (stores) =>
          (await stores.indexState.tryClaim(workspaceId)) ? this.batch(stores, workspaceId) : null,
        )
      : await this.batch(this.ledger.stores, workspaceId);
    if (!report) return 0;
    this.options.onBatch?.(report);
    return report.commits;
  }

  private async batch(stores: Stores, workspaceId: string): Promise<BatchReport | null> {
    const provider = this.provider.name;
    const from = await stores.indexState.indexedSequence(workspaceId, provider);
    const commits = await stores.commits.after(workspaceId, from, this.batchSize);
    const last = commits.at(-1);
    if (!last) return null;
    const memoryIds = [...new Set(commits.flatMap((c) => c.subjectIds.filter((id) => id.startsWith('mem_'))))];
    // Documents reflect the ledger as it is now, which includes everything up to `last`.
    const revisions = await stores.memories.revisionsOfMemories(workspaceId, memoryIds);
    const upserts = revisions.filter((r) => r.purgedAt === null && r.text !== null).map(toDocument);
    const deletes = revisions.filter((r) => r.purgedAt !== null || r.text === null).map((r) => r.id);
    await this.provider.apply(workspaceId, { upserts, deletes });
    await this.options.beforeAdvance?.(workspaceId, last.sequence);
    await stores.indexState.advance(workspaceId, provider, last.sequence, Date.now() / 1000);
    return {
      workspaceId,
      commits: commits.length,
      documents: upserts.length + deletes.length,
      indexedSequence: last.sequence,
    };
  }

  /**
   * Run until `stop()`: one loop per arm, each woken by NOTIFY on every commit, polling as the
   * fallback, retrying with exponential backoff (capped at 30 s) while its provider, embedder
   * or the database fails. The arms never wait for each other.
   */
  async run(): Promise<void> {
    const unlisten = await this.ledger.handle
      .listen(COMMIT_CHANNEL, () => {
        for (const wake of this.wakers) wake();
      })
      .catch(() => null);
    try {
      await this.provider.prepare().catch(() => {});
      const semantic = this.semantic;
      await Promise.all([
        this.loop('lexical', () => this.catchUpLexical()),
        semantic ? this.loop('semantic', () => semantic.catchUp()) : null,
      ]);
    } finally {
      await unlisten?.().catch(() => {});
    }
  }

  private async loop(arm: 'lexical' | 'semantic', work: () => Promise<number>): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      let delay = this.pollMs;
      try {
        if (attempt > 0) await this.provider.prepare();
        await work();
        attempt = 0;
      } catch (error) {
        attempt += 1;
        this.options.onError?.(error, attempt, arm);
        delay = Math.min(30_000, 250 * 2 ** Math.min(attempt, 7));
      }
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        // While failing, commits do not cut the backoff short (stop does).
        const wake = () => {
          if (attempt > 0 && !this.stopped) return;
          clearTimeout(timer);
          this.wakers.delete(wake);
          resolve();
        };
        const timer = setTimeout(() => {
          this.wakers.delete(wake);
          resolve();
        }, delay);
        this.wakers.add(wake);
      });
    }
  }

  stop(): void {
    this.stopped = true;
    for (const wake of this.wakers) wake();
  }

  /** Whether `run` has been asked to stop. */
  get stopping(): boolean {
    return this.stopped;
  }
}
