import { DomainError, quoteName, type RawInput } from '@tms/domain';

export const MEMORY_SCHEME = 'memory://';
/** RFC 6570 template of a memory resource; both clocks are optional. */
export const MEMORY_URI_TEMPLATE = 'memory://{id}{?as_of,known_at}';

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

export function memoryUri(id: string): string {
  return `${MEMORY_SCHEME}${encodeURIComponent(id)}`;
}

/**
 * Map `memory://{id}?as_of=..&known_at=..` to the request of memories.get: the id is the path
 * parameter, the query parameters are typed by the tool's input schema (numbers and booleans as
 * in JSON) and otherwise left as text for the catalog schema to judge.
 */
export function memoryRequest(uri: string, queryTypes: Record<string, unknown>): RawInput | null {
  if (!uri.startsWith(MEMORY_SCHEME)) return null;
  const rest = uri.slice(MEMORY_SCHEME.length);
  const q = rest.indexOf('?');
  let id: string;
  try {
    id = decodeURIComponent(q < 0 ? rest : rest.slice(0, q));
  } catch {
    throw new DomainError('invalid_input', 'uri: malformed percent-encoding or not UTF-8');
  }
  const query: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(q < 0 ? '' : rest.slice(q + 1))) {
    if (Object.hasOwn(query, name))
      throw new DomainError('invalid_input', `uri: repeated query parameter ${quoteName(name)}`);
    const type = (queryTypes[name] as { type?: unknown } | undefined)?.type;
    if ((type === 'number' || type === 'integer') && JSON_NUMBER.test(value)) query[name] = Number(value);
    else if (type === 'boolean' && (value === 'true' || value === 'false')) query[name] = value === 'true';
    else query[name] = value;
  }
  return { params: { id }, query, body: undefined };
}
