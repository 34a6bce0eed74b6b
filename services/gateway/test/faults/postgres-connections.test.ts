import { createTestDatabase, type TestDatabase, TestIssuer } from '@tms/testkit';
import { connectSql, terminateBackends } from '@tms/testkit/postgres-server';
import {
  delay,
  type GatewayProcess,
  type ServiceProcess,
  startGatewayProcess,
  startIndexerProcess,
} from '@tms/testkit/processes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTargets,
  FAULT_GATEWAY_ENV,
  indexEqualsLedger,
  prepareLedger,
  send,
  seriousOutput,
  verifyLedger,
  Workload,
} from './workload';

// Every Postgres connection of a running gateway and indexer is terminated
// (`pg_terminate_backend`), round after round, under mixed reads and writes. Unpatched,
// postgres.js 3.4.9 threw from a timer when a transaction's connection closed under it and the
// process died (porsager/postgres#1208; patches/postgres@3.4.9.patch). Both processes must live
// through every round, answer only 200 or the retryable 503 `unavailable`, and serve again
// without a restart; nothing acknowledged may be lost. FAULT_ROUNDS makes a longer run (15 by
// default, sized for `.ci/run`'s 30 minutes).
const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 15);
const RECOVERY_TIMEOUT_MS = 20_000;

describe('Postgres connections of the gateway and the indexer terminated under load', () => {
  let issuer: TestIssuer;
  let database: TestDatabase;
  let gateway: GatewayProcess | undefined;
  let indexer: ServiceProcess | undefined;

  beforeAll(async () => {
    issuer = await TestIssuer.start();
    database = await createTestDatabase('tms_fault_cut');
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), indexer?.stop()]);
    await issuer?.close();
    await database?.drop();
  });

  it(`both processes live through ${ROUNDS} rounds and lose nothing`, async () => {
    const subject = await prepareLedger(database.url, issuer);
    const env = { DATABASE_URL: database.url, ...issuer.env(), ...FAULT_GATEWAY_ENV };
    gateway = await startGatewayProcess('cut', env);
    indexer = await startIndexerProcess('cut', { DATABASE_URL: database.url, INDEXER_BATCH_SIZE: '5' });
    const running = { gateway, indexer };
    const token = await issuer.sessionToken(subject, { expiresIn: 3600 });
    const targets = await createTargets(gateway.url, token, 2);
    const url = gateway.url;
    const workload = new Workload({
      url: () => url,
      targets,
      writersPerTarget: 3,
      readers: 3,
      networkErrorsExpected: false,
    }).start();
    const probe = targets[0] as (typeof targets)[number];

    let terminated = 0;
    for (let round = 1; round <= ROUNDS; round += 1) {
      await delay(150 + Math.random() * 250);
      terminated += await terminateBackends(database.name);
      // The crash came 150-560 ms after the cut: give it the time to happen.
      await delay(600);
      for (const [name, service] of Object.entries(running)) {
        expect(service.exit, `${name} died in round ${round}:\n${service.output.slice(-30).join('\n')}`).toBeNull();
      }
      // Recovery without a restart: a read through the gateway succeeds again.
      const deadline = Date.now() + RECOVERY_TIMEOUT_MS;
      let status = 0;
      while (status !== 200 && Date.now() < deadline) {
        status = (await send(url, 'GET', '/v1/namespaces', probe)).status;
        if (status !== 200) await delay(100);
      }
      expect(status, `gateway did not recover in round ${round}`).toBe(200);
    }
    await workload.stop();
    await delay(1_000);
    expect(gateway.exit).toBeNull();
    expect(indexer.exit).toBeNull();

    expect([...seriousOutput(gateway), ...seriousOutput(indexer)]).toEqual([]);
    expect(workload.anomalies).toEqual([]);
    expect(workload.unresolved).toEqual([]);
    // The cuts did reach requests: some answers were `unavailable`, and backends were there to cut.
    expect(terminated).toBeGreaterThanOrEqual(ROUNDS);
    expect(workload.tally.ok).toBeGreaterThan(ROUNDS);

    const sql = connectSql(database.url);
    try {
      // A verification request that times out says what the gateway logged meanwhile (a stuck
      // group commit batch reports its stage there).
      const problems = await verifyLedger(sql, url, workload).catch((error: unknown) => [`verification: ${error}`]);
      expect([...problems, ...seriousOutput(gateway)]).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
    }
    // The indexer, cut as often, still brings the index to the ledger.
    expect(
      await indexEqualsLedger(
        database.url,
        targets.map((target) => target.workspaceId),
      ),
    ).toEqual([]);
    console.info(
      `connections cut: ${ROUNDS} rounds, ${terminated} backends terminated, ${workload.acknowledged.length} acknowledged writes, answers ${JSON.stringify(workload.tally)}`,
    );
  });
});
