import { Meilisearch, type Task } from 'meilisearch';
import {
  queryTerms,
  type SearchDocument,
  type SearchHit,
  type SearchProvider,
  type SearchQuery,
  SearchUnavailableError,
} from './provider';
import { STOP_WORD_LIST } from './text-analysis';

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
}

/** The index recall searches and the indexer writes (the gateway's search key is limited to it). */
export const MEILI_INDEX_UID = 'tms_memories';

const quote = (value: string) => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

/**
 * Meilisearch through its official client. Settings are applied at `prepare`; every write
 * waits for its task to succeed, so a resolved `apply` means the documents are searchable.
 * Any transport failure becomes `SearchUnavailableError`.
 */
export class MeilisearchProvider implements SearchProvider {
  readonly name = 'meilisearch' as const;
  private readonly client: Meilisearch;

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

  async apply(workspaceId: string, batch: { upserts: readonly SearchDocument[]; deletes: readonly string[] }) {
    await this.guard('apply', async () => {
      if (batch.deletes.length) {
        await this.settled(
          this.index()
            .deleteDocuments([...batch.deletes])
            .waitTask({ timeout: this.timeoutMs }),
        );
      }
      if (batch.upserts.length) {
        const documents = batch.upserts.map(
          (d): MeiliDocument => ({
            id: d.revisionId,
            workspace_id: workspaceId,
            memory_id: d.memoryId,
            namespace_id: d.namespaceId,
            kind: d.kind,
            text: d.text,
            valid_from: d.validFrom,
            valid_to: d.validTo,
            valid_to_open: d.validTo === null,
            recorded_at: d.recordedAt,
            recorded_until: d.recordedUntil,
            recorded_until_open: d.recordedUntil === null,
          }),
        );
        await this.settled(this.index().addDocuments(documents).waitTask({ timeout: this.timeoutMs }));
      }
    });
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    if (queryTerms(query.text).length === 0 || query.namespaceIds.length === 0) return [];
    const filter = [
      `workspace_id = ${quote(query.workspaceId)}`,
      `namespace_id IN [${query.namespaceIds.map(quote).join(', ')}]`,
      ...(query.kinds?.length ? [`kind IN [${query.kinds.map(quote).join(', ')}]`] : []),
      `recorded_at <= ${query.knownAt}`,
      `(recorded_until_open = true OR recorded_until > ${query.knownAt})`,
      `valid_from <= ${query.asOf}`,
      `(valid_to_open = true OR valid_to > ${query.asOf})`,
    ];
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

  async searchSemantic(): Promise<SearchHit[]> {
    // Replaced by the vector store (issue 28, vectors beside the lexical index).
    throw new SearchUnavailableError('the semantic arm is not built yet');
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
