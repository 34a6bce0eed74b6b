import { ERROR_CODES, fieldDescription, idSchema, OPERATIONS, type Operation, workspaceIdSchema } from '@tms/catalog';
import { DomainError, type RawInput } from '@tms/domain';
import { z } from 'zod';

/** The tool argument that carries the `Idempotency-Key` header of /v1. */
export const IDEMPOTENCY_KEY_ARG = 'idempotency_key';
/** The tool argument that carries the `X-Service-Workspace` header of /v1. */
export const WORKSPACE_ARG = 'workspace_id';

type JsonSchema = Record<string, unknown>;

/** What an MCP `tools/list` entry needs, generated from one catalog operation. */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, JsonSchema>; required?: string[]; [k: string]: unknown };
  outputSchema: { type: 'object'; [k: string]: unknown };
  annotations: { title: string; readOnlyHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

export interface AgentTool {
  operation: Operation;
  definition: ToolDefinition;
  /** Which flat argument goes to which part of the request. */
  keys: { params: Set<string>; query: Set<string>; body: Set<string> };
  /** Whether the tool offers `workspace_id`. */
  takesWorkspace: boolean;
}

/** The exact `{error}` envelope of /v1, as a tool's failed `structuredContent`. */
export const errorEnvelopeSchema = z.strictObject({
  error: z.strictObject({
    code: z.enum(ERROR_CODES as [string, ...string[]]),
    message: z.string(),
    status: z.int().min(400).max(599),
    retryable: z.boolean(),
    request_id: idSchema,
    retry_after_seconds: z.number().min(0).max(3600).nullable(),
  }),
});

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    // JSON numbers are bounded anyway: a safe-integer maximum says nothing and costs context.
    override: ({ jsonSchema }) => {
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  }) as JsonSchema;
  return rest;
}

/** Keywords that bound a value rather than shape it: an answer's schema leaves them to the input's. */
const BOUNDS = new Set([
  'pattern',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'uniqueItems',
  'description',
  'default',
]);

/** How deep an answer's schema names properties: the answer's own keys. */
const OUTPUT_DEPTH = 1;

/**
 * An answer's schema by its outline: the types, properties and required keys of its first
 * `depth` levels, below which an object is only an object. The server produces the answer, so
 * its bounds and nested shapes tell an agent little; the full schemas are in
 * schema/openapi.json. The outline keeps `tools/list` small enough for an agent's context.
 */
function outline(schema: unknown, depth: number): unknown {
  if (Array.isArray(schema)) return schema.map((item) => outline(item, depth));
  if (schema === null || typeof schema !== 'object') return schema;
  const source = schema as Record<string, unknown>;
  if (depth === 0 && (source.type === 'object' || source.type === 'array')) return { type: source.type };
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (BOUNDS.has(key)) continue;
    if (key === 'properties') {
      // A map of names to schemas, one level further down; a property named like a keyword stays.
      out[key] = Object.fromEntries(
        Object.entries(value as object).map(([name, sub]) => [name, outline(sub, depth - 1)]),
      );
    } else if (key === 'items') {
      out[key] = outline(value, depth - 1);
    } else {
      out[key] = outline(value, depth);
    }
  }
  return out;
}

/**
 * Which tools a connection lists and accepts (MCP_TOOLS): `memory`, the default, is what an
 * agent needs to remember and recall (memories, evidence, recall, the change feed, the
 * readable namespaces to write into, and who it is); `all` is every catalog operation,
 * workspace and access administration included.
 */
export type ToolSet = 'memory' | 'all';
export const TOOL_SETS: readonly ToolSet[] = ['memory', 'all'];

const MEMORY_OPERATIONS = new Set(['recall', 'changes.list', 'me.get', 'namespaces.list']);

export function inToolSet(operation: Operation, set: ToolSet): boolean {
  if (set === 'all') return true;
  return (
    operation.name.startsWith('memories.') ||
    operation.name.startsWith('evidence.') ||
    MEMORY_OPERATIONS.has(operation.name)
  );
}

/**
 * Whether a tool offers `workspace_id`: every operation that works in the selected workspace,
 * and directory operations that report the selection back (me.get answers `workspace_id`).
 */
function offersWorkspace(operation: Operation): boolean {
  if (operation.workspace === 'selected') return true;
  if (operation.workspace !== 'directory') return false;
  const output = operation.output as unknown as { shape?: Record<string, unknown> };
  return output.shape !== undefined && Object.hasOwn(output.shape, WORKSPACE_ARG);
}

