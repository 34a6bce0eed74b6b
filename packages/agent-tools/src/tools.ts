import { ERROR_CODES, idSchema, OPERATIONS, type Operation, workspaceIdSchema } from '@tms/catalog';
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
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io }) as JsonSchema;
  return rest;
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
      properties[name] = property;
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
          ? 'Workspace to act in (the X-Service-Workspace header of /v1). Defaults to the connection workspace.'
          : 'Workspace to report as selected (the X-Service-Workspace header of /v1). Defaults to the connection workspace.',
    };
  }
  if (operation.idempotent) {
    properties[IDEMPOTENCY_KEY_ARG] = {
      ...jsonSchema(idSchema, 'input'),
      description:
        'Idempotency-Key: a fresh id per intended write; retrying with the same key and arguments replays the original result.',
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
        anyOf: [jsonSchema(operation.output as z.ZodType, 'output'), jsonSchema(errorEnvelopeSchema, 'output')],
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

let cache: { tools: AgentTool[]; byName: Map<string, AgentTool> } | null = null;

/** One tool per catalog operation, in catalog order (built once). */
export function agentTools(): { tools: AgentTool[]; byName: Map<string, AgentTool> } {
  if (!cache) {
    const tools = OPERATIONS.map((operation) => buildTool(operation));
    cache = { tools, byName: new Map(tools.map((tool) => [tool.definition.name, tool])) };
  }
  return cache;
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
