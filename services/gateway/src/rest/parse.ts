import type { Operation } from '@tms/catalog';
import { decodeJsonBody, invalidInput, quoteName } from '@tms/domain';
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
    throw invalidInput('query: malformed percent-encoding or not UTF-8');
  }
}

/**
 * Turn the raw query string into typed values per the catalog's query schema. Repeated or
 * undecodable parameters are `invalid_input`; unknown ones (a name is looked up among the
 * schema's own fields only: `toString` or `__proto__` is as unknown as `foo`) are left for the
 * strict schema to refuse; numbers must be JSON numbers, booleans `true` or `false`.
 */
export function parseQuery(operation: Operation, search: string): Record<string, unknown> {
  const shape = operation.input.query.shape as Record<string, z.ZodType>;
  // No prototype: a client's name never reaches an inherited member or `__proto__`'s setter.
  const out: Record<string, unknown> = Object.create(null);
  if (search === '' || search === '?') return out;
  for (const pair of search.replace(/^\?/, '').split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq));
    const value = decodeComponent(eq < 0 ? '' : pair.slice(eq + 1));
    if (Object.hasOwn(out, name)) throw invalidInput(`query: repeated parameter ${quoteName(name)}`);
    const field = Object.hasOwn(shape, name) ? shape[name] : undefined;
    if (!field) {
      // Left for the operation's strict schema to refuse, after the rate limiter has counted the call.
      out[name] = value;
      continue;
    }
    switch (scalarKind(field)) {
      case 'number':
        if (!JSON_NUMBER.test(value)) throw invalidInput(`query.${name}: expected a number`);
        out[name] = Number(value);
        break;
      case 'boolean':
        if (value !== 'true' && value !== 'false') throw invalidInput(`query.${name}: expected true or false`);
        out[name] = value === 'true';
        break;
      default:
        out[name] = value;
    }
  }
  return out;
}

/** Decode a request body: JSON only, exact UTF-8, no duplicate key or unpaired surrogate, bounded nesting. */
export function parseBody(operation: Operation, contentType: string | undefined, bytes: Buffer): unknown {
  if (!operation.input.body) {
    if (bytes.length > 0) throw invalidInput('body: this operation takes no body');
    return undefined;
  }
  return decodeJsonBody(contentType, bytes);
}