function buildTool(operation: Operation): AgentTool {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const keys = { params: new Set<string>(), query: new Set<string>(), body: new Set<string>() };
  const parts = [
    ['params', operation.input.params],
    ['query', operation.input.query],
    ['body', operation.input.body],
  ] as const;
  for (const [part, schema] of parts) {
    if (!schema) continue;
    const json = jsonSchema(schema as z.ZodType, 'input');
    const props = (json.properties ?? {}) as Record<string, JsonSchema>;
    for (const [name, property] of Object.entries(props)) {
      if (Object.hasOwn(properties, name) || name === IDEMPOTENCY_KEY_ARG || name === WORKSPACE_ARG) {
        // One flat argument object cannot carry two fields of one name: refuse to start.
        throw new Error(`${operation.name}: input field ${name} is not unique across path, query, body and headers`);
      }
      // Every field has one (mcp-tool-sets.test.ts holds it); a missing one is left out, not fatal.
      const description = fieldDescription(operation, name);
      properties[name] = description ? { ...property, description } : property;
      keys[part].add(name);
    }
    required.push(...((json.required ?? []) as string[]));
  }

  const takesWorkspace = offersWorkspace(operation);
  if (takesWorkspace) {
    properties[WORKSPACE_ARG] = {
      ...jsonSchema(workspaceIdSchema, 'input'),
      description:
        operation.workspace === 'selected'
          ? "The workspace to act in (X-Service-Workspace of /v1); default: the connection's."
          : "The workspace to report as selected (X-Service-Workspace of /v1); default: the connection's.",
    };
  }
  if (operation.idempotent) {
    properties[IDEMPOTENCY_KEY_ARG] = {
      ...jsonSchema(idSchema, 'input'),
      description:
        'A fresh id per intended write (Idempotency-Key of /v1): a retry with the same key and arguments replays the result.',
    };
    required.push(IDEMPOTENCY_KEY_ARG);
  }

  const inputSchema: ToolDefinition['inputSchema'] = { type: 'object', properties, additionalProperties: false };
  if (required.length > 0) inputSchema.required = required;

  return {
    operation,
    keys,
    takesWorkspace,
    definition: {
      name: operation.tool,
      title: operation.name,
      description: operation.summary,
      inputSchema,
      // A result is the operation's answer or, with isError, the /v1 error envelope.
      outputSchema: {
        type: 'object',
        anyOf: [
          outline(jsonSchema(operation.output as z.ZodType, 'output'), OUTPUT_DEPTH),
          outline(jsonSchema(errorEnvelopeSchema, 'output'), OUTPUT_DEPTH),
        ],
      },
      annotations: {
        title: operation.name,
        readOnlyHint: !operation.mutates,
        // Reads change nothing; writes carry an idempotency key whose retries replay.
        idempotentHint: !operation.mutates || operation.idempotent,
        openWorldHint: false,
      },
    },
  };
}

interface ToolList {
  tools: AgentTool[];
  byName: Map<string, AgentTool>;
}
const cache = new Map<ToolSet, ToolList>();

/**
 * One tool per catalog operation of the set, in catalog order (built once). Without a set, every
 * operation: the set a connection serves is the server's choice (`createAgentServer`, MCP_TOOLS).
 */
export function agentTools(set: ToolSet = 'all'): ToolList {
  let list = cache.get(set);
  if (!list) {
    const tools = OPERATIONS.filter((operation) => inToolSet(operation, set)).map((operation) => buildTool(operation));
    list = { tools, byName: new Map(tools.map((tool) => [tool.definition.name, tool])) };
    cache.set(set, list);
  }
  return list;
}

/** The request a tool call stands for: what /v1 reads from the path, query, body and headers. */
export interface ToolRequest {
  raw: RawInput;
  /** `workspace_id` when given, else undefined (the connection's workspace applies). */
  workspaceId: string | undefined;
  idempotencyKey: string | null;
}

/**
 * Split flat tool arguments back into path, query and body by the catalog shapes' keys. No
 * validation happens here beyond the header-like arguments being strings: the domain validates
 * the parts exactly as it does for /v1. Unknown arguments are left in the body (or in the query
 * of a body-less operation) so that the strict catalog schema refuses them.
 */
export function splitArguments(tool: AgentTool, args: Record<string, unknown>): ToolRequest {
  const params: Record<string, unknown> = {};
  const query: Record<string, unknown> = {};
  const body: Record<string, unknown> = {};
  let workspaceId: string | undefined;
  let idempotencyKey: string | null = null;
  const hasBody = tool.operation.input.body !== null;
  for (const [name, value] of Object.entries(args)) {
    if (tool.takesWorkspace && name === WORKSPACE_ARG) {
      if (typeof value !== 'string')
        throw new DomainError('invalid_input', `arguments.${WORKSPACE_ARG}: expected string`);
      workspaceId = value;
    } else if (tool.operation.idempotent && name === IDEMPOTENCY_KEY_ARG) {
      if (typeof value !== 'string')
        throw new DomainError('invalid_input', `arguments.${IDEMPOTENCY_KEY_ARG}: expected string`);
      idempotencyKey = value;
    } else if (tool.keys.params.has(name)) {
      params[name] = value;
    } else if (tool.keys.query.has(name)) {
      query[name] = value;
    } else if (hasBody) {
      body[name] = value;
    } else {
      query[name] = value;
    }
  }
  return { raw: { params, query, body: hasBody ? body : undefined }, workspaceId, idempotencyKey };
}
