export { Indexer, type IndexerOptions } from './indexer';
export { indexerMetrics } from './metrics';
export { MeilisearchProvider } from './meilisearch-provider';
export { NoSearchProvider } from './none-provider';
export { PostgresSearchProvider } from './postgres-provider';
export {
  queryTerms,
  type SearchDocument,
  type SearchHit,
  type SearchProvider,
  type SearchQuery,
  SearchUnavailableError,
} from './provider';
