import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { Ledger, RevisionRow, Stores } from '@tms/ledger';
import type { Embedder } from './embedders/embedder';
import { type SearchProvider, semanticCursorName, type VectorDocument, type VectorMetadata } from './provider';

export interface SemanticIndexerOptions {
  /** Commits per batch (small: every new text in them is embedded before the cursor moves). */
  batchSize?: number;
  /**
   * Texts per `embed` call. One call per batch by default: the builtin model then gets the
   * batch's texts grouped by length, its cheapest order.
   */
  embedBatchSize?: number;
  /** Claim each workspace with a transaction-scoped advisory lock (the semantic arm's own). */
  exclusive?: boolean;
  onBatch?: (event: SemanticBatchReport) => void;
  /** Called between storing a batch's vectors and advancing the semantic cursor (tests crash here). */
  beforeAdvance?: (workspaceId: string, sequence: number) => Promise<void> | void;
}

export interface SemanticBatchReport {
  workspaceId: string;
  commits: number;
  /** Texts embedded. */
  embedded: number;
  /** Vectors whose metadata changed without re-embedding. */
  updated: number;
  /** Vectors deleted (purged revisions). */
  deleted: number;
  indexedSequence: number;
}

/** A revision's identity and filter columns, as both arms index them (the lexical arm adds the text). */
export function revisionMetadata(row: RevisionRow): VectorMetadata {
  return {
    workspaceId: row.workspaceId,
    revisionId: row.id,
    memoryId: row.memoryId,
    namespaceId: row.namespaceId,
    kind: row.kind,
    validFrom: row.validFrom,
    validTo: row.validTo,
    recordedAt: row.recordedAt,
    recordedUntil: row.recordedUntil,
  };
}

/**
 * The semantic arm of the indexer (decisions §11): tails the same commits as the lexical arm on
 * its own cursor (`semanticCursorName(provider, model)` in `index_state`), embeds the texts of
 * revisions that have no vector of this model yet, updates the filter columns of those that do
 * (a correction closing `recorded_until` is not re-embedded), deletes the vectors of purged
 * revisions, and advances its cursor only once the vectors are stored. A new model gets a new
 * cursor, starting at 0, so everything is embedded again with it.
 */
export class SemanticIndexer {
  private readonly batchSize: number;
  private readonly embedBatchSize: number;
  private readonly exclusive: boolean;

  constructor(
    private readonly ledger: Ledger,
    readonly provider: SearchProvider,
    readonly embedder: Embedder,
    private readonly options: SemanticIndexerOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 50;
    this.embedBatchSize = options.embedBatchSize ?? 64;
    this.exclusive = options.exclusive ?? ledger.driver === 'postgres';
  }

  /**
   * Its cursor in `index_state`, once the embedder knows its model (an openai model without
   * configured dimensions learns them from its endpoint): rejects with `EmbedderUnavailableError`
   * until then, and the indexer's loop backs off.
   */
  async cursor(): Promise<string> {
    const { model } = await this.embedder.ready();
    return semanticCursorName(this.provider.name, model);
  }

