import crypto from 'node:crypto';
import { createTestDatabase, type TestDatabase, TestIssuer } from '@tms/testkit';
import {
  delay,
  type GatewayProcess,
  type ServiceProcess,
  startGatewayProcess,
  startIndexerProcess,
} from '@tms/testkit/processes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Acknowledged,
  createTargets,
  FAULT_GATEWAY_ENV,
  indexEqualsLedger,
  prepareLedger,
  send,
  Workload,
} from '../../../gateway/test/faults/workload';

// kill -9 of the indexer, again and again, mid-batch, while a gateway process takes writes
// (creations, corrections and purges). After the kills and a final catch-up by a fresh indexer,
// the Postgres search index must equal the ledger: every unpurged revision indexed, nothing
// else. FAULT_ROUNDS makes a longer run.
const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 4);
const INDEXER_ENV = { INDEXER_BATCH_SIZE: '5' };

/** Send a write under one key until it is acknowledged (the gateway lives; 503 is retried). */
async function writeUntilAcknowledged(url: string, path: string, ack: Acknowledged, body: unknown) {
  const key = `fault-${crypto.randomBytes(8).toString('hex')}`;
  const { token, workspaceId } = ack.request;
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const answer = await send(url, 'POST', path, { token, workspaceId, key, body });
    if (answer.status === 200) return;
    if (answer.status !== 503) throw new Error(`${path}: ${answer.text}`);
    await delay(100);
  }
  throw new Error(`${path}: never acknowledged`);
}

describe('indexer killed with SIGKILL under writes (Postgres search)', () => {
  let issuer: TestIssuer;
  let database: TestDatabase;
  let gateway: GatewayProcess | undefined;
  let indexer: ServiceProcess | undefined;

  beforeAll(async () => {
    issuer = await TestIssuer.start();
    database = await createTestDatabase('tms_fault_indexer');
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), indexer?.stop()]);
    await issuer?.close();
    await database?.drop();
  });

  it(`the index equals the ledger after ${ROUNDS} kills`, async () => {
    const subject = await prepareLedger(database.url, issuer);
    gateway = await startGatewayProcess('indexer-kill', {
      DATABASE_URL: database.url,
      ...issuer.env(),
      ...FAULT_GATEWAY_ENV,
    });
    const url = gateway.url;
    const token = await issuer.sessionToken(subject, { expiresIn: 3600 });
    const targets = await createTargets(url, token, 2);
    const workload = new Workload({
      url: () => url,
      targets,
      writersPerTarget: 2,
      readers: 0,
      networkErrorsExpected: false,
    }).start();

    let killedMidBatch = 0;
    let corrected = 0;
    for (let round = 1; round <= ROUNDS; round += 1) {
      indexer = await startIndexerProcess(`kill-${round}`, { DATABASE_URL: database.url, ...INDEXER_ENV });
      const batches = () => (indexer as ServiceProcess).logs.filter((entry) => entry.msg === 'indexed').length;
      // Kill after it acknowledged a batch or two: it is then in the middle of the next one.
      const deadline = Date.now() + 20_000;
      const wanted = 1 + (round % 2);
      while (batches() < wanted && Date.now() < deadline) await delay(10);
      if (batches() >= wanted) killedMidBatch += 1;
      // Corrections and purges, so that batches carry updates and deletions too.
      while (workload.acknowledged.length < 2 * round + 2 && Date.now() < deadline) await delay(10);
      const [toCorrect, toPurge] = workload.acknowledged.slice(2 * round, 2 * round + 2);
      if (toCorrect && toPurge) {
        await writeUntilAcknowledged(url, `/v1/memories/${toCorrect.memoryId}/corrections`, toCorrect, {
          expected_generation: 1,
          text: `corrected ${toCorrect.key}`,
        });
        await writeUntilAcknowledged(url, `/v1/memories/${toPurge.memoryId}/forget`, toPurge, {
          mode: 'purge',
          expected_generation: 1,
        });
        corrected += 1;
      }
      indexer.signal('SIGKILL');
      const exit = await indexer.exited;
      expect(exit, `round ${round}: it died of our kill, not before`).toEqual({ code: null, signal: 'SIGKILL' });
    }
    await workload.stop();
    expect(workload.anomalies).toEqual([]);
    expect(workload.unresolved).toEqual([]);
    expect(killedMidBatch).toBe(ROUNDS);
    expect(corrected).toBe(ROUNDS);

    // A last indexer catches up; the index must then be the ledger's.
    indexer = await startIndexerProcess('final', { DATABASE_URL: database.url, ...INDEXER_ENV });
    expect(
      await indexEqualsLedger(
        database.url,
        targets.map((target) => target.workspaceId),
      ),
    ).toEqual([]);
    expect(indexer.exit).toBeNull();
    expect(gateway.exit).toBeNull();
    console.info(
      `indexer SIGKILL: ${ROUNDS} kills, ${workload.acknowledged.length} acknowledged writes, ${corrected} corrections and purges`,
    );
  });
});
