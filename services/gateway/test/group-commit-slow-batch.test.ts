import { Deadline, GroupCommitter, type GroupedWrite, type SlowBatchReport } from '@tms/domain';
import { Ledger } from '@tms/ledger';
import { createTestDatabase, gate, type TestDatabase } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A group commit batch is bounded by its writes' deadlines; one that runs on is stuck, and the
// committer reports it with the stage it is in. A stuck batch cannot be made on demand with the
// real write handlers (that is what the report is for), so this write stands in for one: its
// reads never finish until the test lets them. Everything else (the ledger, its Postgres
// transaction, the committer) is real.

const WORKSPACE = 'ws_slow_batch_test';

describe('group commit reports a batch running past its deadlines', () => {
  let database: TestDatabase;
  let ledger: Ledger;
  beforeAll(async () => {
    database = await createTestDatabase();
    ledger = await Ledger.open({ databaseUrl: database.url });
  });
  afterAll(async () => {
    await ledger?.close();
    await database?.drop();
  });

  it('names the stage, again while the batch runs, and stops once it ends', async () => {
    const committer = GroupCommitter.of(ledger);
    committer.slowBatchGraceMs = 100;
    const reads = gate();
    const stuck: GroupedWrite = {
      deadline: new Deadline(50),
      idempotencyKeys: [],
      claims: [],
      async prepare() {
        await reads.opened;
        return { kind: 'answered', result: { json: '{"stuck":false}', replayed: false } };
      },
      alone: () => Promise.reject(new Error('the batch did not fail')),
    };
    const reports: SlowBatchReport[] = [];
    const answer = committer.submit(WORKSPACE, stuck, { slowBatch: (report) => reports.push(report) });

    // Reported at about 150 ms (its 50 ms deadline and the 100 ms grace), then every 150 ms.
    while (reports.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reports.map(({ workspaceId, writes, stage }) => ({ workspaceId, writes, stage }))).toEqual([
      { workspaceId: WORKSPACE, writes: 1, stage: 'reads and rules' },
      { workspaceId: WORKSPACE, writes: 1, stage: 'reads and rules' },
    ]);
    const [first, second] = reports as [SlowBatchReport, SlowBatchReport];
    expect(first.elapsedMs).toBeGreaterThanOrEqual(100);
    expect(second.elapsedMs).toBeGreaterThan(first.elapsedMs);

    reads.open();
    expect(await answer).toEqual({ json: '{"stuck":false}', replayed: false });
    const reported = reports.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(reports.length).toBe(reported);
  });
});
