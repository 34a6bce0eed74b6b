import { fieldPath, invalidInput, quoteName } from './error-detail';

/**
 * The one strict decoder of request JSON, shared by `/v1`, `/graphql`, `/mcp` and `svc mcp`'s
 * stdio messages (decisions §7):
 * `application/json` (charset utf-8 or none), exact UTF-8 (never a U+FFFD), no duplicate key
 * at any depth, no unpaired surrogate (raw or `\uD800`), no number that overflows to
 * ±Infinity, and nesting at most `MAX_JSON_DEPTH` deep. Every refusal is `invalid_input` with a
 * detail naming the place, e.g. `body: duplicate key "kind" at body.items[0]`.
 *
 * Nothing here recurses: V8's `JSON.parse` is iterative, and the checks are one linear pass
 * over the already valid text with an explicit stack.
 */

/**
 * Objects and arrays nested deeper than this are refused. The deepest legitimate input (an
 * MCP `tools/call` carrying a grants list: message, params, arguments, grants, grant, target)
 * nests 6 levels; GraphQL bodies with variables about the same.
 */
export const MAX_JSON_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Every refusal: `invalid_input` with a bounded, header-safe detail. */
const refuse = invalidInput;

/** `application/json`, with no parameter but `charset=utf-8` (any case, quoted or not). */
export function isJsonContentType(header: string | null | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';').map((s) => s.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => p === '' || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

/** Exact UTF-8 to text; a byte order mark is kept (and so refused by JSON). */
export function decodeUtf8(bytes: Uint8Array, field = 'body'): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw refuse(`${field}: not UTF-8`);
  }
}

/** A request body: the content type, then the bytes, then the JSON, all strictly. */
export function decodeJsonBody(contentType: string | null | undefined, bytes: Uint8Array, field = 'body'): unknown {
  if (!isJsonContentType(contentType)) throw refuse(`${field}: content type must be application/json`);
  return decodeJsonBytes(bytes, field);
}

/** JSON bytes without a content type (a line of a stdio transport): the bytes, then the JSON. */
export function decodeJsonBytes(bytes: Uint8Array, field: string): unknown {
  return parseJsonText(decodeUtf8(bytes, field), field, true);
}

/** JSON text (e.g. a decoded query parameter) under the same rules as a body. */
export function parseStrictJson(text: string, field = 'body'): unknown {
  return parseJsonText(text, field, false);
}

function parseJsonText(text: string, field: string, fromUtf8: boolean): unknown {
  // Text decoded from UTF-8 cannot hold a lone surrogate; other text is checked here.
  if (!fromUtf8 && !text.isWellFormed()) throw refuse(`${field}: unpaired surrogate`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse(`${field}: not JSON`);
  }
  checkJson(text, field);
  return value;
}

/** Objects with more keys than this check duplicates with a set instead of a scan. */
const SMALL_OBJECT = 16;

/** Characters that may continue a JSON number token. */
function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46 || c === 69 || c === 101;
}

/*
 * The scanner's stacks, reused by every call (nothing can interleave: the scan is synchronous
 * and calls no user code). Open containers, outermost first: whether each is an object, and
 * where it is now (an object's current key, an array's current index). The keys of every open
 * object share one stack (an object's start at `keysFrom[level]`); a large object also gets a
 * set, so that checking stays linear.
 */
const isObject: boolean[] = new Array(MAX_JSON_DEPTH).fill(false);
const keyAt: string[] = new Array(MAX_JSON_DEPTH).fill('');
const indexAt: number[] = new Array(MAX_JSON_DEPTH).fill(0);
const keysFrom: number[] = new Array(MAX_JSON_DEPTH).fill(0);
const keySets: (Set<string> | null)[] = new Array(MAX_JSON_DEPTH).fill(null);
const keyStack: string[] = [];

/** Where the value is that the container at `level - 1` holds now, e.g. `body.items[0]`. */
function pathTo(field: string, level: number): string {
  const keys: (string | number)[] = [];
  for (let k = 0; k < level; k += 1) keys.push(isObject[k] ? (keyAt[k] as string) : (indexAt[k] as number));
  return fieldPath(field, keys);
}

