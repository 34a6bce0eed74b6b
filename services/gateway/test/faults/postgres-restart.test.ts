import { TestIssuer } from '@tms/testkit';
import { connectSql, type PrivatePostgres } from '@tms/testkit/postgres-server';
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
  notUnavailable,
  prepareLedger,
  privateServer,
  send,
  seriousOutput,
  verifyLedger,
  Workload,
} from './workload';

// Postgres stopped and started again under load. A private server of this test's own (the
// shared one on 5432 must never stop). While it is down the gateway answers the retryable 503
// `unavailable` and /readyz 503, and neither the gateway nor the indexer dies; once it is back,
// both serve again without a restart, and nothing acknowledged is lost. FAULT_ROUNDS (stops) and
// FAULT_SECONDS (time down per stop) make a longer run.
const ROUNDS = Number(process.env.FAULT_ROUNDS ?? 1);
const DOWN_MS = Number(process.env.FAULT_SECONDS ?? 2) * 1000;
const RECOVERY_TIMEOUT_MS = 30_000;

describe('Postgres stopped and started under load', () => {
  let issuer: TestIssuer;
  let server: PrivatePostgres;
  let gateway: GatewayProcess | undefined;
  let indexer: ServiceProcess | undefined;

  beforeAll(async () => {
    issuer = await TestIssuer.start();
    ({ server } = await privateServer());
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), indexer?.stop()]);
    await issuer?.close();
    await server?.destroy();
  });

  it(`answers 503 while it is down and recovers without a restart (${ROUNDS} stops)`, async () => {
    const databaseUrl = server.url('tms');
    const subject = await prepareLedger(databaseUrl, issuer);
    gateway = await startGatewayProcess('restart', {
      DATABASE_URL: databaseUrl,
      ...issuer.env(),
      ...FAULT_GATEWAY_ENV,
    });
    indexer = await startIndexerProcess('restart', { DATABASE_URL: databaseUrl });
    const running = { gateway, indexer };
    const token = await issuer.sessionToken(subject, { expiresIn: 3600 });
    const targets = await createTargets(gateway.url, token, 2);
    const url = gateway.url;
    const probe = targets[0] as (typeof targets)[number];
    const workload = new Workload({
      url: () => url,
      targets,
      writersPerTarget: 2,
      readers: 2,
      networkErrorsExpected: false,
    }).start();

    for (let round = 1; round <= ROUNDS; round += 1) {
      const before = workload.acknowledged.length;
      while (workload.acknowledged.length < before + 10) await delay(20);
      await server.stop();

      // Down: every probe answers the retryable 503, readiness says so, and both processes live.
      const downUntil = Date.now() + DOWN_MS;
      let probes = 0;
      while (Date.now() < downUntil) {
        const ready = await fetch(`${url}/readyz`);
        expect(ready.status, `round ${round}: /readyz while Postgres is down`).toBe(503);
        const read = await send(url, 'GET', '/v1/namespaces', probe);
        expect(notUnavailable(read), `round ${round}: ${read.text}`).toBeNull();
        probes += 1;
        await delay(100);
      }
      expect(probes).toBeGreaterThan(0);
      for (const [name, service] of Object.entries(running)) {
        expect(
          service.exit,
          `${name} died while Postgres was down:\n${service.output.slice(-30).join('\n')}`,
        ).toBeNull();
      }

      await server.start();
      const deadline = Date.now() + RECOVERY_TIMEOUT_MS;
      let status = 0;
      while (status !== 200 && Date.now() < deadline) {
        status = (await send(url, 'GET', '/v1/namespaces', probe)).status;
        if (status !== 200) await delay(100);
      }
      expect(status, `round ${round}: the gateway did not recover`).toBe(200);
      // Readiness recovers too, within the same deadline, but not always on its first poll (in
      // one of 60 stops it answered 503 right after the probe's 200). Likely cause, not pinned
      // down: it asks the main pool, whose query may go to a connection attempt begun while
      // Postgres was still starting, and fail with it, as any request can then (a retryable 503).
      let ready = 0;
      while (ready !== 200 && Date.now() < deadline) {
        ready = (await fetch(`${url}/readyz`)).status;
        if (ready !== 200) await delay(100);
      }
      expect(ready, `round ${round}: /readyz did not recover`).toBe(200);
    }
    // Writes go through again after the last start.
    const last = workload.acknowledged.length;
    while (workload.acknowledged.length < last + 10) await delay(20);
    await workload.stop();
    expect(gateway.exit).toBeNull();
    expect(indexer.exit).toBeNull();

    expect([...seriousOutput(gateway), ...seriousOutput(indexer)]).toEqual([]);
    expect(workload.anomalies).toEqual([]);
    expect(workload.unresolved).toEqual([]);
    expect(workload.tally.unavailable).toBeGreaterThan(0);

    const sql = connectSql(databaseUrl);
    try {
      expect(await verifyLedger(sql, url, workload)).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
    }
    expect(
      await indexEqualsLedger(
        databaseUrl,
        targets.map((target) => target.workspaceId),
      ),
    ).toEqual([]);
    console.info(
      `Postgres restarts: ${ROUNDS} stops, ${workload.acknowledged.length} acknowledged writes, answers ${JSON.stringify(workload.tally)}`,
    );
  });
});
