/** One search document per memory revision (never purged content: purges delete documents). */
export interface SearchDocument {
  workspaceId: string;
  revisionId: string;
  memoryId: string;
  namespaceId: string;
  kind: 'claim' | 'episode' | 'procedure';
  text: string;
  validFrom: number;
  validTo: number | null;
  recordedAt: number;
  recordedUntil: number | null;
}

export interface SearchQuery {
  workspaceId: string;
  text: string;
  namespaceIds: readonly string[];
  kinds?: readonly string[] | undefined;
  /** Only revisions current at knownAt and valid at asOf. */
  asOf: number;
  knownAt: number;
  limit: number;
  offset: number;
}

/** A semantic search: the query's vector, compared only with vectors of the same model. */
export interface SemanticQuery extends Omit<SearchQuery, 'text'> {
  vector: Float32Array;
  /** `Embedder.model` of the query vector; vectors of any other model are never compared with it. */
  model: string;
}

/** Name of the semantic arm's cursor in `index_state`: one per provider and model, so a new model re-embeds from 0. */
export function semanticCursorName(provider: SearchProvider['name'], model: string): string {
  return `${provider}+semantic:${model}`;
}

export interface SearchHit {
  revisionId: string;
  memoryId: string;
  score: number;
}

/** The search provider is unreachable or failed: recall answers `degraded`, the indexer retries. */
export class SearchUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SearchUnavailableError';
  }
}

/**
 * A search index fed only by the indexer. `apply` resolves only once the provider has durably
 * taken the batch, so the indexer may then advance `indexed_sequence`. Applying a batch twice
 * is harmless (documents are keyed by revision id).
 */
export interface SearchProvider {
  readonly name: 'postgres' | 'meilisearch' | 'none';
  /** Create the index and apply its settings (idempotent). */
  prepare(): Promise<void>;
  apply(workspaceId: string, batch: { upserts: readonly SearchDocument[]; deletes: readonly string[] }): Promise<void>;
  /** The lexical arm: best first, ties broken by revision id. */
  search(query: SearchQuery): Promise<SearchHit[]>;
  /** The semantic arm: best (highest cosine similarity) first, ties broken by revision id. */
  searchSemantic(query: SemanticQuery): Promise<SearchHit[]>;
  /** Remove every document of a workspace (rebuild). */
  clear(workspaceId: string): Promise<void>;
  /** Revision ids indexed for a workspace (tests and `svc index status`). */
  indexedRevisionIds(workspaceId: string): Promise<string[]>;
}

/** Terms of a query: lowercase words of letters and digits. */
export function queryTerms(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 32);
}
