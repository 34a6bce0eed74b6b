import { createTestDatabase, type TestDatabase, TestIssuer } from '@tms/testkit';
import { connectSql } from '@tms/testkit/postgres-server';
import { delay, type GatewayProcess, startGatewayProcess } from '@tms/testkit/processes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTargets, FAULT_GATEWAY_ENV, prepareLedger, verifyLedger, Workload } from './workload';

// kill -9 of the gateway, again and again, while clients write with Idempotency-Key and retry
// (on a refused connection, a reset, or 503) until acknowledged. Whatever the gateway
// acknowledged must be in the ledger once, in gap-free commit sequences, and a replay of the
// key must answer the same bytes. FAULT_ROUNDS makes a longer run.
const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 5);

describe('gateway killed with SIGKILL under idempotent writes (Postgres)', () => {
  let issuer: TestIssuer;
  let database: TestDatabase;
  let env: Record<string, string>;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    issuer = await TestIssuer.start();
    database = await createTestDatabase('tms_fault_kill');
    env = { DATABASE_URL: database.url, ...issuer.env(), ...FAULT_GATEWAY_ENV };
  });

  afterAll(async () => {
    await gateway?.stop();
    await issuer?.close();
    await database?.drop();
  });

  it(`loses and duplicates nothing over ${ROUNDS} kills`, async () => {
    const subject = await prepareLedger(database.url, issuer);
    gateway = await startGatewayProcess('kill-0', env);
    const token = await issuer.sessionToken(subject, { expiresIn: 3600 });
    const targets = await createTargets(gateway.url, token, 2);
    let url = gateway.url;
    const workload = new Workload({
      url: () => url,
      targets,
      writersPerTarget: 3,
      readers: 2,
      networkErrorsExpected: true,
    }).start();

    for (let round = 1; round <= ROUNDS; round += 1) {
      const before = workload.acknowledged.length;
      // Kill while writes are in flight: after some were acknowledged in this life.
      const deadline = Date.now() + 20_000;
      while (workload.acknowledged.length < before + 10 && Date.now() < deadline) await delay(20);
      await delay(Math.random() * 200);
      gateway.signal('SIGKILL');
      const exit = await gateway.exited;
      expect(exit, `round ${round}: it died of our kill, not before`).toEqual({ code: null, signal: 'SIGKILL' });
      gateway = await startGatewayProcess(`kill-${round}`, env);
      url = gateway.url;
    }
    // Let the last life take writes too, then finish every key in flight.
    const last = workload.acknowledged.length;
    while (workload.acknowledged.length < last + 20) await delay(20);
    await workload.stop();

    expect(workload.anomalies).toEqual([]);
    expect(workload.unresolved).toEqual([]);
    expect(workload.acknowledged.length).toBeGreaterThan(ROUNDS * 10);
    // The kills did hit requests in flight.
    expect(workload.tally.networkErrors).toBeGreaterThan(0);

    const sql = connectSql(database.url);
    try {
      expect(await verifyLedger(sql, gateway.url, workload)).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
    }
    console.info(
      `gateway SIGKILL: ${ROUNDS} kills, ${workload.acknowledged.length} acknowledged writes, answers ${JSON.stringify(workload.tally)}`,
    );
  });
});
