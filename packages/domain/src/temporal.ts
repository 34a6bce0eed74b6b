import type { RevisionRow } from '@tms/ledger';

/** A known_at later than any record: "everything recorded so far" (finite, for SQL parameters). */
export const END_OF_TIME = Number.MAX_VALUE;

/** The server's clock, in the ledger's unit (seconds since the epoch, fractional). */
export function nowSeconds(): number {
  return Date.now() / 1000;
}

/**
 * The bitemporal rules of decisions §2 in one place. A revision is a rectangle: valid time
 * [valid_from, valid_to) by record time [recorded_at, recorded_until), null ends open.
 */

/** Whether the revision had been recorded and not yet superseded at `knownAt`. */
export function isCurrentAt(revision: RevisionRow, knownAt: number): boolean {
  return revision.recordedAt <= knownAt && (revision.recordedUntil === null || revision.recordedUntil > knownAt);
}

/** The one current revision at `knownAt`: the latest recorded at or before it and not superseded by then. */
export function currentRevision(newestFirst: readonly RevisionRow[], knownAt: number): RevisionRow | null {
  return newestFirst.find((r) => isCurrentAt(r, knownAt)) ?? null;
}

/** Whether the fact held at `asOf`: valid_from <= as_of < valid_to. */
export function isValidAt(revision: RevisionRow, asOf: number): boolean {
  return revision.validFrom <= asOf && (revision.validTo === null || asOf < revision.validTo);
}
