export { isServiceError, MemoryToolError, type ServiceErrorShape, toToolError } from './errors';
export { formatRecall, isoTime, type RecallItem, type RecallStatus, recallResult, STATUS_NOTES } from './recall';
export {
  type CorrectInput,
  type ForgetInput,
  MEMORY_TOOLS,
  type MemoryOperations,
  type MemoryToolsOptions,
  memoryOperations,
  type RecallInput,
  type RememberInput,
} from './tools';
