import crypto from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import { type ErrorObject, errorObject, OPERATION_LIMITS, OPERATIONS_BY_NAME, type Operation } from '@tms/catalog';
import {
  type Caller,
  Deadline,
  type Domain,
  DomainError,
  isDatabaseUnavailable,
  publicDetail,
  type RawInput,
} from '@tms/domain';
import { z } from 'zod';
import {
  MalformedMemoryUri,
  MEMORY_IN_WORKSPACE_URI_TEMPLATE,
  MEMORY_URI_TEMPLATE,
  type MemoryRequest,
  memoryRequest,
  memoryUri,
} from './memory-uri';
import { type AgentTool, agentTools, splitArguments, type ToolSet } from './tools';

/** The interface catalog version (interface.md, Versioning). */
export const CATALOG_VERSION = '1.0.0';

/** MCP's code for an unknown resource (JSON-RPC server error range). */
export const RESOURCE_NOT_FOUND = -32002;

/** The subset of a pino logger the adapter uses. */
export interface AgentLogger {
  /** Where an `invalid_input` detail is logged, when the logger has the level. */
  debug?(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** Who is calling and in which workspace: always from the transport, never from tool input. */
export interface AgentConnection {
  /** The caller of one call (HTTP: resolved once per request; stdio: TMS_TOKEN, per call). */
  caller(): Promise<Caller>;
  /** The connection's workspace: the request's X-Service-Workspace, or TMS_WORKSPACE; or null. */
  workspaceId: string | null;
  /** The request id of one call (echoed in error objects). */
  requestId(): string;
}

export interface AgentServerOptions {
  logger?: AgentLogger;
  /** Per-call timeout; a call running longer answers `unavailable`. */
  timeoutMs?: number;
  /**
   * The transport's deadline shared by every call (HTTP: the request's, counted from its
   * arrival); replaces `timeoutMs`. Writes check it before committing, so a timed-out call
   * never executes after `unavailable` was answered.
   */
  deadline?: Deadline;
  /** Which tools are listed and callable (the service's MCP_TOOLS); default `memory`. */
  toolSet?: ToolSet;
  /** Told about every tool call once it is answered (metrics, access logs). */
  onToolCall?: (event: { tool: string; operation: string; code: string; requestId: string }) => void;
}

const INSTRUCTIONS = `Temporal Memory Service: a bitemporal memory ledger organised as workspaces > namespaces > memories,
backed by evidence and verifications. Every tool is one /v1 operation; its arguments are the operation's path, query and
body fields as one object, plus idempotency_key on writes (a fresh id per intended write; a retry with the same key and
arguments replays the result) and, where offered, workspace_id (defaults to the connection's workspace). A failure is a
result with isError and structuredContent {error: {code, message, status, retryable, request_id, retry_after_seconds}};
an invalid_input also names what was wrong in a second text item (e.g. "invalid_input: body.kind: expected one of ..."),
and a conflict over a held memory key names its holder there ("conflict: body.key: held by memory mem_...").
Memories are also readable as resources memory://{workspace_id}/{id}?as_of=..&known_at=.. (Unix seconds), or
memory://{id}?.. in the connection's workspace.`;

export function freshRequestId(): string {
  return `req_${crypto.randomBytes(12).toString('hex')}`;
}

const silent: AgentLogger = { warn() {}, error() {} };

/** The /v1 error object for any failure; unexpected ones are logged and never leak details. */
function errorFor(error: unknown, requestId: string, operation: string, logger: AgentLogger): ErrorObject {
  if (error instanceof DomainError) {
    const detail = publicDetail(error);
    if (detail !== null) logger.debug?.({ request_id: requestId, operation, detail }, error.code);
    return errorObject(error.code, requestId, error.retryAfterSeconds);
  }
  if (isDatabaseUnavailable(error)) {
    logger.warn({ request_id: requestId, operation, err: error }, 'unavailable');
    return errorObject('unavailable', requestId, 1);
  }
  logger.error({ request_id: requestId, operation, err: error }, 'internal error');
  return errorObject('internal', requestId);
}

/** A resources/list position: a namespaces page (its cursor), an index in it, a memories cursor. */
const listPositionSchema = z.strictObject({
  n: z.string().nullable(),
  i: z.int().min(0),
  m: z.string().nullable(),
});
type ListPosition = z.infer<typeof listPositionSchema>;

function encodePosition(position: ListPosition): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

function decodePosition(cursor: string | undefined): ListPosition {
  if (cursor === undefined) return { n: null, i: 0, m: null };
  try {
    return listPositionSchema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor');
  }
}

const RESOURCES_PER_PAGE = 100;
const NAMESPACES_PER_LIST_CALL = 100;

const namespacesPageSchema = z.looseObject({
  namespaces: z.array(z.looseObject({ id: z.string(), display_path: z.array(z.string()) })),
  next_cursor: z.string().nullable(),
});
const memoriesPageSchema = z.looseObject({
  items: z.array(
    z.looseObject({
      memory: z.looseObject({ id: z.string(), kind: z.string() }),
      revision: z.looseObject({ text: z.string() }),
    }),
  ),
  next_cursor: z.string().nullable(),
});

function titleOf(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/**
 * Register a request handler. The SDK parses a request with the handler's schema and answers
 * a refusal as -32603 (Internal error), but a malformed request (`arguments` not an object, no
 * `params`) is the client's: the SDK sees a schema that checks only the method, and the
 * request is parsed here, a refusal answering -32602 (Invalid params).
 */
function handle<S extends z.ZodObject<{ method: z.ZodLiteral<string> }>>(
  server: Server,
  schema: S,
  handler: (request: z.output<S>) => unknown,
): void {
  server.setRequestHandler(z.looseObject({ method: schema.shape.method }), (request) => {
    const parsed = schema.safeParse(request);
    if (!parsed.success)
      throw new McpError(ErrorCode.InvalidParams, `Invalid params: ${z.prettifyError(parsed.error)}`);
    return handler(parsed.data) as never;
  });
}

/**
 * An MCP server over the domain, for one connection: the low-level `Server` because every
 * tool is generated from the catalog with its own JSON Schemas, and validation, errors and
 * idempotency stay with the domain (the SDK's high-level `McpServer` would validate input itself).
 */
export function createAgentServer(domain: Domain, connection: AgentConnection, options: AgentServerOptions = {}) {
  const logger = options.logger ?? silent;
  const timeoutMs = options.timeoutMs ?? OPERATION_LIMITS.timeoutMs;
  const { tools, byName } = agentTools(options.toolSet ?? 'memory');

  const server = new Server(
    { name: 'temporal-memory-service', title: 'Temporal Memory Service', version: CATALOG_VERSION },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false, subscribe: false } },
      instructions: INSTRUCTIONS,
    },
  );

