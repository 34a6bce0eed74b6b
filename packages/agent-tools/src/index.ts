export {
  MalformedMemoryUri,
  MEMORY_IN_WORKSPACE_URI_TEMPLATE,
  MEMORY_URI_TEMPLATE,
  type MemoryRequest,
  memoryRequest,
  memoryUri,
} from './memory-uri';
export {
  type AgentConnection,
  type AgentLogger,
  type AgentServerOptions,
  CATALOG_VERSION,
  createAgentServer,
  freshRequestId,
  RESOURCE_NOT_FOUND,
} from './server';
export {
  type AgentTool,
  agentTools,
  errorEnvelopeSchema,
  IDEMPOTENCY_KEY_ARG,
  inToolSet,
  splitArguments,
  TOOL_SETS,
  type ToolDefinition,
  type ToolRequest,
  type ToolSet,
  WORKSPACE_ARG,
} from './tools';
export { StrictStdioTransport, serveHttpRequest, serveStdio } from './transports';
