/**
 * `pnpm --filter @tms/bench rate-limits`: what counting the rate limits in Redis
 * (RATE_LIMIT_REDIS_URL) costs a read. Two gateways, compiled as production runs them, over one
 * Postgres database and the same RATE_LIMITS (far above the load, so nothing is refused): one
 * counts in process, the other in the Redis at BENCH_REDIS_URL (default redis://127.0.0.1:6379,
 * under a key prefix of this run). memories.get rounds alternate between them at equal
 * concurrency (autocannon); Redis's own command counters give the commands per request. Prints a
 * table; exits 0 (a measurement, not a test).
 *
 * Environment: BENCH_SECONDS (per round, default 5), BENCH_CONNECTIONS (default 32),
 * BENCH_ROUNDS (per side, default 3).
 */
import { execFile, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ledger } from '@tms/ledger';
import { createTestDatabase, TestIssuer } from '@tms/testkit';
import autocannon from 'autocannon';
import { SERVER_NODE_FLAGS } from '../scripts/build';
import { buildAll } from './build';
import { processCpuSeconds } from './cpu';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const READ_SET = 200;
/** Far above what a run spends (about 10^5 calls a minute here): the limit is counted, never met. */
const RATE_LIMITS = '*=1000000/60';

const run = promisify(execFile);
const started = performance.now();
const log = (line: string) =>
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface Gateway {
  label: string;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

async function startGateway(label: string, bundle: string, env: Record<string, string>, logDir: string) {
  const port = await freePort();
  const out = fs.openSync(path.join(logDir, `${label}.log`), 'w');
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, bundle], {
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${label} exited; see ${logDir}/${label}.log`);
    const status = await fetch(`${url}/readyz`).then(
      (res) => res.arrayBuffer().then(() => res.status),
      () => 0,
    );
    if (status === 200) break;
    if (Date.now() > deadline) throw new Error(`${label} was not ready; see ${logDir}/${label}.log`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    label,
    url,
    pid: child.pid as number,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  } satisfies Gateway;
}

/** Calls of each command Redis has run since it started (INFO commandstats). */
async function redisCommandCalls(): Promise<Map<string, number>> {
  const { stdout } = await run('redis-cli', ['-u', REDIS_URL, '--no-auth-warning', 'info', 'commandstats']);
  const calls = new Map<string, number>();
  for (const match of stdout.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) calls.set(match[1] as string, Number(match[2]));
  return calls;
}

/** Redis's own time per call of each command (INFO commandstats usec_per_call), in µs. */
async function redisUsecPerCall(): Promise<Map<string, number>> {
  const { stdout } = await run('redis-cli', ['-u', REDIS_URL, '--no-auth-warning', 'info', 'commandstats']);
  const usec = new Map<string, number>();
  for (const match of stdout.matchAll(/^cmdstat_(\w+):calls=\d+,usec=\d+,usec_per_call=([\d.]+)/gm)) {
    usec.set(match[1] as string, Number(match[2]));
  }
  return usec;
}

/** memories.get answered by a gateway so far (its /metrics), in-flight requests of a round included. */
async function readsServed(gateway: Gateway): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  let total = 0;
  for (const match of text.matchAll(/^tms_requests_total\{[^}]*operation="memories\.get"[^}]*\} (\d+)/gm)) {
    total += Number(match[1]);
  }
  return total;
}

interface Round {
  rps: number;
  /** The gateway's CPU per request answered, in ms. */
  cpuMs: number;
  p50: number;
  p99: number;
  failures: number;
  requests: number;
}

async function main() {
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-rate-bench-'));
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    log('building the gateway...');
    const build = await buildAll();
    const database = await createTestDatabase('tms_bench_rate');
    cleanups.push(() => database.drop());
    const issuer = await TestIssuer.start();
    cleanups.push(() => issuer.close());
    const ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: 2 });
    try {
      await ledger.migrate();
      await ledger.stores.directory.enroll(issuer.sessionIssuer, 'bench-user', Date.now() / 1000);
    } finally {
      await ledger.close();
    }
    const token = await issuer.sessionToken('bench-user', { expiresIn: 24 * 3600 });
    const env = {
      ...issuer.env(),
      DATABASE_URL: database.url,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      INDEXER: 'external',
      RATE_LIMITS,
      DATA_DIR: path.join(logDir, 'data'),
    };
    const keyPrefix = `tms-bench:${crypto.randomBytes(6).toString('hex')}:`;
    log('starting the two gateways...');
    const [local, shared] = await Promise.all([
      startGateway('in-process', build.bundles.gateway, env, logDir),
      startGateway(
        'redis',
        build.bundles.gateway,
        { ...env, RATE_LIMIT_REDIS_URL: REDIS_URL, RATE_LIMIT_REDIS_PREFIX: keyPrefix },
        logDir,
      ),
    ]);
    cleanups.push(
      () => local.stop(),
      () => shared.stop(),
    );

    log(`seeding ${READ_SET} memories...`);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const post = async (url: string, route: string, workspace: string | null, body: unknown) => {
      const res = await fetch(`${url}${route}`, {
        method: 'POST',
        headers: {
          ...auth,
          ...(workspace ? { 'x-service-workspace': workspace } : {}),
          'idempotency-key': crypto.randomUUID(),
        },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`POST ${route}: ${res.status} ${text.slice(0, 300)}`);
      return JSON.parse(text) as Record<string, { id: string }>;
    };
    const workspace = (await post(local.url, '/v1/workspaces', null, { name: 'rate bench' })).workspace?.id as string;
    const namespace = (await post(local.url, '/v1/namespaces', workspace, { parent_id: null, name: 'reads' })).namespace
      ?.id as string;
    const ids: string[] = [];
    for (let i = 0; i < READ_SET; i += 1) {
      const body = { namespace_id: namespace, kind: 'claim', text: `rate limit bench memory ${i}`, valid_from: 0 };
      ids.push((await post(local.url, '/v1/memories', workspace, body)).memory?.id as string);
    }

    const load = async (gateway: Gateway, seconds: number): Promise<Round> => {
      let next = 0;
      const servedBefore = await readsServed(gateway);
      const cpuBefore = processCpuSeconds(gateway.pid);
      const result = await autocannon({
        url: gateway.url,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [
          {
            setupRequest: () => ({
              method: 'GET',
              path: `/v1/memories/${ids[next++ % ids.length]}`,
              headers: { ...auth, 'x-service-workspace': workspace },
            }),
          },
        ],
      });
      // Requests still in flight when the time is up are answered just after.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const cpuMs =
        ((processCpuSeconds(gateway.pid) - cpuBefore) * 1000) / ((await readsServed(gateway)) - servedBefore);
      return {
        rps: result.requests.total / result.duration,
        cpuMs,
        p50: result.latency.p50,
        p99: result.latency.p99,
        failures: result.non2xx + result.errors + result.timeouts,
        requests: result.requests.total,
      };
    };

    log('warming up both...');
    for (const gateway of [local, shared]) await load(gateway, 2);

    const rounds = new Map<string, Round[]>([
      [local.label, []],
      [shared.label, []],
    ]);
    const before = await redisCommandCalls();
    const servedBefore = await readsServed(shared);
    for (let round = 1; round <= ROUNDS; round += 1) {
      for (const gateway of round % 2 === 1 ? [local, shared] : [shared, local]) {
        const r = await load(gateway, SECONDS);
        rounds.get(gateway.label)?.push(r);
        log(
          `  ${gateway.label.padEnd(10)} round ${round}: ${r.rps.toFixed(0)} rps, p50 ${r.p50} ms, p99 ${r.p99} ms, CPU ${r.cpuMs.toFixed(3)} ms/request${r.failures ? `, ${r.failures} failed` : ''}`,
        );
      }
    }
    const after = await redisCommandCalls();
    const usec = await redisUsecPerCall();
    const sharedRequests = (await readsServed(shared)) - servedBefore;
    const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    const scriptCalls = delta('evalsha') + delta('eval');

    // A gateway that found Redis slower than its command timeout counted in process meanwhile.
    const fallbacks = fs
      .readFileSync(path.join(logDir, `${shared.label}.log`), 'utf8')
      .split('\n')
      .filter((line) => line.includes('"rate_limit_store"') && line.includes('unreachable')).length;
    const summary = (label: string) => {
      const list = rounds.get(label) ?? [];
      const mean = (f: (r: Round) => number) => list.reduce((sum, r) => sum + f(r), 0) / list.length;
      return {
        rps: mean((r) => r.rps),
        cpuMs: mean((r) => r.cpuMs),
        p50: mean((r) => r.p50),
        p99: mean((r) => r.p99),
        failures: list.reduce((s, r) => s + r.failures, 0),
      };
    };
    const a = summary(local.label);
    const b = summary(shared.label);
    const lines = [
      '',
      `memories.get, ${ROUNDS} rounds each of ${SECONDS} s, ${CONNECTIONS} connections, alternating; ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), node ${process.version}`,
      `RATE_LIMITS=${RATE_LIMITS}; Redis ${REDIS_URL}`,
      '',
      '| limits counted | rps | p50 ms | p99 ms | gateway CPU ms/request | failed |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      `| in process | ${a.rps.toFixed(0)} | ${a.p50.toFixed(1)} | ${a.p99.toFixed(1)} | ${a.cpuMs.toFixed(3)} | ${a.failures} |`,
      `| in Redis | ${b.rps.toFixed(0)} | ${b.p50.toFixed(1)} | ${b.p99.toFixed(1)} | ${b.cpuMs.toFixed(3)} | ${b.failures} |`,
      '',
      `Redis / in process: throughput ${(((b.rps - a.rps) / a.rps) * 100).toFixed(1)} %, gateway CPU per request ${(((b.cpuMs - a.cpuMs) / a.cpuMs) * 100).toFixed(1)} %`,
      `Redis's own time per script call: ${(usec.get('evalsha') ?? 0).toFixed(2)} µs (INFO commandstats)`,
      `Redis script calls per request: ${(scriptCalls / Math.max(1, sharedRequests)).toFixed(3)} (${scriptCalls} for ${sharedRequests} requests); fallbacks to in-process counting: ${fallbacks}`,
      '',
    ];
    process.stdout.write(lines.join('\n'));
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    fs.rmSync(logDir, { recursive: true, force: true });
  }
}

await main();
