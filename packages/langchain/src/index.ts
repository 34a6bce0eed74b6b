export { MemoryToolError, type MemoryToolsOptions } from '@tms/agent-memory';
export { type TmsDocumentMetadata, TmsRetriever, type TmsRetrieverInput } from './retriever';
export { type TmsItem, type TmsSearchItem, TmsStore, type TmsStoreOptions } from './store';
export { memoryTools } from './tools';