  /** Execute one operation as the connection's caller; the domain validates and authorizes. */
  async function execute(
    operation: Operation,
    raw: RawInput,
    workspaceId: string | undefined,
    idempotencyKey: string | null,
    requestId: string,
  ): Promise<string> {
    const caller = await connection.caller();
    // A path-addressed workspace (workspaces.members.put) names itself; the connection's
    // workspace is a default for selection, not an assertion about the path.
    const selected = workspaceId ?? (operation.workspace === 'path' ? null : connection.workspaceId);
    // The domain honours the deadline (reads are abandoned, writes roll back before their
    // commit); awaiting it rather than racing it keeps a 503 from hiding a committed write.
    const deadline = options.deadline ?? new Deadline(timeoutMs);
    try {
      const result = await domain.execute(operation, raw, {
        caller,
        requestId,
        selectedWorkspaceId: selected,
        idempotencyKey,
        deadline,
      });
      return result.json;
    } finally {
      if (!options.deadline) deadline.clear();
    }
  }

  async function callTool(tool: AgentTool, args: Record<string, unknown>): Promise<CallToolResult> {
    const requestId = connection.requestId();
    let code = 'ok';
    try {
      const request = splitArguments(tool, args);
      const json = await execute(tool.operation, request.raw, request.workspaceId, request.idempotencyKey, requestId);
      return { content: [{ type: 'text', text: json }], structuredContent: JSON.parse(json) };
    } catch (error) {
      const envelope = { error: errorFor(error, requestId, tool.operation.name, logger) };
      code = envelope.error.code;
      // The first text is the error object, as structured content; an `invalid_input` also
      // names what was wrong in a second text (decisions §7), e.g. `invalid_input: body.kind: ...`,
      // a held key's `conflict` its holder (§12): `conflict: body.key: held by memory mem_...`,
      // and a `budget_exceeded` the limit it passed.
      const detail = publicDetail(error);
      return {
        isError: true,
        content: [
          { type: 'text', text: JSON.stringify(envelope) },
          ...(detail === null ? [] : [{ type: 'text' as const, text: `${envelope.error.code}: ${detail}` }]),
        ],
        structuredContent: envelope,
      };
    } finally {
      options.onToolCall?.({ tool: tool.definition.name, operation: tool.operation.name, code, requestId });
    }
  }

  /** Run an operation for resources; failures become JSON-RPC errors carrying the /v1 error object. */
  async function read(operation: Operation, raw: RawInput, workspaceId?: string): Promise<string> {
    const requestId = connection.requestId();
    try {
      return await execute(operation, raw, workspaceId, null, requestId);
    } catch (error) {
      const object = errorFor(error, requestId, operation.name, logger);
      const code =
        object.code === 'not_found'
          ? RESOURCE_NOT_FOUND
          : object.code === 'invalid_input'
            ? ErrorCode.InvalidParams
            : ErrorCode.InternalError;
      throw new McpError(code, publicDetail(error) ?? object.message, { error: object });
    }
  }

