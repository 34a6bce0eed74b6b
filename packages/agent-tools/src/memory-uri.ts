import { idSchema, workspaceIdSchema } from '@tms/catalog';
import type { RawInput } from '@tms/domain';

export const MEMORY_SCHEME = 'memory://';
/** RFC 6570 template of a memory in a named workspace; both clocks are optional. */
export const MEMORY_IN_WORKSPACE_URI_TEMPLATE = 'memory://{workspace_id}/{id}{?as_of,known_at}';
/** RFC 6570 template of a memory in the connection's workspace; both clocks are optional. */
export const MEMORY_URI_TEMPLATE = 'memory://{id}{?as_of,known_at}';

/** The forms a reader is told about when a memory URI is refused. */
const EXPECTED_FORMS = 'expected memory://{workspace_id}/{id} or memory://{id}, optionally ?as_of=..&known_at=..';

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** A `memory://` URI that is not of either form; the reason is meant for the client. */
export class MalformedMemoryUri extends Error {
  constructor(reason: string) {
    super(`Invalid memory URI: ${reason}; ${EXPECTED_FORMS}`);
    this.name = 'MalformedMemoryUri';
  }
}

/** The URI of a memory: in `workspaceId` when given (valid on any connection), else the short form. */
export function memoryUri(id: string, workspaceId?: string): string {
  const path = encodeURIComponent(id);
  return workspaceId ? `${MEMORY_SCHEME}${encodeURIComponent(workspaceId)}/${path}` : `${MEMORY_SCHEME}${path}`;
}

export interface MemoryRequest {
  /** The workspace the URI names, or null for the connection's workspace. */
  workspaceId: string | null;
  /** The request of memories.get. */
  raw: RawInput;
}

function segment(text: string, what: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    throw new MalformedMemoryUri(`the ${what} is not percent-encoded correctly`);
  }
  if (decoded === '') throw new MalformedMemoryUri(`the ${what} is empty`);
  return decoded;
}

/**
 * Map `memory://{workspace_id}/{id}?as_of=..&known_at=..` (or `memory://{id}?..`, in the
 * connection's workspace) to the request of memories.get: the id is the path parameter, the
 * query parameters are typed by the tool's input schema (numbers and booleans as in JSON) and
 * otherwise left as text for the catalog schema to judge. Null for another scheme; a malformed
 * `memory://` URI throws `MalformedMemoryUri`.
 */
export function memoryRequest(uri: string, queryTypes: Record<string, unknown>): MemoryRequest | null {
  if (!uri.startsWith(MEMORY_SCHEME)) return null;
  const rest = uri.slice(MEMORY_SCHEME.length);
  if (rest.includes('#')) throw new MalformedMemoryUri('a fragment is not allowed');
  const q = rest.indexOf('?');
  const segments = (q < 0 ? rest : rest.slice(0, q)).split('/');
  if (segments.length > 2) throw new MalformedMemoryUri(`${segments.length} path segments`);
  const [first = '', second] = segments;
  let workspaceId: string | null = null;
  let id: string;
  if (second === undefined) {
    id = segment(first, 'memory id');
  } else {
    workspaceId = segment(first, 'workspace id');
    if (!workspaceIdSchema.safeParse(workspaceId).success) {
      throw new MalformedMemoryUri('the workspace id is not a workspace id (ws_...)');
    }
    id = segment(second, 'memory id');
  }
  if (!idSchema.safeParse(id).success) throw new MalformedMemoryUri('the memory id is not an id');
  const query: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(q < 0 ? '' : rest.slice(q + 1))) {
    if (Object.hasOwn(query, name)) throw new MalformedMemoryUri(`repeated query parameter ${JSON.stringify(name)}`);
    const type = (queryTypes[name] as { type?: unknown } | undefined)?.type;
    if ((type === 'number' || type === 'integer') && JSON_NUMBER.test(value)) query[name] = Number(value);
    else if (type === 'boolean' && (value === 'true' || value === 'false')) query[name] = value === 'true';
    else query[name] = value;
  }
  return { workspaceId, raw: { params: { id }, query, body: undefined } };
}
