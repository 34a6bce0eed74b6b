/**
 * `svc import` against concurrent `POST /v1/memories`, in one run on one fresh Postgres database
 * (issue 41's Done-when: the import at >= 5,000 memories/s, or >= 5x the POST rate, whichever is
 * lower). Usage: `pnpm --filter @tms/bench import [count]` (default 100000 lines).
 *
 * 1. The gateway runs as `pnpm start` runs it (dist/bin/gateway.mjs built by
 *    scripts/ensure-built.mjs, the same node flags, its embedded indexer) with `RATE_LIMITS=off`
 *    (the default budget is below a bench's pace) and `EMBEDDER=none` (the builtin model would
 *    spend the CPU both sides share on embeddings).
 * 2. `POST /v1/memories` by 16 clients at once for IMPORT_BENCH_POST_SECONDS (default 20) after a
 *    warm-up: memories without evidence, the cheapest write the API has.
 * 3. `svc import` as users run it (`node --enable-source-maps dist/bin/svc.mjs import`, as
 *    `pnpm svc` does) of `count` lines into another namespace of the same workspace, each with
 *    its evidence, while the gateway (and its indexer) keeps running.
 * 4. A counting pass: a smaller import through a wire counter in front of Postgres, for the
 *    statements and round trips per line.
 *
 * It prints both rates and their ratio, and the CPU each side spends per memory (its process
 * and the Postgres backends serving it): on a machine shared with other work, the CPU ratio is
 * the steadier of the two. `IMPORT_BENCH_PROFILE=<dir>` runs the import with
 * `--cpu-prof` writing there.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ledger } from '@tms/ledger';
import { createTestDatabase, TestIssuer } from '@tms/testkit';
import { REPO_ROOT, SERVER_NODE_FLAGS } from '../scripts/build';
import { textFor } from './corpus';
import { type CpuSample, cpuBetween, sampleCpu } from './cpu';
import { PgWireCounter } from './pg-counter';
import { startServer } from './server-process';

const COUNT = Number(process.argv[2] ?? 100_000);
const POST_SECONDS = Number(process.env.IMPORT_BENCH_POST_SECONDS ?? 20);
const POST_CONCURRENCY = 16;
const WARM_UP_POSTS = 300;
const COUNTED_LINES = 2048;
const PROFILE_DIR = process.env.IMPORT_BENCH_PROFILE;
/** The Done-when's absolute target (memories per second). */
const TARGET_RATE = 5000;
const TARGET_RATIO = 5;

const log = (line: string) => process.stderr.write(`${line}\n`);

class Api {
  constructor(
    readonly url: string,
    private readonly token: string,
  ) {}

  async post(route: string, body: unknown, workspace: string | null): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.token}`,
      'content-type': 'application/json',
      'idempotency-key': crypto.randomUUID(),
    };
    if (workspace) headers['x-service-workspace'] = workspace;
    const response = await fetch(`${this.url}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`POST ${route}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  }
}

/** A realistic line: a memory of a support conversation citing the call's excerpt. */
function lineFor(i: number, namespaceId: string): string {
  const excerpt = `Call ${i}: the customer said "${textFor(i)}" and asked that order ${i * 7} be delivered on Tuesday afternoon.`;
  return JSON.stringify({
    import_key: `bench-${i}`,
    namespace_id: namespaceId,
    kind: 'episode',
    text: `Customer of call ${i} prefers Tuesday afternoon deliveries; ${textFor(i + 1)}.`,
    valid_from: 1_700_000_000 + i,
    evidence: {
      source_locator: `crm://calls/${i}`,
      content_root_sha256: crypto.createHash('sha256').update(excerpt).digest('hex'),
      excerpt,
    },
  });
}

function writeLines(file: string, from: number, count: number, namespaceId: string): void {
  const fd = fs.openSync(file, 'w');
  try {
    let chunk: string[] = [];
    for (let i = from; i < from + count; i += 1) {
      chunk.push(lineFor(i, namespaceId));
      if (chunk.length === 1000) {
        fs.writeSync(fd, `${chunk.join('\n')}\n`);
        chunk = [];
      }
    }
    if (chunk.length > 0) fs.writeSync(fd, `${chunk.join('\n')}\n`);
  } finally {
    fs.closeSync(fd);
  }
}