/** Record `key` in the object at `level`; whether it was there already. */
function isDuplicate(key: string, level: number): boolean {
  const set = keySets[level];
  if (set) {
    if (set.has(key)) return true;
    set.add(key);
    return false;
  }
  const from = keysFrom[level] as number;
  for (let k = from; k < keyStack.length; k += 1) if (keyStack[k] === key) return true;
  keyStack.push(key);
  if (keyStack.length - from > SMALL_OBJECT) keySets[level] = new Set(keyStack.slice(from));
  return false;
}

/**
 * One pass over text already known to be valid JSON: nesting depth, duplicate keys, escaped
 * lone surrogates and overflowing numbers. A key is decoded only when it holds a backslash.
 */
function checkJson(text: string, field: string): void {
  try {
    scan(text, field);
  } finally {
    // A refusal leaves objects open; and no key (a slice of the body) outlives the request.
    keyStack.length = 0;
    keySets.fill(null);
    keyAt.fill('');
  }
}

function scan(text: string, field: string): void {
  const length = text.length;
  let top = -1;
  let expectKey = false;
  let nextBackslash = text.indexOf('\\');
  if (nextBackslash < 0) nextBackslash = length;

  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === 123 /* { */ || c === 91 /* [ */) {
      if (top + 1 >= MAX_JSON_DEPTH) {
        throw refuse(`${field}: nesting deeper than ${MAX_JSON_DEPTH} at ${pathTo(field, top + 1)}`);
      }
      top += 1;
      expectKey = c === 123;
      isObject[top] = expectKey;
      keyAt[top] = '';
      indexAt[top] = 0;
      if (expectKey) {
        keysFrom[top] = keyStack.length;
      }
      i += 1;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      if (c === 125) {
        keyStack.length = keysFrom[top] as number;
        keySets[top] = null;
      }
      top -= 1;
      expectKey = false;
      i += 1;
    } else if (c === 44 /* , */) {
      if (isObject[top]) expectKey = true;
      else indexAt[top] = (indexAt[top] as number) + 1;
      i += 1;
    } else if (c === 34 /* " */) {
      // Find the closing quote, stepping over escapes; `nextBackslash` keeps this linear.
      let j = i + 1;
      let escaped = false;
      let surrogate = false;
      const isKey = expectKey && top >= 0;
      let close = text.indexOf('"', j);
      while (nextBackslash < close) {
        escaped = true;
        // `\uD800` to `\uDFFF`: a surrogate, which must pair up.
        if (text.charCodeAt(nextBackslash + 1) === 117 && (text.charCodeAt(nextBackslash + 2) | 32) === 100) {
          const third = text.charCodeAt(nextBackslash + 3) | 32;
          if ((third >= 56 && third <= 57) || (third >= 97 && third <= 102)) surrogate = true;
        }
        j = nextBackslash + 2;
        nextBackslash = text.indexOf('\\', j);
        if (nextBackslash < 0) nextBackslash = length;
        if (close < j) close = text.indexOf('"', j);
      }
      // Decoded only when it matters: a key with escapes, or a string with a surrogate escape.
      let decoded: string | null = null;
      if (surrogate || (escaped && isKey)) {
        decoded = JSON.parse(text.slice(i, close + 1)) as string;
        if (surrogate && !decoded.isWellFormed()) {
          throw refuse(`${field}: unpaired surrogate at ${isKey ? pathTo(field, top) : pathTo(field, top + 1)}`);
        }
      }
      if (isKey) {
        const key = decoded ?? text.slice(i + 1, close);
        if (isDuplicate(key, top)) throw refuse(`${field}: duplicate key ${quoteName(key)} at ${pathTo(field, top)}`);
        keyAt[top] = key;
        expectKey = false;
      }
      i = close + 1;
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      let j = i + 1;
      let exponent = false;
      while (j < length) {
        const d = text.charCodeAt(j);
        if (!isNumberChar(d)) break;
        if (d === 69 || d === 101) exponent = true;
        j += 1;
      }
      // Only an exponent or some 300 digits can overflow a double.
      if ((exponent || j - i > 300) && !Number.isFinite(Number(text.slice(i, j)))) {
        throw refuse(`${field}: number out of range at ${pathTo(field, top + 1)}`);
      }
      i = j;
    } else {
      i += 1;
    }
  }
}
