import { describe, expect, it } from 'vitest';
import type { Change, Revision } from '../src/api';
import { endingOf, purgeBands } from '../src/history';

/** The readings the console draws: how each record interval ended, and a purged memory's bands. */

const revision = (generation: number, recordedAt: number, recordedUntil: number | null): Revision => ({
  id: `rev_${generation}`,
  memory_id: 'mem_1',
  namespace_id: 'ns_1',
  kind: 'claim',
  generation,
  text: `v${generation}`,
  status: 'asserted',
  valid_from: 1_700_000_000,
  valid_to: null,
  recorded_at: recordedAt,
  recorded_until: recordedUntil,
  evidence_ids: [],
  support_revision_ids: [],
  attestation: null,
  invalidation: null,
});

const change = (sequence: number, operation: string, subjects: [string, string][]): Change => ({
  sequence,
  recorded_at: 1_800_000_000 + sequence,
  operation,
  actor_id: 'act_1',
  subjects: subjects.map(([type, id]) => ({ type, id, namespace_id: 'ns_1' })),
});

describe('history readings', () => {
  it('a record that ended when a later generation was recorded was superseded; else retracted', () => {
    const history = [revision(3, 30, 40), revision(2, 20, 30), revision(1, 10, 20)];
    expect(endingOf(history[2] as Revision, history)).toMatchObject({ kind: 'superseded', by: { generation: 2 } });
    expect(endingOf(history[1] as Revision, history)).toMatchObject({ kind: 'superseded', by: { generation: 3 } });
    expect(endingOf(history[0] as Revision, history)).toEqual({ kind: 'retracted', at: 40 });
    expect(endingOf(revision(1, 10, null), [])).toEqual({ kind: 'open' });
  });

  it("bands a purged memory's revisions by the commits that wrote and ended them", () => {
    const changes = [
      change(1, 'memories.create', [
        ['memory', 'mem_1'],
        ['revision', 'rev_a'],
      ]),
      change(4, 'memories.correct', [
        ['memory', 'mem_1'],
        ['revision', 'rev_b'],
      ]),
      change(6, 'memories.forget', [
        ['memory', 'mem_1'],
        ['revision', 'rev_b'],
      ]), // the retraction
      change(9, 'memories.forget', [
        ['memory', 'mem_1'],
        ['receipt', 'rcp_1'],
      ]), // the purge
    ];
    const purged = purgeBands(changes);
    expect(purged?.receiptId).toBe('rcp_1');
    expect(purged?.commit.sequence).toBe(9);
    expect(purged?.bands).toEqual([
      { revisionId: 'rev_a', from: 1_800_000_001, to: 1_800_000_004 },
      { revisionId: 'rev_b', from: 1_800_000_004, to: 1_800_000_006 },
    ]);
    // Purged without a retraction: the last revision's band ends at the purge.
    const direct = purgeBands([changes[0] as Change, changes[3] as Change]);
    expect(direct?.bands).toEqual([{ revisionId: 'rev_a', from: 1_800_000_001, to: 1_800_000_009 }]);
    expect(purgeBands(changes.slice(0, 3))).toBeNull();
  });
});
