import type { Database } from '@tms/ledger';

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
  /**
   * The lexical arm's cursor as the caller read it before searching. An index whose cursor now
   * stands below it was emptied meanwhile and is being rebuilt (a crash, a layout upgrade): the
   * search rejects (`SearchUnavailableError`) rather than answer from it as if it held those commits.
   */
  indexedSequence?: number | undefined;
}

/** A lexical search's scope, filters and text: everything but the page. */
export type LexicalScope = Omit<SearchQuery, 'limit' | 'offset' | 'revisionIds'>;

/** One page of a scoped lexical search (`revisionIds`: score only those). */
export type LexicalPage = Pick<SearchQuery, 'limit' | 'offset' | 'revisionIds'>;

/**
 * The lexical arm over one scope and query text, for one hybrid recall, which asks it for pages
 * and then for its scores of the semantic arm's candidates: a provider may score the whole scope
 * once and answer every page from that. Each `search` answers as `search` would with that page.
 */
export interface ScopedLexicalSearch {
  search(page: LexicalPage): Promise<SearchHit[]>;
}

/** A scoped lexical search that only asks `search` (providers that keep nothing between pages). */
export function searchLexicalEachTime(provider: Pick<SearchProvider, 'search'>, scope: LexicalScope) {
  return {
    search: (page) => provider.search({ ...scope, ...page }),
  } satisfies ScopedLexicalSearch;
}

/** A semantic search: the query's vector, compared only with vectors of the same model. */
export interface SemanticQuery extends Omit<SearchQuery, 'text'> {
  vector: Float32Array;
  /** `Embedder.model` of the query vector; vectors of any other model are never compared with it. */
  model: string;
}

/** A semantic search's scope and filters: what it reads before the query's vector is known. */
export type SemanticScope = Omit<SemanticQuery, 'vector' | 'limit' | 'offset' | 'revisionIds'>;

/** One page of a scoped semantic search (`revisionIds`: score only those, as in `SearchQuery`). */
export type SemanticPage = Pick<SemanticQuery, 'limit' | 'offset' | 'revisionIds'>;

/**
 * The semantic arm over one scope, for one query. Recall opens it while the query is still being
 * embedded, so that a provider can read meanwhile what does not depend on the vector; each
 * `search` answers as `searchSemantic` would with the scope's filters and that page.
 */
export interface ScopedSemanticSearch {
  search(vector: Float32Array, page: SemanticPage): Promise<SearchHit[]>;
}

/** A scoped search that only asks `searchSemantic` (providers with nothing to read ahead). */
export function searchSemanticEachTime(provider: Pick<SearchProvider, 'searchSemantic'>, scope: SemanticScope) {
  return {
    search: (vector, page) => provider.searchSemantic({ ...scope, ...page, vector }),
  } satisfies ScopedSemanticSearch;
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
 * The indexer's side of a batch's store (./cursor-runner.ts): one short transaction on the
 * ledger that holds the workspace's claim for the arm and first checks that the arm's cursor
 * still stands where the batch was planned. A batch that another indexer stored meanwhile
 * writes nothing, so a batch planned from older rows can never overwrite a newer one.
 */
export interface CursorFence {
  /**
   * Run `write` in that transaction; false (nothing written) when the cursor moved.
   * - `advance`: `write` goes into this very transaction (`db`: the Postgres provider, whose
   *   tables live in the ledger's database), so a final batch's cursor advances in the same commit.
   * - `confirm`: `write` only hands the batch to an index outside the database (Meilisearch
   *   enqueues its tasks, which it runs in order); once the index has taken it, `confirm()`.
   */
  store(write: (db: Database) => Promise<void>, mode: 'advance' | 'confirm'): Promise<boolean>;
  /** After a `confirm` store: the index has taken the batch; advance the cursor (checked again). */
  confirm(): Promise<boolean>;
}

/** What a lexical batch writes: documents to upsert and revision ids to delete. */
export interface DocumentBatch {
  upserts: readonly SearchDocument[];
  deletes: readonly string[];
}

/**
 * A search index fed only by the indexer. Given a fence, `apply` and `applyVectors` store
 * through it (and resolve false when it refused the batch), so the cursor advances only once the
 * provider has durably taken the batch; without one they store on their own. Applying a batch
 * twice is harmless (documents are keyed by revision id).
 */
export interface SearchProvider {
  readonly name: 'postgres' | 'meilisearch' | 'none';
  /** Create the index and apply its settings (idempotent). */
  prepare(): Promise<void>;
  /**
   * Rejects (`SearchUnavailableError`) while the lexical index has lost what it held beside its
   * cursors, which `prepare` then mends (the Postgres provider's unlogged tables after a crash).
   */
  verifyIntact?(): Promise<void>;
  /** The lexical arm's batch; its analysis runs before the fence's transaction, never inside it. */
  apply(workspaceId: string, batch: DocumentBatch, fence?: CursorFence): Promise<boolean>;
  /** The lexical arm: best first, ties broken by revision id. */
  search(query: SearchQuery): Promise<SearchHit[]>;
  /** The lexical arm over one scope and text, asked several pages of (hybrid recall). */
  lexicalScope(scope: LexicalScope): ScopedLexicalSearch;
  /** The semantic arm: best (highest cosine similarity) first, ties broken by revision id. */
  searchSemantic(query: SemanticQuery): Promise<SearchHit[]>;
  /** The semantic arm over one scope, opened before the query's vector is known (recall). */
  semanticScope(scope: SemanticScope): ScopedSemanticSearch;
  /** Store a semantic batch durably (idempotent, keyed by workspace, model and revision id). */
  applyVectors(workspaceId: string, batch: VectorBatch, fence?: CursorFence): Promise<boolean>;
  /** Of `revisionIds`, those that have a vector of `model` (the indexer embeds only the others). */
  vectorRevisionIds(workspaceId: string, model: string, revisionIds?: readonly string[]): Promise<string[]>;
  /** Remove a workspace's vectors: all of them, or those of every model but `keepModel` (rebuild). */
  clearVectors(workspaceId: string, options?: { keepModel?: string }): Promise<void>;
  /** Remove every document of a workspace (rebuild). */
  clear(workspaceId: string): Promise<void>;
  /** Revision ids indexed for a workspace (tests and `svc index status`). */
  indexedRevisionIds(workspaceId: string): Promise<string[]>;
  /**
   * One step of filling a vector store that replaces the current one (the Postgres provider:
   * exact -> pgvector), run by the indexer in the background; rows moved (0: nothing to fill).
   */
  fillVectorStore?(): Promise<number>;
}
