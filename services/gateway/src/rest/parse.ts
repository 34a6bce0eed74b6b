import type { Operation } from '@tms/catalog';
import { DomainError } from '@tms/domain';
import type { z } from 'zod';

const JSON_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

/** The scalar type a query field expects, read off its catalog schema. */
function scalarKind(schema: z.ZodType): 'number' | 'boolean' | 'string' {
  let current = schema as unknown as { def: { type: string; innerType?: z.ZodType } };
  while (current.def.innerType && ['optional', 'default', 'nullable', 'prefault'].includes(current.def.type)) {
    current = current.def.innerType as unknown as typeof current;
  }
  const type = current.def.type;
  if (type === 'number' || type === 'int') return 'number';
  if (type === 'boolean') return 'boolean';
  return 'string';
}

function decodeComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new DomainError('invalid_input', 'malformed percent-encoding in the query');
  }
}

/**
 * Turn the raw query string into typed values per the catalog's query schema. Repeated or
 * undecodable parameters are `invalid_input`; unknown ones are left for the strict schema to
 * refuse; numbers must be JSON numbers, booleans `true` or `false`.
 */
export function parseQuery(operation: Operation, search: string): Record<string, unknown> {
  const shape = operation.input.query.shape as Record<string, z.ZodType>;
  const out: Record<string, unknown> = {};
  if (search === '' || search === '?') return out;
  for (const pair of search.replace(/^\?/, '').split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq));
    const value = decodeComponent(eq < 0 ? '' : pair.slice(eq + 1));
    if (Object.hasOwn(out, name)) throw new DomainError('invalid_input', `repeated query parameter ${name}`);
    const field = shape[name];
    if (!field) {
      out[name] = value;
      continue;
    }
    switch (scalarKind(field)) {
      case 'number':
        if (!JSON_NUMBER.test(value)) throw new DomainError('invalid_input', `${name} is not a number`);
        out[name] = Number(value);
        break;
      case 'boolean':
        if (value !== 'true' && value !== 'false') throw new DomainError('invalid_input', `${name} is not a boolean`);
        out[name] = value === 'true';
        break;
      default:
        out[name] = value;
    }
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';').map((s) => s.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => p === '' || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

/** Whether every string in a parsed JSON value (keys included) is well-formed UTF-16. */
function wellFormed(value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed();
  if (Array.isArray(value)) return value.every(wellFormed);
  if (value && typeof value === 'object') {
    return Object.entries(value).every(([k, v]) => k.isWellFormed() && wellFormed(v));
  }
  return true;
}

/** Decode a request body: JSON only, exact UTF-8, no unpaired surrogates. */
export function parseBody(operation: Operation, contentType: string | undefined, bytes: Buffer): unknown {
  if (!operation.input.body) {
    if (bytes.length > 0) throw new DomainError('invalid_input', 'this operation takes no body');
    return undefined;
  }
  if (!isJsonContentType(contentType)) throw new DomainError('invalid_input', 'content type must be application/json');
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new DomainError('invalid_input', 'body is not UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DomainError('invalid_input', 'body is not JSON');
  }
  if (!wellFormed(value)) throw new DomainError('invalid_input', 'unpaired surrogate');
  return value;
}
