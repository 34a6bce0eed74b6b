/**
 * JSON with object keys sorted at every depth (by UTF-16 code units, as RFC 8785 orders them):
 * equal values give equal text. Numbers are written as JavaScript writes a double (the shortest
 * text that reads back to the same double), strings as `JSON.stringify` escapes them. The ledger
 * chain's digests are SHA-256 of this text (docs/ledger-proofs.md).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
