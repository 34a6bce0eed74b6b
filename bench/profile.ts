/**
 * A focused run of one workload against the compiled gateway (no bare server, no counting
 * pass): for settings that the full bench does not vary (DATABASE_POOL_SIZE, GATEWAY_WORKERS)
 * and for CPU profiles. Prints requests per second, latency and, with PROFILE_CPU=1, the
 * functions with the most self time in the gateway process (`node --cpu-prof`, profile files
 * under PROFILE_DIR, default /tmp/tms-profile).
 *
 * Usage: tsx bench/profile.ts [get|get-evidence|graphql|create|create-8]...   (default: get graphql)
 * Environment: PROFILE_SECONDS (default 10), PROFILE_CONNECTIONS (default 32),
 * PROFILE_CPU=1, PROFILE_DIR, PROFILE_TOP (default 25), PROFILE_NODE_FLAGS, PROFILE_BUILD (an existing build
 * directory to run instead of building afresh: compare two builds), and any GATEWAY_ENV_<NAME>=value
 * passed to the gateway as NAME=value (GATEWAY_ENV_DATABASE_POOL_SIZE=10, ...).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Ledger } from '@tms/ledger';
import { createTestDatabase, TestIssuer } from '@tms/testkit';
import autocannon from 'autocannon';
import { SERVER_NODE_FLAGS } from '../scripts/build';
import { buildAll } from './build';
import { textFor } from './corpus';
import { processCpuSeconds } from './cpu';

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 32);
const CPU = process.env.PROFILE_CPU === '1';
const PROFILE_DIR = process.env.PROFILE_DIR ?? '/tmp/tms-profile';
const TOP = Number(process.env.PROFILE_TOP ?? 25);
const READ_SET = 200;
/** Extra Node flags for the gateway process, space-separated (A/B of a flag). */
const NODE_FLAGS = (process.env.PROFILE_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const workloadNames = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['get', 'graphql'];

const extraEnv: Record<string, string> = {};
for (const [key, value] of Object.entries(process.env)) {
  if (key.startsWith('GATEWAY_ENV_') && value !== undefined) extraEnv[key.slice('GATEWAY_ENV_'.length)] = value;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function (name, file, line), largest first, as shares of all samples. */
function topSelfTime(file: string, top: number): string[] {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const delta = profile.timeDeltas[i] ?? 0;
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url
      ? `${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/bin\//, 'bin/')}:${lineNumber + 1}`
      : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    selfUs.set(key, (selfUs.get(key) ?? 0) + delta);
    total += delta;
  });
  return [...selfUs.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, us]) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`);
}

/** MiB of a `/proc/<pid>/status` field (VmRSS now, VmHWM the peak so far); 0 when unavailable. */
function procStatusMib(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return match ? Math.round(Number(match[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

async function main() {
  const build = process.env.PROFILE_BUILD
    ? {
        outDir: path.resolve(process.env.PROFILE_BUILD),
        bundles: { gateway: path.resolve(process.env.PROFILE_BUILD, 'bin/gateway.mjs') },
      }
    : await buildAll();
  const db = await createTestDatabase('tms_profile');
  const issuer = await TestIssuer.start();
  let child: ChildProcess | null = null;
  try {
    const ledger = await Ledger.open({ databaseUrl: db.url, maxConnections: 2 });
    await ledger.migrate();
    await ledger.stores.directory.enroll(issuer.sessionIssuer, 'profile-user', Date.now() / 1000);
    await ledger.close();
    const token = await issuer.sessionToken('profile-user', { expiresIn: 3600 });

    const port = await freePort();
    fs.mkdirSync(PROFILE_DIR, { recursive: true });
    const before = new Set(fs.readdirSync(PROFILE_DIR));
    const logFile = path.join(build.outDir, 'profile-gateway.log');
    const out = fs.openSync(logFile, 'w');
    child = spawn(
      process.execPath,
      [
        ...SERVER_NODE_FLAGS,
        ...NODE_FLAGS,
        ...(CPU ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []),
        build.bundles.gateway,
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          ...issuer.env(),
          DATABASE_URL: db.url,
          HOST: '127.0.0.1',
          PORT: String(port),
          NODE_ENV: 'production',
          LOG_LEVEL: 'warn',
          RATE_LIMITS: 'off',
          INDEXER: 'external',
          DATA_DIR: path.join(build.outDir, 'data'),
          ...extraEnv,
        },
        stdio: ['ignore', out, out],
      },
    );
    fs.closeSync(out);
    const exited = new Promise<void>((resolve) => child?.once('exit', () => resolve()));
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i += 1) {
      if (i > 300) throw new Error(`gateway not ready; see ${logFile}`);
      const ok = await fetch(`${url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const post = async (p: string, workspace: string | null, body: unknown) => {
      const res = await fetch(`${url}${p}`, {
        method: 'POST',
        headers: {
          ...auth,
          ...(workspace ? { 'x-service-workspace': workspace } : {}),
          'idempotency-key': crypto.randomUUID(),
        },
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, { id: string }>;
    };
    const workspace = (await post('/v1/workspaces', null, { name: 'profile' })).workspace?.id as string;
    const namespace = (await post('/v1/namespaces', workspace, { parent_id: null, name: 'p' })).namespace?.id as string;
    const ids: string[] = [];
    for (let i = 0; i < READ_SET; i += 1) {
      const body = { namespace_id: namespace, kind: 'claim', text: textFor(i), valid_from: 0 };
      ids.push((await post('/v1/memories', workspace, body)).memory?.id as string);
    }
    // Seven more workspaces for creates spread over 8 (the bench's second create workload).
    const spread = [{ workspace, namespace }];
    for (let i = 1; i < 8; i += 1) {
      const ws = (await post('/v1/workspaces', null, { name: `profile-${i}` })).workspace?.id as string;
      spread.push({
        workspace: ws,
        namespace: (await post('/v1/namespaces', ws, { parent_id: null, name: 'p' })).namespace?.id as string,
      });
    }
    const pid = child.pid as number;
    process.stdout.write(
      `gateway RSS after setup ${procStatusMib(pid, 'VmRSS')} MiB (flags: ${NODE_FLAGS.join(' ')})\n`,
    );
    let n = 0;
    const nextId = () => ids[n++ % ids.length] as string;
    // A fresh headers object per request: autocannon writes content-length into the one it gets.
    const headers = { ...auth, 'x-service-workspace': workspace };
    const query = `query($id: ID!) { memory(id: $id) { asOf knownAt view {
      memory { id kind generation namespaceId }
      revision { id memoryId namespaceId kind generation text status validFrom validTo recordedAt recordedUntil
                 evidenceIds supportRevisionIds }
      evidence { id } verifications { id } stale } } }`;
    const requests: Record<
      string,
      () => { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string }
    > = {
      get: () => ({ method: 'GET', path: `/v1/memories/${nextId()}`, headers: { ...headers } }),
      'get-evidence': () => ({
        method: 'GET',
        path: `/v1/memories/${nextId()}?include_evidence=true`,
        headers: { ...headers },
      }),
      graphql: () => ({
        method: 'POST',
        path: '/graphql',
        headers: { ...headers },
        body: JSON.stringify({ query, variables: { id: nextId() } }),
      }),
      create: () => ({
        method: 'POST',
        path: '/v1/memories',
        headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ namespace_id: namespace, kind: 'claim', text: textFor(n++), valid_from: 0 }),
      }),
      'create-8': () => {
        const target = spread[n % spread.length] as { workspace: string; namespace: string };
        return {
          method: 'POST',
          path: '/v1/memories',
          headers: { ...auth, 'x-service-workspace': target.workspace, 'idempotency-key': crypto.randomUUID() },
          body: JSON.stringify({ namespace_id: target.namespace, kind: 'claim', text: textFor(n++), valid_from: 0 }),
        };
      },
    };
    for (const name of workloadNames) {
      const next = requests[name];
      if (!next) throw new Error(`unknown workload ${name}`);
      await autocannon({ url, connections: CONNECTIONS, duration: 1, requests: [{ setupRequest: () => next() }] });
      const cpuBefore = processCpuSeconds(child.pid as number);
      const r = await autocannon({
        url,
        connections: CONNECTIONS,
        duration: SECONDS,
        requests: [{ setupRequest: () => next() }],
      });
      const cpuMsPerRequest = ((processCpuSeconds(child.pid as number) - cpuBefore) * 1000) / r.requests.total;
      process.stdout.write(
        `${name}: ${(r.requests.total / r.duration).toFixed(0)} rps, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, gateway CPU ${(cpuMsPerRequest * 1000).toFixed(1)} µs/request, failed ${r.non2xx + r.errors + r.timeouts}, RSS ${procStatusMib(pid, 'VmRSS')} MiB, peak ${procStatusMib(pid, 'VmHWM')} MiB (${JSON.stringify(extraEnv)})\n`,
      );
    }
    child.kill('SIGTERM');
    await exited;
    child = null;
    if (CPU) {
      for (const file of fs.readdirSync(PROFILE_DIR).filter((f) => !before.has(f) && f.endsWith('.cpuprofile'))) {
        process.stdout.write(`\ntop self time, ${path.join(PROFILE_DIR, file)}:\n`);
        process.stdout.write(`${topSelfTime(path.join(PROFILE_DIR, file), TOP).join('\n')}\n`);
      }
    }
  } finally {
    child?.kill('SIGKILL');
    await issuer.close();
    await db.drop();
  }
}

await main();
