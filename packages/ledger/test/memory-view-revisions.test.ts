import { createTestDatabase, type TestDatabase, testMigrateOptions } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger';
import type { RevisionRow } from '../src/rows';
import type { StandingQuery } from '../src/storage/read-view';
import { revisionRow } from './rows';

const standing: StandingQuery = { actorId: 'act_reader', credential: null, operator: false };

/**
 * Record times of one memory's generations, newest last. Generation 4's record ends at 45 with
 * no successor until generation 5 (a retraction); generation 2's record never ended. So from 45
 * to 60 the newest recorded revision (4) is not the current one (2): the rule is held on data
 * the domain does not write, as well as on what it does.
 */
const HISTORY: { generation: number; recordedAt: number; recordedUntil: number | null }[] = [
  { generation: 1, recordedAt: 10, recordedUntil: 20 },
  { generation: 2, recordedAt: 20, recordedUntil: null },
  { generation: 3, recordedAt: 30, recordedUntil: 40 },
  { generation: 4, recordedAt: 40, recordedUntil: 45 },
  { generation: 5, recordedAt: 60, recordedUntil: 70 },
  { generation: 6, recordedAt: 70, recordedUntil: null },
];

const revisionsOf = (memoryId: string): RevisionRow[] =>
  HISTORY.map((h) =>
    revisionRow('ws_h', `${memoryId}_g${h.generation}`, {
      memoryId,
      generation: h.generation,
      recordedAt: h.recordedAt,
      recordedUntil: h.recordedUntil,
    }),
  );

/**
 * What the view must load, computed from every revision by the domain's rules: the newest
 * generation recorded by `knownAt` and the newest current then (both, when absent, as now).
 */
function deciding(all: RevisionRow[], knownAt: number | undefined): string[] {
  const newestFirst = [...all].sort((a, b) => b.generation - a.generation);
  const k = knownAt ?? Number.POSITIVE_INFINITY;
  const recorded = newestFirst.find((r) => r.recordedAt <= k);
  const current = newestFirst.find((r) => r.recordedAt <= k && (r.recordedUntil === null || r.recordedUntil > k));
  return [...new Set([recorded, current].flatMap((r) => (r ? [r.id] : [])))];
}

const PROBES = [undefined, 5, 10, 15, 20, 39.5, 40, 44, 45, 50, 60, 65, 70, 1e9];

it('probes times with no revision, one deciding revision and two', () => {
  const sizes = new Set(PROBES.map((knownAt) => deciding(revisionsOf('mem_long'), knownAt).length));
  expect([...sizes].sort()).toEqual([0, 1, 2]);
});

describe.each([
  ['embedded', false],
  ['postgres', true],
])('a memory view loads only the revisions that decide it (%s)', (_name, onPostgres) => {
  let database: TestDatabase | null = null;
  let ledger: Ledger;
  const statements: string[] = [];
  const all = revisionsOf('mem_long');

  beforeAll(async () => {
    database = onPostgres ? await createTestDatabase('tms_view_revisions') : null;
    ledger = await Ledger.open({ databaseUrl: database?.url, onQuery: (text) => statements.push(text) });
    await ledger.migrate(testMigrateOptions());
    await ledger.transaction(async (stores) => {
      const [first, ...later] = all;
      const memory = {
        workspaceId: 'ws_h',
        namespaceId: 'ns_1',
        kind: 'claim' as const,
        createdAt: 10,
        purgedAt: null,
        key: null,
        keySha256: null,
        retractedAt: null,
      };
      await stores.memories.insert({ ...memory, id: 'mem_long', generation: 6 }, first as RevisionRow);
      for (const revision of later) await stores.memories.insertRevision(revision, revision.generation);
      // A neighbour whose revision must never show up in mem_long's view.
      await stores.memories.insert(
        { ...memory, id: 'mem_other', generation: 1 },
        revisionRow('ws_h', 'mem_other_g1', { memoryId: 'mem_other', recordedAt: 80 }),
      );
    });
  });

  afterAll(async () => {
    await ledger?.close();
    await database?.drop();
  });

  it.each(PROBES.map((knownAt) => [knownAt]))(
    'known at %s: the newest recorded and the newest current',
    async (knownAt) => {
      const before = statements.length;
      const view = await ledger.stores.memories.readView('ws_h', 'mem_long', standing, { knownAt });
      expect(statements.length - before).toBe(1);
      const expected = deciding(all, knownAt);
      expect(view.revisions.map((r) => r.id)).toEqual(expected);
      // Rows decode exactly as stored.
      for (const row of view.revisions) expect(row).toEqual(all.find((r) => r.id === row.id));
    },
  );

  it('loads no revision for history, and none for an absent memory', async () => {
    const history = await ledger.stores.memories.readView('ws_h', 'mem_long', standing, { revisions: false });
    expect(history.memory?.id).toBe('mem_long');
    expect(history.revisions).toEqual([]);
    const absent = await ledger.stores.memories.readView('ws_h', 'mem_absent', standing, { knownAt: 50 });
    expect(absent.memory).toBeNull();
    expect(absent.revisions).toEqual([]);
  });
});
