/**
 * JSON with object keys sorted at every depth (by UTF-16 code units, as RFC 8785 orders them):
 * equal values give equal text. Numbers are written as JavaScript writes a double (the shortest
 * text that reads back to the same double), strings as `JSON.stringify` escapes them; otherwise
 * the text is what `JSON.stringify` writes (`toJSON` honoured, `undefined` members left out).
 * The ledger chain's digests and the idempotency fingerprints are SHA-256 of this text
 * (docs/ledger-proofs.md).
 */
export function canonicalJson(value: unknown): string {
  return write(value) as string;
}

/**
 * Written by hand rather than with a `JSON.stringify` replacer: every write and commit calls it,
 * and the replacer's intermediate objects cost a few times more. Strings that need no escaping
 * and keys already seen skip `JSON.stringify`.
 */
function write(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return quoted(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    case 'bigint':
      return JSON.stringify(value); // throws, as JSON.stringify does
    default:
      return undefined; // undefined, functions and symbols, as JSON.stringify leaves them out
  }
  if (value === null) return 'null';
  const withJson = value as { toJSON?: () => unknown };
  if (typeof withJson.toJSON === 'function') return write(withJson.toJSON());
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i += 1) text += `${i === 0 ? '' : ','}${write(value[i]) ?? 'null'}`;
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  let text = '{';
  let first = true;
  for (const key of sortedKeys(object)) {
    const member = write(object[key]);
    if (member === undefined) continue;
    text += `${first ? '' : ','}${memberPrefix(key)}${member}`;
    first = false;
  }
  return `${text}}`;
}

/**
 * The keys in UTF-16 code unit order, as `sort()` orders strings. An object built with its keys
 * in that order already (the chain's digest records) skips the sort, a third of the work.
 */
function sortedKeys(object: object): string[] {
  const keys = Object.keys(object);
  for (let i = 1; i < keys.length; i += 1) {
    if ((keys[i - 1] as string) > (keys[i] as string)) return keys.sort();
  }
  return keys;
}

/** What JSON.stringify escapes: quote, backslash, control characters and (lone) surrogates. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON.stringify escapes these control characters
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function quoted(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/**
 * `"key":` for the short keys seen so far: the ledger's and the catalog's field names, which
 * every digest and fingerprint repeats (it saves about a third of `canonicalJson`'s time on a
 * commit's digest input and a create's fingerprint). Keys also come from requests (a memory's
 * metadata), so the cache is bounded in bytes as well as in entries: a long key is never kept,
 * and once full, keys not yet seen are quoted each time.
 */
const prefixes = new Map<string, string>();
const MAX_PREFIXES = 2048;
const MAX_CACHED_KEY_LENGTH = 64;

/** Entries in the prefix cache (a test checks its bound). */
export function cachedKeyCount(): number {
  return prefixes.size;
}

function memberPrefix(key: string): string {
  let prefix = prefixes.get(key);
  if (prefix === undefined) {
    prefix = `${quoted(key)}:`;
    if (key.length <= MAX_CACHED_KEY_LENGTH && prefixes.size < MAX_PREFIXES) prefixes.set(key, prefix);
  }
  return prefix;
}
