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

/** Written by hand rather than with a `JSON.stringify` replacer: every write and commit calls it, and the replacer's intermediate objects cost a few times more. */
function write(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
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
  if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`;
  const object = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(object).sort()) {
    const text = write(object[key]);
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`);
  }
  return `{${members.join(',')}}`;
}
