export { MemoryToolError, type MemoryToolsOptions } from '@tms/agent-memory';
export { type RecallContext, type RecallContextOptions, recallContext } from './context';
export { memoryTools } from './tools';