interface ImportRun {
  totals: { lines: number; committed: number; replayed: number; rejected: number; seconds: number };
  wallSeconds: number;
  /** CPU seconds of the svc process and of the Postgres backends serving it (sampled until it exits). */
  cpu: { server: number; postgres: number };
}

/** How often the import's CPU is sampled (its last sample before it exits is the one kept). */
const CPU_SAMPLE_MS = 250;

/** `svc import` as a user runs it; its JSON totals. */
async function runImport(databaseUrl: string, workspace: string, file: string, profile: boolean): Promise<ImportRun> {
  const flags = ['--enable-source-maps'];
  if (profile && PROFILE_DIR) flags.push('--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`);
  const args = [...flags, path.join(REPO_ROOT, 'dist/bin/svc.mjs'), 'import', '--workspace', workspace, file];
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, USER: 'bench-importer' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const pid = child.pid as number;
  const first = sampleCpu(pid);
  // Each process's latest ticks seen: a backend is gone from the samples once its connection closes.
  const last: CpuSample = { server: new Map(first.server), postgres: new Map(first.postgres) };
  const sampler = setInterval(() => {
    try {
      const now = sampleCpu(pid);
      for (const [key, ticks] of now.server) last.server.set(key, ticks);
      for (const [key, ticks] of now.postgres) last.postgres.set(key, ticks);
    } catch {
      // exiting
    }
  }, CPU_SAMPLE_MS);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearInterval(sampler);
  const wallSeconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`svc import exited ${code}: ${stderr.slice(-2000)}`);
  return { totals: JSON.parse(stdout), wallSeconds, cpu: cpuBetween(first, last) };
}