  /** Embed every workspace that is behind until all are caught up; returns commits indexed. */
  async catchUp(): Promise<number> {
    let total = 0;
    for (const { workspaceId } of await this.ledger.stores.indexState.lag(await this.cursor(), true)) {
      for (;;) {
        const indexed = await this.indexBatch(workspaceId);
        total += indexed;
        if (indexed === 0) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return total;
  }

  /**
   * One batch of one workspace; 0 when nothing was left or another indexer holds it.
   *
   * No transaction spans the embedding, which takes seconds at the model's low priority: on
   * Postgres a transaction held that long would keep a pool connection from the writers and hold
   * back the cleanup of the rows every write updates. The batch is planned from committed rows,
   * embedded outside any transaction, then stored with the cursor's advance in one short
   * transaction that first checks the cursor has not moved (another indexer did the batch: its
   * vectors are the same, ours are dropped).
   */
  indexBatch(workspaceId: string): Promise<number> {
    return trace.getTracer('tms-indexer').startActiveSpan(
      'embed batch',
      {
        attributes: {
          'tms.workspace_id': workspaceId,
          'tms.search_provider': this.provider.name,
          'tms.embedding_model': this.embedder.model ?? 'unknown',
        },
      },
      async (span) => {
        try {
          const report = await this.batch(workspaceId);
          if (!report) return 0;
          span.setAttribute('tms.commits', report.commits);
          span.setAttribute('tms.embedded', report.embedded);
          this.options.onBatch?.(report);
          return report.commits;
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      },
    );
  }

  /** Run `work` holding this workspace's semantic claim (a short transaction on Postgres); null when another indexer holds it. */
  private claimed<T>(workspaceId: string, work: (stores: Stores) => Promise<T>): Promise<T | null> {
    if (!this.exclusive) return work(this.ledger.stores);
    return this.ledger.transaction(async (stores) =>
      (await stores.indexState.tryClaim(workspaceId, 'semantic')) ? work(stores) : null,
    );
  }

  private async batch(workspaceId: string): Promise<SemanticBatchReport | null> {
    const { model, dimensions } = await this.embedder.ready();
    const cursor = semanticCursorName(this.provider.name, model);
    // 1. Plan from committed rows; deletions and metadata are stored at once, so a purge never
    //    waits behind the embedder.
    const plan = await this.claimed(workspaceId, async (stores) => {
      const from = await stores.indexState.indexedSequence(workspaceId, cursor);
      const commits = await stores.commits.after(workspaceId, from, this.batchSize);
      const last = commits.at(-1);
      if (!last) return null;
      const memoryIds = [...new Set(commits.flatMap((c) => c.subjectIds.filter((id) => id.startsWith('mem_'))))];
      // The ledger as it is now (which includes everything up to `last`), as the lexical arm reads it.
      const revisions = await stores.memories.revisionsOfMemories(workspaceId, memoryIds);
      const deletes = revisions.filter((r) => r.purgedAt !== null || r.text === null).map((r) => r.id);
      const live = revisions.filter((r) => r.purgedAt === null && r.text !== null);
      const embedded = new Set(
        await this.provider.vectorRevisionIds(
          workspaceId,
          model,
          live.map((r) => r.id),
        ),
      );
      const updates = live.filter((r) => embedded.has(r.id)).map(revisionMetadata);
      if (deletes.length || updates.length) {
        await this.provider.applyVectors(workspaceId, { model, dimensions, upserts: [], updates, deletes });
      }
      return {
        from,
        commits: commits.length,
        last: last.sequence,
        fresh: live.filter((r) => !embedded.has(r.id)),
        updated: updates.length,
        deleted: deletes.length,
      };
    });
    if (!plan) return null;
    // 2. Embed, holding no transaction.
    const upserts: VectorDocument[] = [];
    for (let i = 0; i < plan.fresh.length; i += this.embedBatchSize) {
      const chunk = plan.fresh.slice(i, i + this.embedBatchSize);
      const vectors = await this.embedder.embed(
        chunk.map((r) => r.text ?? ''),
        'document',
      );
      chunk.forEach((r, j) => {
        const vector = vectors[j];
        if (!vector || vector.length !== dimensions) {
          throw new Error(`embedder ${model} returned ${vector?.length ?? 'no'} dimensions, not ${dimensions}`);
        }
        upserts.push({ ...revisionMetadata(r), vector });
      });
    }
    // 3. Store and advance, unless another indexer moved the cursor meanwhile. A revision purged
    //    since step 1 loses its vector when the batch holding the purge's commit runs.
    const stored = await this.claimed(workspaceId, async (stores) => {
      if ((await stores.indexState.indexedSequence(workspaceId, cursor)) !== plan.from) return false;
      if (upserts.length > 0) {
        await this.provider.applyVectors(workspaceId, { model, dimensions, upserts, updates: [], deletes: [] });
      }
      await this.options.beforeAdvance?.(workspaceId, plan.last);
      await stores.indexState.advance(workspaceId, cursor, plan.last, Date.now() / 1000);
      return true;
    });
    if (!stored) return null;
    return {
      workspaceId,
      commits: plan.commits,
      embedded: plan.fresh.length,
      updated: plan.updated,
      deleted: plan.deleted,
      indexedSequence: plan.last,
    };
  }
}
