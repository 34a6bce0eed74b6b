import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ledger } from '@tms/ledger';
import { createTestDatabase, freePort, type TestDatabase } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, killStartedGateways, running, sleep, startGatewayProcess } from './gateway-process';

// Cluster mode as an operator runs it: `GATEWAY_WORKERS=2` on Postgres starts two gateway
// processes on one port (each logs its requests with its own pid), a worker that dies is
// replaced, SIGTERM stops them all; on the embedded PGlite ledger more than one worker is
// refused at boot with its reason.
const READY_TIMEOUT_MS = 120_000;
const STEERING =
  /^(PORT|HOST|DATABASE_URL|DATA_DIR|DEV_AUTH|NODE_ENV|SEARCH_PROVIDER|INDEXER|GATEWAY_.*|MEILI_.*|SESSION_.*|OAUTH_.*)$/;

const start = (env: Record<string, string>) => startGatewayProcess(env, STEERING);
type Started = GatewayProcess;

/** The JSON log lines (pino) of a run's output. */
function logLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Pids of the workers that logged `gateway listening`. */
function listeningPids(output: string): number[] {
  return logLines(output)
    .filter((l) => l.msg === 'gateway listening')
    .map((l) => l.pid as number);
}

async function waitFor(what: string, gw: Started, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!running(gw.child)) throw new Error(`gateway exited while waiting for ${what}:\n${gw.output()}`);
    if (await condition()) return;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}:\n${gw.output()}`);
}

/** A request on a connection of its own (the cluster hands out connections, not requests). */
async function healthOnFreshConnection(port: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`, {
    headers: { connection: 'close' },
    signal: AbortSignal.timeout(5000),
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  return res.headers.get('x-request-id') as string;
}

describe('GATEWAY_WORKERS', () => {
  let database: TestDatabase;
  let dataDir: string;

  beforeAll(async () => {
    database = await createTestDatabase('tms_cluster');
    const ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: 1 });
    try {
      await ledger.migrate();
    } finally {
      await ledger.close();
    }
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-cluster-'));
  });

  afterAll(async () => {
    killStartedGateways();
    await database?.drop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs two workers on one port over Postgres, replaces a dead one, and stops on SIGTERM', async () => {
    const port = await freePort();
    const gw = start({
      GATEWAY_WORKERS: '2',
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMITS: 'off',
    });
    await waitFor('two workers', gw, () => listeningPids(gw.output()).length === 2);
    const workers = listeningPids(gw.output());
    expect(new Set(workers).size).toBe(2);
    expect(workers).not.toContain(gw.child.pid);

    // Requests on fresh connections are spread over both workers: each logs its own with its pid.
    const requestIds = new Set<string>();
    for (let i = 0; i < 20; i += 1) requestIds.add(await healthOnFreshConnection(port));
    // Workers write their request lines in blocks (at most 100 ms late): wait for all twenty.
    const linesOf = () =>
      logLines(gw.output()).filter((l) => l.msg === 'request' && requestIds.has(l.request_id as string));
    await waitFor('the request lines', gw, () => linesOf().length === requestIds.size);
    const servedBy = new Set(linesOf().map((l) => l.pid as number));
    expect(servedBy).toEqual(new Set(workers));

    // A worker that dies is replaced by a new process; the port keeps answering.
    process.kill(workers[0] as number, 'SIGKILL');
    await waitFor('a replacement worker', gw, () => listeningPids(gw.output()).length === 3);
    const replacement = listeningPids(gw.output())[2] as number;
    expect(workers).not.toContain(replacement);
    for (let i = 0; i < 4; i += 1) await healthOnFreshConnection(port);

    // SIGTERM to the primary stops every worker and the primary with status 0.
    process.kill(gw.child.pid as number, 'SIGTERM');
    const { code } = await gw.exited;
    expect(code).toBe(0);
    for (const pid of [workers[1] as number, replacement]) {
      expect(() => process.kill(pid, 0)).toThrow();
    }
  }, 300_000);

  it('refuses more than one worker on the embedded PGlite ledger, with the reason', async () => {
    const gw = start({ GATEWAY_WORKERS: '2', DATA_DIR: dataDir, PORT: String(await freePort()), HOST: '127.0.0.1' });
    const { code } = await gw.exited;
    expect(code).toBe(1);
    expect(gw.output()).toContain('GATEWAY_WORKERS: more than 1 needs DATABASE_URL');
    expect(gw.output()).toContain('embedded PGlite ledger');
    expect(listeningPids(gw.output())).toEqual([]);
  }, 120_000);
});