  handle(server, ListToolsRequestSchema, () => ({ tools: tools.map((tool) => tool.definition) }));

  handle(server, CallToolRequestSchema, (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return callTool(tool, request.params.arguments ?? {});
  });

  handle(server, ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: MEMORY_IN_WORKSPACE_URI_TEMPLATE,
        name: 'memory',
        title: 'Memory',
        description:
          'A memory of the named workspace as it held at as_of and as the service knew it at known_at (Unix seconds; both default to now): the memories.get view.',
        mimeType: 'application/json',
      },
      {
        uriTemplate: MEMORY_URI_TEMPLATE,
        name: 'memory-in-connection-workspace',
        title: 'Memory (connection workspace)',
        description:
          "Like memory://{workspace_id}/{id}, in the connection's workspace (X-Service-Workspace or TMS_WORKSPACE).",
        mimeType: 'application/json',
      },
    ],
  }));

  handle(server, ReadResourceRequestSchema, async (request) => {
    const get = OPERATIONS_BY_NAME.get('memories.get');
    const tool = get && byName.get(get.tool);
    if (!get || !tool) throw new McpError(ErrorCode.InternalError, 'memories.get is not in the catalog');
    let memory: MemoryRequest | null;
    try {
      memory = memoryRequest(request.params.uri, tool.definition.inputSchema.properties);
    } catch (error) {
      if (!(error instanceof MalformedMemoryUri)) throw error;
      // The reason is the client's to fix; the data carries the /v1 error object as elsewhere.
      const object = errorObject('invalid_input', connection.requestId());
      throw new McpError(ErrorCode.InvalidParams, error.message, { error: object });
    }
    if (!memory) throw new McpError(RESOURCE_NOT_FOUND, 'Resource not found', { uri: request.params.uri });
    const json = await read(get, memory.raw, memory.workspaceId ?? undefined);
    return { contents: [{ uri: request.params.uri, mimeType: 'application/json', text: json }] };
  });

  handle(server, ListResourcesRequestSchema, async (request) => {
    // Listing walks the readable namespaces of the connection's workspace and lists each one's
    // memories through the catalog operation `memories.list`. While the catalog has no such
    // operation (it is added separately from the agent tools), there is nothing to list.
    const list = OPERATIONS_BY_NAME.get('memories.list');
    const namespacesList = OPERATIONS_BY_NAME.get('namespaces.list');
    const workspaceId = connection.workspaceId;
    if (!list || !namespacesList || workspaceId === null) return { resources: [] };

    let position = decodePosition(request.params?.cursor);
    const resources: Resource[] = [];
    for (let visited = 0; visited < NAMESPACES_PER_LIST_CALL; ) {
      const page = namespacesPageSchema.parse(
        JSON.parse(
          await read(namespacesList, {
            params: {},
            query: position.n === null ? { limit: 100 } : { limit: 100, cursor: position.n },
            body: undefined,
          }),
        ),
      );
      for (; position.i < page.namespaces.length; position = { ...position, i: position.i + 1, m: null }) {
        const namespace = page.namespaces[position.i];
        if (!namespace) break;
        visited += 1;
        do {
          const memories = memoriesPageSchema.parse(
            JSON.parse(
              await read(list, {
                params: {},
                query: {
                  namespace_id: namespace.id,
                  limit: 100,
                  ...(position.m === null ? {} : { cursor: position.m }),
                },
                body: undefined,
              }),
            ),
          );
          for (const item of memories.items) {
            resources.push({
              // The workspace-naming form: a listed URI reads the same memory on any connection.
              uri: memoryUri(item.memory.id, workspaceId),
              name: item.memory.id,
              title: titleOf(item.revision.text),
              description: `${item.memory.kind} in ${namespace.display_path.join(' / ')}`,
              mimeType: 'application/json',
            });
          }
          position = { ...position, m: memories.next_cursor };
          if (resources.length >= RESOURCES_PER_PAGE) {
            const next: ListPosition =
              position.m === null ? { n: position.n, i: position.i + 1, m: null } : { ...position };
            return { resources, nextCursor: encodePosition(next) };
          }
        } while (position.m !== null);
        if (visited >= NAMESPACES_PER_LIST_CALL) {
          return { resources, nextCursor: encodePosition({ n: position.n, i: position.i + 1, m: null }) };
        }
      }
      if (page.next_cursor === null) return { resources };
      position = { n: page.next_cursor, i: 0, m: null };
    }
    return { resources, nextCursor: encodePosition(position) };
  });

  return server;
}
