export { type ArmName, type BatchCounts, CursorRunner, type IndexingArm } from './cursor-runner';
export {
  BUILTIN_DIMENSIONS,
  BUILTIN_MODEL,
  BUILTIN_WORKER_FILE,
  BuiltinEmbedder,
  type BuiltinEmbedderOptions,
  type BuiltinQueue,
} from './embedders/builtin-embedder';
export { type Embedder, type EmbedderModel, EmbedderUnavailableError, type EmbedOptions } from './embedders/embedder';
export { NoEmbedder } from './embedders/none-embedder';
export { EmbedderProbeError, OpenAiEmbedder, type OpenAiEmbedderOptions } from './embedders/openai-embedder';
export {
  type CrossScores,
  DEFAULT_FUSION,
  FUSION_WEIGHTS,
  type FusedCandidate,
  type FusionMethod,
  fuseRankings,
  type RankedCandidate,
  type Rankings,
  RRF_K,
} from './fusion';
export { type BatchReport, Indexer, type IndexerOptions, LEXICAL_BATCH_SIZE } from './indexer';
export { type IndexArm, type IndexLagSummary, IndexLagWatch, indexArms, indexLagMetrics, readIndexLag } from './lag';
export { ensureSearchKey, GATEWAY_SEARCH_ACTIONS, SEARCH_KEY_UID, type SearchKey } from './meilisearch-keys';
export { MEILI_INDEX_UID, MeilisearchProvider } from './meilisearch-provider';
export { builtinEmbedderMetrics, indexerMetrics } from './metrics';
export { NoSearchProvider } from './none-provider';
export { PostgresSearchProvider } from './postgres-provider';
export { PostgresVectorStore, type VectorStoreKind, type VectorStoreOptions } from './postgres-vectors';
export {
  type CursorFence,
  type DocumentBatch,
  type SearchDocument,
  type SearchHit,
  type SearchProvider,
  type SearchQuery,
  SearchUnavailableError,
  type SemanticQuery,
  semanticCursorName,
  type VectorBatch,
  type VectorDocument,
  type VectorMetadata,
} from './provider';
export { type SemanticBatchReport, SemanticIndexer, type SemanticIndexerOptions } from './semantic-indexer';
