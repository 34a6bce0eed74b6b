/**
 * How a LangGraph item's JSON value is kept in a memory's text, and how `filter` reads it.
 *
 * The text is the value's canonical JSON: object keys sorted by code point, no whitespace. It is
 * lossless (the value reads back equal), the same value always gives the same text, and both
 * recall arms search it (the lexical arm by its words, the semantic arm by its meaning). A memory
 * of the namespace whose text is not a JSON object (written by other means) reads as `{ text }`.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function canonical(value: unknown, at: string): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`TmsStore: ${at} is ${value}, which JSON cannot hold`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((item, i) => canonical(item, `${at}[${i}]`)).join(',')}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key], `${at}.${key}`)}`).join(',')}}`;
  }
  const what = typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value;
  throw new TypeError(`TmsStore: ${at} is a ${what}; an item's value holds JSON only`);
}

/** The text a value is stored as; a TypeError, before anything is written, for what JSON cannot hold. */
export function valueText(value: unknown): string {
  if (!isPlainObject(value)) throw new TypeError('TmsStore: an item value must be a plain JSON object');
  return canonical(value, 'value');
}

/** The value a memory's text holds. */
export function textValue(text: string): Record<string, JsonValue> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isPlainObject(parsed)) return parsed as Record<string, JsonValue>;
  } catch {
    // Not JSON: a memory written by other means.
  }
  return { text };
}

const OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin']);

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && Object.keys(value).length > 0 && Object.keys(value).every((k) => OPERATORS.has(k));
}

function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  try {
    return valueTextOf(a) === valueTextOf(b);
  } catch {
    return false;
  }
}

function valueTextOf(value: unknown): string {
  return canonical(value, 'filter');
}

/** Numbers compare as numbers, strings by code point; anything else does not order. */
function order(a: unknown, b: unknown): number | null {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return null;
}

function matchesCondition(actual: unknown, expected: unknown): boolean {
  if (!isOperatorObject(expected)) return jsonEqual(actual, expected);
  return Object.entries(expected).every(([operator, operand]) => {
    const ordered = order(actual, operand);
    switch (operator) {
      case '$eq':
        return jsonEqual(actual, operand);
      case '$ne':
        return !jsonEqual(actual, operand);
      case '$gt':
        return ordered !== null && ordered > 0;
      case '$gte':
        return ordered !== null && ordered >= 0;
      case '$lt':
        return ordered !== null && ordered < 0;
      case '$lte':
        return ordered !== null && ordered <= 0;
      case '$in':
        return Array.isArray(operand) && operand.some((candidate) => jsonEqual(actual, candidate));
      default:
        return !Array.isArray(operand) || !operand.some((candidate) => jsonEqual(actual, candidate));
    }
  });
}

/**
 * Whether a value passes a LangGraph `filter`: each top-level field equals the given JSON exactly
 * (objects and arrays compared as a whole), or meets its operators (`$eq`, `$ne`, `$gt`, `$gte`,
 * `$lt`, `$lte`, `$in`, `$nin`; the ordering ones for two numbers or two strings).
 */
export function matchesFilter(value: Record<string, unknown>, filter: Record<string, unknown> | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([field, expected]) =>
    matchesCondition(Object.hasOwn(value, field) ? value[field] : undefined, expected),
  );
}
