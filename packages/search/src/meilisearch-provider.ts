import { type EnqueuedTask, Meilisearch, type Task } from 'meilisearch';
import {
  type CursorFence,
  type DocumentBatch,
  type LexicalScope,
  type ScopedLexicalSearch,
  type ScopedSemanticSearch,
  type SearchHit,
  type SearchProvider,
  type SearchQuery,
  SearchUnavailableError,
  type SemanticQuery,
  type SemanticScope,
  searchLexicalEachTime,
  searchSemanticEachTime,
  type VectorBatch,
  type VectorMetadata,
} from './provider';
import { analyseQuery, STOP_WORD_LIST } from './text-analysis';

interface MeiliDocument {
  id: string;
  workspace_id: string;
  memory_id: string;
  namespace_id: string;
  kind: string;
  text: string;
  valid_from: number;
  valid_to: number | null;
  valid_to_open: boolean;
  recorded_at: number;
  recorded_until: number | null;
  recorded_until_open: boolean;
  /** The semantic arm's vectors, one `userProvided` embedder per model (decisions §11). */
  _vectors?: Record<string, number[] | null | { embeddings: number[][]; regenerate: boolean }>;
}

/** The index recall searches and the indexer writes (the gateway's search key is limited to it). */
export const MEILI_INDEX_UID = 'tms_memories';

/**
 * The `userProvided` embedder that holds a model's vectors: named after the model (Meilisearch
 * embedder names are kept to letters, digits, `-` and `_`), so models are never mixed.
 */
export function meiliEmbedderName(model: string): string {
  const slug = model.replace(/[^A-Za-z0-9_-]+/g, '_');
  // The slug alone could merge two models (`a:b` and `a_b`): a short hash keeps them apart.
  let hash = 0;
  for (const char of model) hash = (Math.imul(hash, 31) + (char.codePointAt(0) ?? 0)) >>> 0;
  return `tms_${slug}_${hash.toString(36)}`;
}

const metadataFields = (workspaceId: string, d: VectorMetadata) => ({
  id: d.revisionId,
  workspace_id: workspaceId,
  memory_id: d.memoryId,
  namespace_id: d.namespaceId,
  kind: d.kind,
  valid_from: d.validFrom,
  valid_to: d.validTo,
  valid_to_open: d.validTo === null,
  recorded_at: d.recordedAt,
  recorded_until: d.recordedUntil,
  recorded_until_open: d.recordedUntil === null,
});

const quote = (value: string) => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

/**
 * Meilisearch through its official client. Settings are applied at `prepare`; every write
 * waits for its task to succeed, so a resolved `apply` means the documents are searchable.
 * Any transport failure becomes `SearchUnavailableError`.
 */
export class MeilisearchProvider implements SearchProvider {
  readonly name = 'meilisearch' as const;
  private readonly client: Meilisearch;
  /** Embedders known to be in the index settings (model -> dimensions). */
  private readonly embedders = new Map<string, number>();

  constructor(
    url: string,
    apiKey: string | undefined,
    private readonly indexUid = MEILI_INDEX_UID,
    private readonly timeoutMs = 5000,
  ) {
    this.client = new Meilisearch({ host: url, apiKey, timeout: timeoutMs });
  }

  private index() {
    return this.client.index<MeiliDocument>(this.indexUid);
  }

