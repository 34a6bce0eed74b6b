import type { Ledger, RevisionRow } from '@tms/ledger';
import { CursorRunner, type IndexingArm, memoriesOf } from './cursor-runner';
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
  /** Claim each workspace with a transaction-scoped advisory lock (the semantic arm's own) while planning and storing. */
  exclusive?: boolean;
  onBatch?: (event: SemanticBatchReport) => void;
  /** Called inside the store transaction, between a batch's vectors and the semantic cursor's advance (tests fail here). */
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

interface SemanticPlan {
  /** Revisions whose vector goes: purged, or their text gone. */
  deletes: string[];
  /** Revisions with text, as planned. */
  live: RevisionRow[];
}

/**
 * The semantic arm (decisions §11) as a plug-in of the cursor runner: tails the same commits as
 * the lexical arm on its own cursor (`semanticCursorName(provider, model)`), embeds the texts of
 * revisions that have no vector of this model yet, updates the filter columns of those that do
 * (a correction closing `recorded_until` is not re-embedded) and deletes the vectors of purged
 * revisions. Embedding takes seconds at the model's low priority, and no transaction is open
 * meanwhile: on Postgres one held that long would keep a pool connection from the writers and
 * hold back the cleanup of the rows every write updates.
 */
function semanticArm(
  provider: SearchProvider,
  embedder: Embedder,
  embedBatchSize: number,
): IndexingArm<SemanticPlan, SemanticBatchReport> {
  return {
    name: 'semantic',
    spanName: 'embed batch',
    spanAttributes: (workspaceId) => ({
      'tms.workspace_id': workspaceId,
      'tms.search_provider': provider.name,
      'tms.embedding_model': embedder.model ?? 'unknown',
    }),
    // Named once the embedder knows its model (an openai model without configured dimensions
    // learns them from its endpoint): until then it rejects, and the arm's loop backs off.
    async cursor() {
      const { model } = await embedder.ready();
      return semanticCursorName(provider.name, model);
    },
    async plan(stores, workspaceId, commits) {
      // The ledger as it is now (which includes everything up to the batch's last commit).
      const revisions = await stores.memories.revisionsOfMemories(workspaceId, memoriesOf(commits));
      return {
        deletes: revisions.filter((r) => r.purgedAt !== null || r.text === null).map((r) => r.id),
        live: revisions.filter((r) => r.purgedAt === null && r.text !== null),
      };
    },
    async work(workspaceId, plan, fences) {
      const { model, dimensions } = await embedder.ready();
      const embedded = new Set(
        await provider.vectorRevisionIds(
          workspaceId,
          model,
          plan.live.map((r) => r.id),
        ),
      );
      const updates = plan.live.filter((r) => embedded.has(r.id)).map(revisionMetadata);
      const fresh = plan.live.filter((r) => !embedded.has(r.id));
      // Deletions and metadata are stored at once, so a purge never waits behind the embedder.
      if (plan.deletes.length || updates.length) {
        const batch = { model, dimensions, upserts: [], updates, deletes: plan.deletes };
        if (!(await provider.applyVectors(workspaceId, batch, fences.partial))) {
          return { embedded: 0, updated: 0, deleted: 0 };
        }
      }
      const upserts: VectorDocument[] = [];
      for (let i = 0; i < fresh.length; i += embedBatchSize) {
        const chunk = fresh.slice(i, i + embedBatchSize);
        const vectors = await embedder.embed(
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
      // Stored with the advance, unless another indexer moved the cursor meanwhile (its vectors
      // are the same; ours are dropped). A revision purged since the plan loses its vector when
      // the batch holding the purge's commit runs.
      await provider.applyVectors(workspaceId, { model, dimensions, upserts, updates: [], deletes: [] }, fences.final);
      return { embedded: fresh.length, updated: updates.length, deleted: plan.deletes.length };
    },
    describe(span, report) {
      span.setAttribute('tms.embedded', report.embedded);
    },
  };
}

/**
 * The semantic arm on the cursor runner. A new model gets a new cursor, starting at 0, so
 * everything is embedded again with it.
 */
export class SemanticIndexer extends CursorRunner<SemanticPlan, SemanticBatchReport> {
  constructor(
    ledger: Ledger,
    readonly provider: SearchProvider,
    readonly embedder: Embedder,
    options: SemanticIndexerOptions = {},
  ) {
    super(ledger, semanticArm(provider, embedder, options.embedBatchSize ?? 64), {
      // Small: every new text in a batch is embedded before the cursor moves.
      batchSize: options.batchSize ?? 50,
      exclusive: options.exclusive ?? ledger.driver === 'postgres',
      onBatch: options.onBatch,
      beforeAdvance: options.beforeAdvance,
    });
  }
}
