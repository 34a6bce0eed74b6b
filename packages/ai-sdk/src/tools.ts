import { MEMORY_TOOLS, type MemoryToolsOptions, memoryOperations } from '@tms/agent-memory';
import { tool } from 'ai';

/**
 * AI SDK tools `remember`, `recall`, `correct` and `forget` over one namespace (and those below
 * it, for recall). A call the service refuses throws a MemoryToolError whose message is the
 * service's code and detail: `generateText` hands it to the model as the tool's error.
 */
export function memoryTools(options: MemoryToolsOptions) {
  const run = memoryOperations(options);
  const { remember, recall, correct, forget } = MEMORY_TOOLS;
  return {
    remember: tool({ ...remember, execute: run.remember }),
    recall: tool({ ...recall, execute: run.recall }),
    correct: tool({ ...correct, execute: run.correct }),
    forget: tool({ ...forget, execute: run.forget }),
  };
}
