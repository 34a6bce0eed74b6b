import type { Change, Revision } from './api';

/** Readings of `memories.history` and the change feed that the console draws (no DOM, no drawing). */

/** How a revision's record interval ended, read off the history itself. */
export type Ending = { kind: 'open' } | { kind: 'superseded'; by: Revision } | { kind: 'retracted'; at: number };

/**
 * A later generation recorded at the instant this one's record ended superseded it (a correction or
 * an attestation: the history does not say which); a record that ended otherwise was retracted.
 */
export function endingOf(revision: Revision, revisions: Revision[]): Ending {
  if (revision.recorded_until === null) return { kind: 'open' };
  const by = revisions.find((r) => r.generation > revision.generation && r.recorded_at === revision.recorded_until);
  return by ? { kind: 'superseded', by } : { kind: 'retracted', at: revision.recorded_until };
}

export function endingText(ending: Ending): string {
  switch (ending.kind) {
    case 'open':
      return 'still recorded';
    case 'superseded':
      return `superseded by generation ${ending.by.generation}`;
    case 'retracted':
      return 'retracted';
  }
}

/** A purged memory as the change feed shows it: the purge's commit, its receipt, each revision's record interval. */
export interface PurgedMemory {
  commit: Change;
  receiptId: string;
  bands: { revisionId: string; from: number; to: number }[];
}

/**
 * From the commits that named one memory (in sequence order): the purge (the commit that wrote a
 * receipt) and a band per revision, from the commit that wrote it to the next commit that ended
 * it (a correction, an attestation, a retraction) or else the purge. Null when it was not purged.
 */
export function purgeBands(changes: Change[]): PurgedMemory | null {
  const purge = changes.find((change) => change.subjects.some((s) => s.type === 'receipt'));
  const receipt = purge?.subjects.find((s) => s.type === 'receipt');
  if (!purge || !receipt) return null;
  const bands: PurgedMemory['bands'] = [];
  let open: PurgedMemory['bands'][number] | null = null;
  for (const change of changes) {
    if (change.sequence > purge.sequence) break;
    if (open) {
      open.to = change.recorded_at;
      open = null;
    }
    const revision = change.subjects.find((s) => s.type === 'revision');
    // A retraction names the revision it ends; only the other writes name a revision they wrote.
    if (revision && change.operation !== 'memories.forget') {
      open = { revisionId: revision.id, from: change.recorded_at, to: purge.recorded_at };
      bands.push(open);
    }
  }
  return { commit: purge, receiptId: receipt.id, bands };
}
