import { ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { MEMORY_TOOLS, MemoryToolError, type MemoryToolsOptions, memoryOperations } from '@tms/agent-memory';
import type { z } from 'zod';

type ToolConfig = { toolCall?: { id?: string } } | undefined;

/**
 * A tool function answering JSON text. Called by a model (with a tool call), a service error comes
 * back as a ToolMessage with status "error" and the service's code and detail, for the model to
 * read; called directly, it throws the MemoryToolError (its `cause` the TmsError).
 */
function answering<I>(name: string, run: (input: I) => Promise<unknown>) {
  return async (input: I, config?: ToolConfig): Promise<string | ToolMessage> => {
    try {
      return JSON.stringify(await run(input));
    } catch (error) {
      const toolCallId = config?.toolCall?.id;
      if (!(error instanceof MemoryToolError) || !toolCallId) throw error;
      return new ToolMessage({ status: 'error', content: error.message, tool_call_id: toolCallId, name });
    }
  };
}

/** A LangChain tool named `name`, with the memory tool's description and input schema. */
function memoryTool<Schema extends z.ZodObject>(
  name: string,
  { description, inputSchema }: { description: string; inputSchema: Schema },
  run: (input: z.infer<Schema>) => Promise<unknown>,
) {
  return tool(answering(name, run), { name, description, schema: inputSchema });
}

/** LangChain tools `remember`, `recall`, `correct` and `forget` over one namespace (and those below it, for recall). */
export function memoryTools(options: MemoryToolsOptions) {
  const run = memoryOperations(options);
  return {
    remember: memoryTool('remember', MEMORY_TOOLS.remember, run.remember),
    recall: memoryTool('recall', MEMORY_TOOLS.recall, run.recall),
    correct: memoryTool('correct', MEMORY_TOOLS.correct, run.correct),
    forget: memoryTool('forget', MEMORY_TOOLS.forget, run.forget),
  };
}