async function main(): Promise<void> {
  const built = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/ensure-built.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('scripts/ensure-built.mjs failed');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-import-bench-'));
  const issuer = await TestIssuer.start();
  const database = await createTestDatabase('tms_bench_import');
  const subject = 'bench-user';
  try {
    const ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: 2 });
    try {
      await ledger.migrate();
      await ledger.stores.directory.enroll(issuer.sessionIssuer, subject, Date.now() / 1000);
    } finally {
      await ledger.close();
    }
    const gateway = await startServer(
      'gateway',
      path.join(REPO_ROOT, 'dist/bin/gateway.mjs'),
      { ...issuer.env(), DATABASE_URL: database.url, HOST: '127.0.0.1', RATE_LIMITS: 'off', EMBEDDER: 'none' },
      '/readyz',
      work,
      SERVER_NODE_FLAGS,
    );
    try {
      const api = new Api(gateway.url, await issuer.sessionToken(subject, { expiresIn: 24 * 3600 }));
      const ws = (await api.post('/v1/workspaces', { name: 'import bench' }, null)).workspace as { id: string };
      const namespace = async (name: string) =>
        ((await api.post('/v1/namespaces', { parent_id: null, name }, ws.id)).namespace as { id: string }).id;
      const posted = await namespace('posted');
      const imported = await namespace('imported');
      const counted = await namespace('counted');

      // Concurrent POST /v1/memories: a warm-up, then as many as 16 clients write in the time given.
      let serial = 0;
      const post = () =>
        api.post(
          '/v1/memories',
          { namespace_id: posted, kind: 'episode', text: textFor(serial++), valid_from: 1_700_000_000 + serial },
          ws.id,
        );
      for (let i = 0; i < WARM_UP_POSTS; i += POST_CONCURRENCY) {
        await Promise.all(Array.from({ length: POST_CONCURRENCY }, post));
      }
      let posts = 0;
      const cpuBefore = sampleCpu(gateway.pid);
      const postStarted = performance.now();
      const postUntil = postStarted + POST_SECONDS * 1000;
      await Promise.all(
        Array.from({ length: POST_CONCURRENCY }, async () => {
          while (performance.now() < postUntil) {
            await post();
            posts += 1;
          }
        }),
      );
      const postRate = posts / ((performance.now() - postStarted) / 1000);
      const postCpu = cpuBetween(cpuBefore, sampleCpu(gateway.pid));
      const postCpuMs = ((postCpu.server + postCpu.postgres) * 1000) / posts;
      log(
        `POST /v1/memories, ${POST_CONCURRENCY} at once: ${posts} in ${POST_SECONDS} s, ${postRate.toFixed(0)}/s; CPU ${postCpuMs.toFixed(2)} ms a memory (gateway ${((postCpu.server * 1000) / posts).toFixed(2)}, Postgres ${((postCpu.postgres * 1000) / posts).toFixed(2)})`,
      );

      // svc import of COUNT lines with evidence, the gateway still running.
      const file = path.join(work, 'lines.ndjson');
      writeLines(file, 0, COUNT, imported);
      log(`svc import of ${COUNT} lines with evidence (${(fs.statSync(file).size / 1e6).toFixed(1)} MB)...`);
      const run = await runImport(database.url, ws.id, file, true);
      if (run.totals.committed !== COUNT) throw new Error(`imported ${JSON.stringify(run.totals)}, not ${COUNT} lines`);
      const importRate = run.totals.committed / run.totals.seconds;
      const importCpuMs = ((run.cpu.server + run.cpu.postgres) * 1000) / COUNT;
      log(
        `svc import: ${run.totals.committed} memories with evidence in ${run.totals.seconds.toFixed(1)} s, ${importRate.toFixed(0)}/s (${(run.totals.committed / run.wallSeconds).toFixed(0)}/s counting the process's start); CPU ${importCpuMs.toFixed(2)} ms a line (svc ${((run.cpu.server * 1000) / COUNT).toFixed(2)}, Postgres ${((run.cpu.postgres * 1000) / COUNT).toFixed(2)})`,
      );

      // The counting pass: statements and round trips per line, through a wire counter.
      const counter = await PgWireCounter.start(database.url);
      let counts: ReturnType<PgWireCounter['snapshot']>;
      try {
        const countedFile = path.join(work, 'counted.ndjson');
        writeLines(countedFile, COUNT, COUNTED_LINES, counted);
        counter.reset();
        await runImport(counter.urlFor(database.url), ws.id, countedFile, false);
        counts = counter.snapshot();
      } finally {
        await counter.close();
      }
      const statements = counts.Q + counts.E;
      const roundTrips = counts.Q + counts.S + counts.H;

      const ratio = importRate / postRate;
      const target = Math.min(TARGET_RATE, TARGET_RATIO * postRate);
      const summary = {
        lines: COUNT,
        post_per_second: Math.round(postRate),
        import_per_second: Math.round(importRate),
        ratio: Math.round(ratio * 100) / 100,
        post_cpu_ms: Math.round(postCpuMs * 1000) / 1000,
        import_cpu_ms: Math.round(importCpuMs * 1000) / 1000,
        cpu_ratio: Math.round((postCpuMs / importCpuMs) * 100) / 100,
        target_per_second: Math.round(target),
        met: importRate >= target,
        counted_lines: COUNTED_LINES,
        statements_per_line: Math.round((statements / COUNTED_LINES) * 1000) / 1000,
        round_trips_per_line: Math.round((roundTrips / COUNTED_LINES) * 1000) / 1000,
        parses: counts.P,
      };
      log(
        `import/POST ratio ${summary.ratio}x; target min(${TARGET_RATE}/s, ${TARGET_RATIO}x POST) = ${summary.target_per_second}/s: ${summary.met ? 'met' : 'NOT met'}`,
      );
      log(
        `counting pass (${COUNTED_LINES} lines): ${summary.statements_per_line} statements and ${summary.round_trips_per_line} round trips per line, ${counts.P} parses`,
      );
      process.stdout.write(`${JSON.stringify(summary)}\n`);
    } finally {
      await gateway.stop();
    }
  } finally {
    await database.drop();
    await issuer.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

await main();
