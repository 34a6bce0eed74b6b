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
  /**
   * Score only these revisions (recall asks an arm for its scores of candidates the other arm
   * found): each of them that passes the filters, and for the lexical arm holds a query term, is
   * returned with the score a full search gives it; the others are left out.
   */
  revisionIds?: readonly string[] | undefined;
}

/** A semantic search: the query's vector, compared only with vectors of the same model. */
export interface SemanticQuery extends Omit<SearchQuery, 'text'> {
  vector: Float32Array;
  /** `Embedder.model` of the query vector; vectors of any other model are never compared with it. */
  model: string;
}

/**
 * Name of the semantic arm's cursor in `index_state`: one per provider and model, so a new model
 * re-embeds from 0. A model not known yet (null: an openai embedder that has not reached its
 * endpoint) names a cursor nothing ever advances: it has embedded nothing, and reads so.
 */
export function semanticCursorName(provider: SearchProvider['name'], model: string | null): string {
  return `${provider}+semantic:${model ?? ''}`;
}

/** A revision's search metadata without its text: what the semantic arm keeps beside each vector. */
export type VectorMetadata = Omit<SearchDocument, 'text'>;

/** A revision's vector, made by `Embedder.embed(..., 'document')` from its committed text. */
export interface VectorDocument extends VectorMetadata {
  vector: Float32Array;
}

/**
 * One batch of the semantic arm for one model: new vectors, metadata changes of revisions that
 * already have a vector (a correction closing `recorded_until`, never re-embedded) and deletions
 * (purged revisions: no vector of purged text is kept).
 */
export interface VectorBatch {
  model: string;
  dimensions: number;
  upserts: readonly VectorDocument[];
  updates: readonly VectorMetadata[];
  deletes: readonly string[];
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
  /** Store a semantic batch durably (idempotent, keyed by workspace, model and revision id). */
  applyVectors(workspaceId: string, batch: VectorBatch): Promise<void>;
  /** Of `revisionIds`, those that have a vector of `model` (the indexer embeds only the others). */
  vectorRevisionIds(workspaceId: string, model: string, revisionIds?: readonly string[]): Promise<string[]>;
  /** Remove a workspace's vectors: all of them, or those of every model but `keepModel` (rebuild). */
  clearVectors(workspaceId: string, options?: { keepModel?: string }): Promise<void>;
  /** Remove every document of a workspace (rebuild). */
  clear(workspaceId: string): Promise<void>;
  /** Revision ids indexed for a workspace (tests and `svc index status`). */
  indexedRevisionIds(workspaceId: string): Promise<string[]>;
}

/** Terms of a query: lowercase words of letters and digits. */
export function queryTerms(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 32);
}