  private async guard<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw new SearchUnavailableError(`meilisearch ${what}: ${(error as Error).message}`, { cause: error });
    }
  }

  private async settled(task: Promise<Task>): Promise<void> {
    const done = await task;
    if (done.status !== 'succeeded') throw new Error(`task ${done.uid} ${done.status}: ${done.error?.message ?? ''}`);
  }

  async prepare(): Promise<void> {
    await this.guard('prepare', async () => {
      const created = await this.client
        .createIndex(this.indexUid, { primaryKey: 'id' })
        .waitTask({ timeout: this.timeoutMs });
      // An index that already exists fails creation with index_already_exists: that is fine.
      if (created.status === 'failed' && created.error?.code !== 'index_already_exists') {
        throw new Error(created.error?.message ?? 'index creation failed');
      }
      await this.settled(
        this.index()
          .updateSettings({
            searchableAttributes: ['text'],
            filterableAttributes: [
              // Recall asks an arm to score the other arm's candidates by revision id.
              'id',
              'workspace_id',
              'namespace_id',
              'kind',
              'valid_from',
              'valid_to',
              'valid_to_open',
              'recorded_at',
              'recorded_until',
              'recorded_until_open',
            ],
            sortableAttributes: ['recorded_at', 'id'],
            // Meilisearch ranks by itself (matched words, typos, proximity, exactness); the
            // lexical arm's English stop words are left out here too, and `sort` comes last so
            // that it only breaks ties, by revision id as the provider contract asks.
            stopWords: [...STOP_WORD_LIST],
            rankingRules: ['words', 'typo', 'proximity', 'attribute', 'exactness', 'sort'],
          })
          .waitTask({ timeout: this.timeoutMs }),
      );
    });
  }

  /**
   * Store a batch's tasks. Without a fence: enqueue them and wait. With one, they are enqueued
   * inside the fence's short transaction and waited for once it has committed, holding no
   * transaction; the cursor then advances (`confirm`). Meilisearch runs an index's tasks in the
   * order they were enqueued, and a batch is enqueued only while the cursor still stands where
   * it was planned: so the batches of a workspace land in cursor order even when two indexers
   * race, and a batch planned from older rows never lands after a newer one.
   */
  private async stored(
    what: string,
    deletes: readonly string[],
    documents: Partial<MeiliDocument>[],
    fence?: CursorFence,
  ): Promise<boolean> {
    let tasks: EnqueuedTask[] = [];
    const enqueue = async () => {
      tasks = await this.guard(what, async () => [
        ...(deletes.length ? [await this.index().deleteDocuments([...deletes])] : []),
        // A partial update (not a replacement): each arm's fields stay when the other writes.
        ...(documents.length ? [await this.index().updateDocuments(documents)] : []),
      ]);
    };
    if (!fence) await enqueue();
    else if (!(await fence.store(enqueue, 'confirm'))) return false;
    await this.guard(what, async () => {
      for (const task of tasks) {
        await this.settled(this.client.tasks.waitForTask(task.taskUid, { timeout: this.timeoutMs }));
      }
    });
    return fence ? fence.confirm() : true;
  }

  async apply(workspaceId: string, batch: DocumentBatch, fence?: CursorFence): Promise<boolean> {
    const documents = batch.upserts.map((d): MeiliDocument => ({ ...metadataFields(workspaceId, d), text: d.text }));
    return this.stored('apply', batch.deletes, documents, fence);
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    if (analyseQuery(query.text).length === 0 || query.namespaceIds.length === 0 || query.revisionIds?.length === 0) {
      return [];
    }
    const filter = this.filterOf(query);
    return this.guard('search', async () => {
      const result = await this.index().search(query.text, {
        filter,
        limit: query.limit,
        offset: query.offset,
        // When not every word matches, the most frequent words are given up first (the rare
        // ones carry the meaning), rather than the last words typed.
        matchingStrategy: 'frequency',
        sort: ['id:asc'],
        showRankingScore: true,
        attributesToRetrieve: ['id', 'memory_id'],
      });
      return result.hits.map((hit) => ({
        revisionId: hit.id,
        memoryId: hit.memory_id,
        score: (hit as { _rankingScore?: number })._rankingScore ?? 0,
      }));
    });
  }

  private filterOf(query: Omit<SearchQuery, 'text'>): string[] {
    return [
      `workspace_id = ${quote(query.workspaceId)}`,
      `namespace_id IN [${query.namespaceIds.map(quote).join(', ')}]`,
      ...(query.kinds?.length ? [`kind IN [${query.kinds.map(quote).join(', ')}]`] : []),
      ...(query.revisionIds ? [`id IN [${query.revisionIds.map(quote).join(', ')}]`] : []),
      `recorded_at <= ${query.knownAt}`,
      `(recorded_until_open = true OR recorded_until > ${query.knownAt})`,
      `valid_from <= ${query.asOf}`,
      `(valid_to_open = true OR valid_to > ${query.asOf})`,
    ];
  }

  /** Each page is a search of its own: Meilisearch pages and scores given ids itself. */
  lexicalScope(scope: LexicalScope): ScopedLexicalSearch {
    return searchLexicalEachTime(this, scope);
  }

  /** Meilisearch is asked once the vector is known: nothing of a scope is read ahead. */
  semanticScope(scope: SemanticScope): ScopedSemanticSearch {
    return searchSemanticEachTime(this, scope);
  }

  /**
   * Meilisearch's vector search over the model's `userProvided` embedder (`semanticRatio: 1`:
   * no keyword part), the same filters inside the search. `score` is Meilisearch's ranking
   * score, which orders as the cosine similarity does.
   */
  async searchSemantic(query: SemanticQuery): Promise<SearchHit[]> {
    if (query.namespaceIds.length === 0 || query.limit <= 0 || query.revisionIds?.length === 0) return [];
    const embedder = meiliEmbedderName(query.model);
    return this.guard('semantic search', async () => {
      if (!(await this.hasEmbedder(query.model))) return [];
      const result = await this.index().search('', {
        vector: Array.from(query.vector),
        hybrid: { embedder, semanticRatio: 1 },
        filter: this.filterOf(query),
        limit: query.limit,
        offset: query.offset,
        showRankingScore: true,
        attributesToRetrieve: ['id', 'memory_id'],
      });
      return result.hits
        .map((hit) => ({
          revisionId: hit.id,
          memoryId: hit.memory_id,
          score: (hit as { _rankingScore?: number })._rankingScore ?? 0,
        }))
        .sort((a, b) => b.score - a.score || (a.revisionId < b.revisionId ? -1 : a.revisionId > b.revisionId ? 1 : 0));
    });
  }

  /** Whether the index settings have the model's embedder (none yet: nothing was embedded). */
  private async hasEmbedder(model: string): Promise<boolean> {
    if (this.embedders.has(model)) return true;
    const embedders = (await this.index().getEmbedders()) ?? {};
    return embedders[meiliEmbedderName(model)] != null;
  }

  /** Add the model's `userProvided` embedder to the index settings (once per process). */
  private async ensureEmbedder(model: string, dimensions: number): Promise<void> {
    if (this.embedders.get(model) === dimensions) return;
    await this.settled(
      this.index()
        .updateEmbedders({ [meiliEmbedderName(model)]: { source: 'userProvided', dimensions } })
        .waitTask({ timeout: this.timeoutMs }),
    );
    this.embedders.set(model, dimensions);
  }

  async applyVectors(workspaceId: string, batch: VectorBatch, fence?: CursorFence): Promise<boolean> {
    await this.guard('apply vectors', () => this.ensureEmbedder(batch.model, batch.dimensions));
    const embedder = meiliEmbedderName(batch.model);
    const documents: Partial<MeiliDocument>[] = [
      ...batch.updates.map((d) => metadataFields(workspaceId, d)),
      ...batch.upserts.map((d) => ({
        ...metadataFields(workspaceId, d),
        _vectors: { [embedder]: Array.from(d.vector) },
      })),
    ];
    return this.stored('apply vectors', batch.deletes, documents, fence);
  }

  async vectorRevisionIds(workspaceId: string, model: string, revisionIds?: readonly string[]): Promise<string[]> {
    if (revisionIds && revisionIds.length === 0) return [];
    const embedder = meiliEmbedderName(model);
    return this.guard('list vectors', async () => {
      if (!(await this.hasEmbedder(model))) return [];
      const ids: string[] = [];
      for (let offset = 0; ; offset += 200) {
        const page = await this.index().getDocuments({
          filter: `workspace_id = ${quote(workspaceId)}`,
          ...(revisionIds ? { ids: [...revisionIds] } : {}),
          // Whole documents: whether `fields` may name `_vectors` differs between versions.
          retrieveVectors: true,
          limit: 200,
          offset,
        });
        for (const doc of page.results) {
          const vectors = doc._vectors?.[embedder];
          const present = Array.isArray(vectors)
            ? vectors.length > 0
            : vectors != null && vectors.embeddings.length > 0;
          if (present) ids.push(doc.id);
        }
        if (page.results.length < 200) return ids.sort();
      }
    });
  }

  /** Drop a workspace's vectors (of every model but `keepModel`) by nulling them in its documents. */
  async clearVectors(workspaceId: string, options: { keepModel?: string } = {}): Promise<void> {
    await this.guard('clear vectors', async () => {
      const names = Object.keys((await this.index().getEmbedders()) ?? {}).filter(
        (name) => options.keepModel === undefined || name !== meiliEmbedderName(options.keepModel),
      );
      if (names.length === 0) return;
      const cleared = Object.fromEntries(names.map((name) => [name, null]));
      for (let offset = 0; ; offset += 1000) {
        const page = await this.index().getDocuments({
          filter: `workspace_id = ${quote(workspaceId)}`,
          fields: ['id'],
          limit: 1000,
          offset,
        });
        if (page.results.length) {
          await this.settled(
            this.index()
              .updateDocuments(page.results.map((d) => ({ id: d.id, _vectors: cleared })))
              .waitTask({ timeout: this.timeoutMs }),
          );
        }
        if (page.results.length < 1000) return;
      }
    });
  }

  async clear(workspaceId: string): Promise<void> {
    await this.guard('clear', () =>
      this.settled(
        this.index()
          .deleteDocuments({ filter: `workspace_id = ${quote(workspaceId)}` })
          .waitTask({ timeout: this.timeoutMs }),
      ),
    );
  }

  async indexedRevisionIds(workspaceId: string): Promise<string[]> {
    return this.guard('list', async () => {
      const ids: string[] = [];
      for (let offset = 0; ; offset += 1000) {
        const page = await this.index().getDocuments({
          filter: `workspace_id = ${quote(workspaceId)}`,
          fields: ['id'],
          limit: 1000,
          offset,
        });
        ids.push(...page.results.map((d) => d.id));
        if (page.results.length < 1000) return ids.sort();
      }
    });
  }
}
