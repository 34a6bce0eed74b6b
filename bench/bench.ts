/**
 * `pnpm bench`: the gateway, compiled as production runs it, beside a bare `node:http` +
 * postgres.js server doing the same SQL shape, against the same local Postgres, in one run.
 * Each workload alternates the two A B B A at equal concurrency (autocannon), each round after a
 * checkpoint; a separate sequential pass through a wire-protocol counting proxy gives statements
 * per operation; the resident memory of both processes is sampled during the load. Prints tables; exits 0 (it is a
 * measurement, not a test). See docs/performance.md.
 *
 * Environment: BENCH_SECONDS (per round, default 5), BENCH_CONNECTIONS (default 32),
 * BENCH_ROUNDS (per side, default 2; five times that for the chained-vs-unchained pair, whose sides run at once), BENCH_RECALL_MEMORIES (default 100000),
 * BENCH_QUICK=1 (1 s rounds, 300 recall memories: a smoke run), BENCH_DATABASE_LAYOUT
 * (`plain` default, or `partitioned`: the gateway's database as `DATABASE_LAYOUT=partitioned svc
 * migrate` lays it out, docs/scale-out.md), BENCH_WORKLOADS (run only the workloads whose name
 * contains one of these comma-separated words, e.g. `chain`), BENCH_PAIR_SAME_BUILD=1 (both sides of the
 * chained-vs-unchained pair run the unchained build: an A/A check of the method, whose ratios should be 1).
 *
 * What chaining commits costs a write (docs/ledger-proofs.md) is measured in the same run: the
 * `memories.create ... chained vs unchained` workloads hold the gateway against the same gateway
 * built with chaining compiled out, each on a fresh database of its own, seeded alike.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ledger } from '@tms/ledger';
import { Indexer, PostgresSearchProvider } from '@tms/search';
import { createTestDatabase, type TestDatabase, TestIssuer } from '@tms/testkit';
import autocannon from 'autocannon';
import { SERVER_NODE_FLAGS } from '../scripts/build';
import { buildAll, buildUnchainedGateway } from './build';
import { queryWithin, textFor } from './corpus';
import { cpuBetween, sampleCpu } from './cpu';
import { PgWireCounter, type WireCounts } from './pg-counter';
import { type Server, startServer } from './server-process';

const QUICK = process.env.BENCH_QUICK === '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 1 : 5));
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const RECALL_MEMORIES = Number(process.env.BENCH_RECALL_MEMORIES ?? (QUICK ? 300 : 100_000));
const LAYOUT = process.env.BENCH_DATABASE_LAYOUT === 'partitioned' ? 'partitioned' : 'plain';
/** Memories read by the get workloads (round robin), per server. */
const READ_SET = QUICK ? 20 : 500;
/** Sequential requests per workload in the counting pass (after a warm-up). */
const COUNTED = QUICK ? 5 : 100;
/**
 * Unmeasured load on each side before a workload's rounds: JIT, pools, caches, and the statement
 * shapes of group commit (a shape per batch size, prepared per connection). As long as a round:
 * with 2 s, the first timed round of a write workload still ran 10-20% slower than the later ones.
 */
const WARM_UP_SECONDS = QUICK ? 0.25 : SECONDS;
const WORKSPACES = 8;
/** Rounds of the chained-vs-unchained pair, whose sides run at once (Workload.sideBySide). */
const PAIR_ROUNDS = 5 * ROUNDS;
const PAIR_SAME_BUILD = process.env.BENCH_PAIR_SAME_BUILD === '1';
const ONLY = (process.env.BENCH_WORKLOADS ?? '').split(',').filter(Boolean);
const selected = (name: string) => ONLY.length === 0 || ONLY.some((word) => name.includes(word));

const started = performance.now();
const log = (line: string) =>
  process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

// ---- processes ---------------------------------------------------------------------------

/** kB of a `/proc/<pid>/status` field (VmRSS now, VmHWM the peak so far); 0 when unavailable. */
function procStatusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

const mib = (kb: number) => (kb / 1024).toFixed(0);

// ---- HTTP --------------------------------------------------------------------------------

interface Req {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** One side of a workload: a server and a request generator (called once per request). */
interface Side {
  label: string;
  server: Server;
  next: () => Req;
  /** Why an answer (status 200) is not the one this workload means to measure, or null. */
  check?: (answer: Answer) => string | null;
}

/** The fields of an answer that the checks read. */
interface Answer {
  errors?: unknown;
  data?: { memory?: { view?: { memory?: { id?: string } } } };
  items?: unknown[];
  status?: string;
}

interface Workload {
  name: string;
  subject: Side;
  reference: Side;
  /**
   * For a difference of a few percent (the commit chain's cost), smaller than this VM's noise:
   * - each round runs both sides at once, each with its own connections, so that the machine
   *   slowing down (rounds a minute apart differ by up to a fifth here) slows both alike;
   * - each side starts afresh (and warms up) before each round, since two processes of one build
   *   differ in rate by up to a tenth for their whole life, and runs three times the rounds;
   * - the side started first swaps each round: both clients share this process's event loop, and
   *   with one build on both sides (BENCH_PAIR_SAME_BUILD=1) the first ran ~6% slower every round.
   */
  sideBySide?: boolean;
}

async function send(url: string, req: Req): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}${req.path}`, { method: req.method, headers: req.headers, body: req.body });
  return { status: res.status, text: await res.text() };
}

async function expectOk<T = unknown>(url: string, req: Req): Promise<T> {
  const res = await send(url, req);
  if (res.status !== 200)
    throw new Error(`${req.method} ${req.path} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return JSON.parse(res.text) as T;
}

interface RoundResult {
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  failures: number;
  peakRssKb: number;
  /** CPU seconds the side's server process and Postgres spent in the round (bench/cpu.ts). */
  serverCpu: number;
  postgresCpu: number;
}

async function loadRound(side: Side, connections = CONNECTIONS): Promise<RoundResult> {
  let peakRssKb = procStatusKb(side.server.pid, 'VmRSS');
  const sampler = setInterval(() => {
    peakRssKb = Math.max(peakRssKb, procStatusKb(side.server.pid, 'VmRSS'));
  }, 100);
  try {
    const cpuBefore = sampleCpu(side.server.pid);
    const result = await autocannon({
      url: side.server.url,
      connections,
      duration: SECONDS,
      requests: [{ setupRequest: () => side.next() }],
    });
    const cpu = cpuBetween(cpuBefore, sampleCpu(side.server.pid));
    return {
      requests: result.requests.total,
      seconds: result.duration,
      p50: result.latency.p50,
      p99: result.latency.p99,
      failures: result.non2xx + result.errors + result.timeouts,
      peakRssKb,
      serverCpu: cpu.server,
      postgresCpu: cpu.postgres,
    };
  } finally {
    clearInterval(sampler);
  }
}

interface Summary {
  rps: number;
  p50: number;
  p99: number;
  failures: number;
  peakRssKb: number;
  /** CPU milliseconds per request, over all rounds: the server process's, and Postgres'. */
  serverCpuMs: number;
  postgresCpuMs: number;
}

function summarize(rounds: RoundResult[]): Summary {
  const total = (f: (r: RoundResult) => number) => rounds.reduce((sum, r) => sum + f(r), 0);
  return {
    rps: total((r) => r.requests) / total((r) => r.seconds),
    p50: total((r) => r.p50) / rounds.length,
    p99: total((r) => r.p99) / rounds.length,
    failures: total((r) => r.failures),
    peakRssKb: Math.max(...rounds.map((r) => r.peakRssKb)),
    serverCpuMs: (total((r) => r.serverCpu) * 1000) / total((r) => r.requests),
    postgresCpuMs: (total((r) => r.postgresCpu) * 1000) / total((r) => r.requests),
  };
}

/**
 * Sequential requests through servers whose Postgres traffic passes the counting proxy. Every
 * answer is checked too: a fast 200 that carries GraphQL errors or an empty recall would make
 * the timed runs measure the wrong thing.
 */
async function countStatements(counter: PgWireCounter, side: Side): Promise<WireCounts> {
  const request = async () => {
    const answer = await expectOk<Answer>(side.server.url, side.next());
    const problem = side.check?.(answer);
    if (problem) throw new Error(`${side.label}: ${problem}: ${JSON.stringify(answer).slice(0, 300)}`);
  };
  for (let i = 0; i < 3; i += 1) await request(); // warm-up: connections, type lookups
  await new Promise((resolve) => setTimeout(resolve, 50));
  counter.reset();
  for (let i = 0; i < COUNTED; i += 1) await request();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const counts = counter.snapshot();
  return {
    Q: counts.Q / COUNTED,
    P: counts.P / COUNTED,
    B: counts.B / COUNTED,
    E: counts.E / COUNTED,
    S: counts.S / COUNTED,
    H: counts.H / COUNTED,
  };
}

// ---- the run -----------------------------------------------------------------------------

interface Fixture {
  token: string;
  /** The workspaces the create workloads write into; [0] also holds the read set. */
  workspaces: { id: string; namespaceId: string }[];
  readIds: string[];
  recall: { id: string; namespaceId: string };
}

const rotate = <T>(items: readonly T[]) => {
  let i = 0;
  return () => items[i++ % items.length] as T;
};

/** A gateway and the workspaces it seeded (its own: no other gateway writes there). */
interface GatewayWithWorkspaces {
  server: Server;
  fixture: Fixture;
}

/**
 * The gateway as built and the same gateway built without commit chaining, on one fresh
 * database and in workspaces seeded alike, so that the pair differs in chaining only (not in
 * what earlier workloads wrote, nor in the database it writes to).
 */
interface ChainPair {
  chained: GatewayWithWorkspaces;
  unchained: GatewayWithWorkspaces;
}

/** The requests of every workload, against a gateway and a baseline seeded alike. */
function workloads(gateway: Server, baseline: Server, gw: Fixture, base: Fixture, chain: ChainPair): Workload[] {
  const auth = { authorization: `Bearer ${gw.token}`, 'content-type': 'application/json' };
  const gwRead = (query = '') => {
    const id = rotate(gw.readIds);
    return (): Req => ({
      method: 'GET',
      path: `/v1/memories/${id()}${query}`,
      headers: { ...auth, 'x-service-workspace': gw.workspaces[0]?.id as string },
    });
  };
  const baseRead = (() => {
    const id = rotate(base.readIds);
    return (): Req => ({
      method: 'GET',
      path: `/memories/${id()}`,
      headers: { 'x-service-workspace': base.workspaces[0]?.id as string },
    });
  })();
  const graphqlView = (() => {
    const id = rotate(gw.readIds);
    const query = `query($id: ID!) { memory(id: $id) { asOf knownAt view {
      memory { id kind generation namespaceId }
      revision { id memoryId namespaceId kind generation text status validFrom validTo recordedAt recordedUntil
                 evidenceIds supportRevisionIds }
      evidence { id } verifications { id } stale } } }`;
    return (): Req => ({
      method: 'POST',
      path: '/graphql',
      headers: { ...auth, 'x-service-workspace': gw.workspaces[0]?.id as string },
      body: JSON.stringify({ query, variables: { id: id() } }),
    });
  })();
  let seq = 0;
  const create = (fixture: Fixture, workspaceCount: number, gateway: boolean) => {
    const workspace = rotate(fixture.workspaces.slice(0, workspaceCount));
    return (): Req => {
      const ws = workspace();
      const n = seq++;
      return {
        method: 'POST',
        path: gateway ? '/v1/memories' : '/memories',
        headers: {
          ...(gateway ? auth : { 'content-type': 'application/json' }),
          'x-service-workspace': ws.id,
          'idempotency-key': `bench-${n}-${crypto.randomBytes(6).toString('hex')}`,
        },
        body: JSON.stringify({ namespace_id: ws.namespaceId, kind: 'claim', text: textFor(n), valid_from: 0 }),
      };
    };
  };
  const recall = (gateway: boolean) => {
    let q = 0;
    return (): Req => ({
      method: 'POST',
      path: gateway ? '/v1/recall' : '/recall',
      headers: {
        ...(gateway ? auth : { 'content-type': 'application/json' }),
        'x-service-workspace': gw.recall.id,
      },
      body: JSON.stringify({
        namespace_ids: [gw.recall.namespaceId],
        query: queryWithin(q++ % 256, RECALL_MEMORIES),
        budget: { max_items: 20, max_context_chars: 20_000 },
        // The baseline runs one lexical query: the gateway's lexical arm is its like. The semantic
        // arm's cost (the query's embedding, the vector search) is measured by `pnpm bench:recall`.
        ...(gateway ? { mode: 'lexical' } : {}),
      }),
    });
  };
  const g = (next: () => Req, check?: Side['check']): Side => ({ label: 'gateway', server: gateway, next, check });
  const c = (next: () => Req): Side => ({ label: 'chained', server: chain.chained.server, next });
  const u = (next: () => Req): Side => ({ label: 'unchained', server: chain.unchained.server, next });
  const b = (next: () => Req, check?: Side['check']): Side => ({ label: 'baseline', server: baseline, next, check });
  const graphqlCheck: Side['check'] = (answer) =>
    answer.errors ? 'GraphQL errors' : answer.data?.memory?.view?.memory?.id ? null : 'no memory in the answer';
  const recallCheck: Side['check'] = (answer) =>
    !answer.items?.length
      ? 'recall found nothing'
      : answer.status && answer.status !== 'complete'
        ? 'recall not complete'
        : null;
  return [
    { name: 'memories.get', subject: g(gwRead()), reference: b(baseRead) },
    // The view selects evidence and verifications, so the /v1 read it is held against asks for them too.
    {
      name: 'GraphQL memory(id) vs /v1 get',
      subject: g(graphqlView, graphqlCheck),
      reference: g(gwRead('?include_evidence=true')),
    },
    { name: 'memories.create, 1 workspace', subject: g(create(gw, 1, true)), reference: b(create(base, 1, false)) },
    {
      name: `memories.create, ${WORKSPACES} workspaces`,
      subject: g(create(gw, WORKSPACES, true)),
      reference: b(create(base, WORKSPACES, false)),
    },
    {
      name: 'memories.create, 1 workspace, chained vs unchained',
      sideBySide: true,
      subject: c(create(chain.chained.fixture, 1, true)),
      reference: u(create(chain.unchained.fixture, 1, true)),
    },
    {
      name: `memories.create, ${WORKSPACES} workspaces, chained vs unchained`,
      sideBySide: true,
      subject: c(create(chain.chained.fixture, WORKSPACES, true)),
      reference: u(create(chain.unchained.fixture, WORKSPACES, true)),
    },
    {
      name: `recall over ${RECALL_MEMORIES} memories`,
      subject: g(recall(true), recallCheck),
      reference: b(recall(false), recallCheck),
    },
  ].filter((w) => selected(w.name));
}

/** Workspaces, namespaces and memories through the gateway's public API. */
async function seedGateway(url: string, token: string, recallMemories = RECALL_MEMORIES): Promise<Fixture> {
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  /** Every answer the seeding reads names its subject: `{workspace: {id}}`, `{memory: {id}}`, ... */
  type Created = Record<string, { id: string }>;
  const post = (path: string, workspace: string | null, body: unknown) =>
    expectOk<Created>(url, {
      method: 'POST',
      path,
      headers: {
        ...auth,
        ...(workspace ? { 'x-service-workspace': workspace } : {}),
        'idempotency-key': `seed-${crypto.randomBytes(8).toString('hex')}`,
      },
      body: JSON.stringify(body),
    });
  const makeWorkspace = async (name: string) => {
    const id = (await post('/v1/workspaces', null, { name })).workspace?.id as string;
    const namespaceId = (await post('/v1/namespaces', id, { parent_id: null, name: 'bench' })).namespace?.id as string;
    return { id, namespaceId };
  };
  /** Runs `work(0..count-1)` with `writers` requests in flight. */
  const inParallel = async (count: number, writers: number, work: (i: number) => Promise<void>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: writers }, async () => {
        for (let i = next++; i < count; i = next++) await work(i);
      }),
    );
  };
  const workspaces = await Promise.all(Array.from({ length: WORKSPACES }, (_, w) => makeWorkspace(`bench-${w}`)));
  const recall = await makeWorkspace('bench-recall');
  const first = workspaces[0] as { id: string; namespaceId: string };
  const readIds: string[] = [];
  await inParallel(READ_SET, 8, async (i) => {
    const body = { namespace_id: first.namespaceId, kind: 'claim', text: textFor(i), valid_from: 0 };
    readIds.push((await post('/v1/memories', first.id, body)).memory?.id as string);
  });
  // The recall corpus, CONNECTIONS writers at a time (all into one workspace).
  const corpusStarted = performance.now();
  await inParallel(recallMemories, CONNECTIONS, async (i) => {
    await post('/v1/memories', recall.id, {
      namespace_id: recall.namespaceId,
      kind: 'claim',
      text: textFor(i),
      valid_from: 0,
    });
    if (i > 0 && i % 10_000 === 0) log(`  seeded ${i} recall memories`);
  });
  const seconds = (performance.now() - corpusStarted) / 1000;
  log(
    `  recall corpus: ${recallMemories} memories in ${seconds.toFixed(1)} s (${(recallMemories / seconds).toFixed(0)}/s)`,
  );
  return { token, workspaces, readIds, recall };
}

const BASELINE_WORKSPACES = Array.from({ length: WORKSPACES }, (_, i) => `ws_base_${i}`);

/** The same shape of data for the baseline, through its own create route (recall reads the gateway's). */
async function seedBaseline(url: string): Promise<Omit<Fixture, 'recall'>> {
  const workspaces = BASELINE_WORKSPACES.map((id, i) => ({ id, namespaceId: `ns_base_${i}` }));
  const first = workspaces[0] as { id: string; namespaceId: string };
  const readIds: string[] = [];
  for (let i = 0; i < READ_SET; i += 1) {
    const created = await expectOk<{ memory: { id: string } }>(url, {
      method: 'POST',
      path: '/memories',
      headers: { 'content-type': 'application/json', 'x-service-workspace': first.id },
      body: JSON.stringify({ namespace_id: first.namespaceId, kind: 'claim', text: textFor(i), valid_from: 0 }),
    });
    readIds.push(created.memory.id);
  }
  return { token: '', workspaces, readIds };
}

/** What a workload's reference side is, as the tables name it. */
function referenceName(workload: Workload): string {
  const label = workload.reference.label;
  return label === 'gateway' ? 'gateway /v1' : label === 'unchained' ? 'gateway, unchained' : 'bare server';
}

function pad(cells: string[], widths: number[]): string {
  return `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const rule = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [pad(header, widths), rule, ...rows.map((r) => pad(r, widths))].join('\n');
}

/**
 * Seeding wrote some 100000 rows into each database; left alone, autovacuum and the
 * checkpointer would do that work during the timed rounds of whichever workload came first, and
 * take CPU from one side of a round and not the other. So it is done before them, on both.
 */
async function settle(urls: readonly string[]): Promise<void> {
  for (const url of urls) {
    const database = await Ledger.open({ databaseUrl: url, maxConnections: 1 });
    try {
      await database.handle.db.execute('vacuum (analyze)');
      await database.handle.db.execute('checkpoint');
    } finally {
      await database.close();
    }
  }
}

async function main() {
  const runStarted = performance.now();
  log('building the gateway and the baseline (esbuild)...');
  const build = await buildAll();
  const unchainedBuild = await buildUnchainedGateway();
  const logDir = path.join(build.outDir, 'logs');
  fs.mkdirSync(logDir, { recursive: true });

  const cleanups: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    // Last in, first out; each step runs once even if Ctrl-C arrives during the final cleanup.
    for (let fn = cleanups.pop(); fn; fn = cleanups.pop())
      await fn().catch((error: unknown) => log(`cleanup: ${error}`));
  };
  // Ctrl-C still drops the databases and stops the servers.
  process.once('SIGINT', () => {
    log('interrupted; cleaning up');
    cleanup().finally(() => process.exit(130));
  });
  try {
    const gwDb: TestDatabase = await createTestDatabase('tms_bench_gw');
    cleanups.push(() => gwDb.drop());
    const baseDb: TestDatabase = await createTestDatabase('tms_bench_base');
    cleanups.push(() => baseDb.drop());
    // Both sides of the chained-vs-unchained pair write into one database, each into workspaces
    // of its own: two databases differ (with one build on both sides, the same side ran 2-5% slower
    // in run after run), one shared falls on both alike.
    const pairDb: TestDatabase = await createTestDatabase('tms_bench_pair');
    cleanups.push(() => pairDb.drop());
    const issuer = await TestIssuer.start();
    cleanups.push(() => issuer.close());

    // The operator's steps: migrate, enroll the pilot user; the search index is prepared here
    // because the indexer of this run is this process (below).
    const ledger = await Ledger.open({ databaseUrl: gwDb.url, maxConnections: 4 });
    cleanups.push(() => ledger.close());
    await ledger.migrate({ layout: LAYOUT });
    const search = new PostgresSearchProvider(ledger.handle.db);
    await search.prepare();
    const subject = 'bench-user';
    await ledger.stores.directory.enroll(issuer.sessionIssuer, subject, Date.now() / 1000);
    const pairLedger = await Ledger.open({ databaseUrl: pairDb.url, maxConnections: 1 });
    try {
      await pairLedger.migrate({ layout: LAYOUT });
      await pairLedger.stores.directory.enroll(issuer.sessionIssuer, subject, Date.now() / 1000);
    } finally {
      await pairLedger.close();
    }
    const token = await issuer.sessionToken(subject, { expiresIn: 24 * 3600 });

    const gatewayEnv = (databaseUrl: string) => ({
      ...issuer.env(),
      DATABASE_URL: databaseUrl,
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      RATE_LIMITS: 'off',
      // Indexing is not the gateway's cost: production runs the indexer as its own service.
      INDEXER: 'external',
      DATA_DIR: path.join(build.outDir, 'data'),
    });
    const baselineEnv = (databaseUrl: string, recallUrl: string) => ({
      DATABASE_URL: databaseUrl,
      RECALL_DATABASE_URL: recallUrl,
      POOL_SIZE: String(CONNECTIONS),
      WORKSPACES: BASELINE_WORKSPACES.join(','),
    });

    /** Starts a gateway and a baseline side by side; whatever started is stopped at cleanup. */
    const startPair = async (suffix: string, gatewayDbUrl: string, baselineDbUrl: string) => {
      const attempts = await Promise.allSettled([
        startServer(
          `gateway${suffix}`,
          build.bundles.gateway,
          gatewayEnv(gatewayDbUrl),
          '/readyz',
          logDir,
          SERVER_NODE_FLAGS,
        ),
        startServer(
          `baseline${suffix}`,
          build.bundles.baseline,
          baselineEnv(baselineDbUrl, gatewayDbUrl),
          '/memories/none',
          logDir,
        ),
      ]);
      for (const s of attempts) if (s.status === 'fulfilled') cleanups.push(() => s.value.stop());
      const [g, b] = attempts;
      if (g?.status !== 'fulfilled' || b?.status !== 'fulfilled') {
        throw g?.status === 'rejected' ? g.reason : b?.status === 'rejected' ? b.reason : new Error('no server');
      }
      return { gateway: g.value, baseline: b.value };
    };

    /** One side of the chain pair: the gateway as built or built without chaining (both on the pair's database). */
    const startPairSide = async (side: 'chained' | 'unchained', suffix: string, databaseUrl: string) => {
      const server = await startServer(
        `gateway-${side}${suffix}`,
        (side === 'chained' && !PAIR_SAME_BUILD ? build : unchainedBuild).bundles.gateway,
        gatewayEnv(databaseUrl),
        '/readyz',
        logDir,
        SERVER_NODE_FLAGS,
      );
      cleanups.push(() => server.stop());
      return server;
    };

    log('starting the gateway, the baseline and the chained and unchained gateways...');
    const { gateway, baseline } = await startPair('', gwDb.url, baseDb.url);
    const chainedServer = await startPairSide('chained', '', pairDb.url);
    const unchainedServer = await startPairSide('unchained', '', pairDb.url);

    log(`seeding (${RECALL_MEMORIES} recall memories through the gateway)...`);
    const [gwFixture, baseSeed] = await Promise.all([seedGateway(gateway.url, token), seedBaseline(baseline.url)]);
    const baseFixture: Fixture = { ...baseSeed, recall: gwFixture.recall };
    const chain: ChainPair = {
      chained: { server: chainedServer, fixture: await seedGateway(chainedServer.url, token, 0) },
      unchained: { server: unchainedServer, fixture: await seedGateway(unchainedServer.url, token, 0) },
    };
    const indexStarted = performance.now();
    const indexed = await new Indexer(ledger, search, { batchSize: 500 }).catchUp();
    log(`  indexed ${indexed} commits in ${((performance.now() - indexStarted) / 1000).toFixed(1)} s`);

    // Counting pass: a second gateway and baseline whose Postgres traffic passes the proxy.
    log('counting statements per operation...');
    const counter = await PgWireCounter.start(gwDb.url);
    cleanups.push(() => counter.close());
    const counted = await startPair('-counted', counter.urlFor(gwDb.url), counter.urlFor(baseDb.url));
    const countedGateway = counted.gateway;
    const countedBaseline = counted.baseline;
    const countedChained = await startPairSide('chained', '-counted', counter.urlFor(pairDb.url));
    const countedUnchained = await startPairSide('unchained', '-counted', counter.urlFor(pairDb.url));
    const counts = new Map<string, { subject: WireCounts; reference: WireCounts }>();
    try {
      for (const w of workloads(countedGateway, countedBaseline, gwFixture, baseFixture, {
        chained: { ...chain.chained, server: countedChained },
        unchained: { ...chain.unchained, server: countedUnchained },
      })) {
        counts.set(w.name, {
          subject: await countStatements(counter, w.subject),
          reference: await countStatements(counter, w.reference),
        });
      }
    } finally {
      await countedGateway.stop();
      await countedBaseline.stop();
      await countedChained.stop();
      await countedUnchained.stop();
    }

    log('settling the databases (vacuum, analyze, checkpoint)...');
    await settle([gwDb.url, baseDb.url, pairDb.url]);
    const checkpointer = await Ledger.open({ databaseUrl: gwDb.url, maxConnections: 1 });
    cleanups.push(() => checkpointer.close());
    const checkpoint = checkpointer.handle.db;

    const results: {
      workload: Workload;
      subject: Summary;
      reference: Summary;
      subjectRounds: RoundResult[];
      referenceRounds: RoundResult[];
    }[] = [];
    for (const w of workloads(gateway, baseline, gwFixture, baseFixture, chain)) {
      const rounds = w.sideBySide ? PAIR_ROUNDS : ROUNDS;
      // Side by side, the two share the load of one: the machine runs as many requests at once.
      const connections = w.sideBySide ? Math.max(1, Math.floor(CONNECTIONS / 2)) : CONNECTIONS;
      log(
        `${w.name}: ${rounds} rounds${w.sideBySide ? ', both sides at once, fresh processes each round' : ' each'}, ${SECONDS} s, ${connections} connections${w.sideBySide ? ' per side' : ''}`,
      );
      const warmUp = (side: Side) =>
        autocannon({
          url: side.server.url,
          connections,
          duration: WARM_UP_SECONDS,
          requests: [{ setupRequest: () => side.next() }],
        });
      const subjectRounds: RoundResult[] = [];
      const referenceRounds: RoundResult[] = [];
      const report = (side: Side, round: number, r: RoundResult) => {
        const cpuMs = ((r.serverCpu + r.postgresCpu) * 1000) / r.requests;
        log(
          `  ${side.label.padEnd(8)} round ${round + 1}: ${(r.requests / r.seconds).toFixed(0)} rps, p50 ${r.p50} ms, p99 ${r.p99} ms, CPU ${cpuMs.toFixed(3)} ms/request${r.failures ? `, ${r.failures} failed` : ''}`,
        );
      };
      if (w.sideBySide) {
        for (let round = 0; round < rounds; round += 1) {
          // Which side starts first swaps each round (see Workload.sideBySide).
          const sides = round % 2 === 0 ? [w.subject, w.reference] : [w.reference, w.subject];
          await Promise.all(sides.map((side) => side.server.restart()));
          await Promise.all(sides.map(warmUp));
          await checkpoint.execute('checkpoint');
          const loaded = await Promise.all(sides.map((side) => loadRound(side, connections)));
          const [s, r] = round % 2 === 0 ? loaded : [...loaded].reverse();
          subjectRounds.push(s as RoundResult);
          referenceRounds.push(r as RoundResult);
          report(w.subject, round, s as RoundResult);
          report(w.reference, round, r as RoundResult);
        }
        // Idle, their pools would still hold Postgres connections that the later workloads need
        // (the bare server's recall met "too many clients" at max_connections 100); the next
        // round of a pair starts them again.
        await Promise.all([w.subject, w.reference].map((side) => side.server.stop()));
      } else {
        for (const side of [w.subject, w.reference]) await warmUp(side);
        for (let round = 0; round < rounds; round += 1) {
          const order = [
            [w.reference, referenceRounds],
            [w.subject, subjectRounds],
          ] as const;
          // A B, then B A: a drift over the rounds (tables growing, a warming cache) falls on both sides.
          for (const [side, into] of round % 2 === 0 ? order : [...order].reverse()) {
            // Each round starts from a checkpoint, so none falls inside a timed round (they come every
            // few seconds under a write load and take CPU and I/O from whichever side is running).
            await checkpoint.execute('checkpoint');
            const r = await loadRound(side);
            into.push(r);
            report(side, round, r);
          }
        }
      }
      results.push({
        workload: w,
        subject: summarize(subjectRounds),
        reference: summarize(referenceRounds),
        subjectRounds,
        referenceRounds,
      });
    }

    const gatewayPeakKb = procStatusKb(gateway.pid, 'VmHWM');
    const baselinePeakKb = procStatusKb(baseline.pid, 'VmHWM');
    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
    const throughput = table(
      ['workload', 'gateway rps', 'p50 ms', 'p99 ms', 'reference', 'rps', 'p50 ms', 'p99 ms', 'ratio', 'failed'],
      results.map(({ workload, subject, reference }) => [
        workload.name,
        fmt(subject.rps),
        fmt(subject.p50),
        fmt(subject.p99),
        referenceName(workload),
        fmt(reference.rps),
        fmt(reference.p50),
        fmt(reference.p99),
        `${(subject.rps / reference.rps).toFixed(2)}x`,
        String(subject.failures + reference.failures),
      ]),
    );
    const cpuMs = (summary: Summary) => summary.serverCpuMs + summary.postgresCpuMs;
    const cpuTable = table(
      ['workload', 'gateway server', 'Postgres', 'total', 'reference server', 'Postgres', 'total', 'gateway/reference'],
      results.map(({ workload, subject, reference }) => [
        workload.name,
        subject.serverCpuMs.toFixed(3),
        subject.postgresCpuMs.toFixed(3),
        cpuMs(subject).toFixed(3),
        reference.serverCpuMs.toFixed(3),
        reference.postgresCpuMs.toFixed(3),
        cpuMs(reference).toFixed(3),
        `${(cpuMs(subject) / cpuMs(reference)).toFixed(3)}x`,
      ]),
    );
    // Side by side, both sides meet the same moment of the machine in a round, so each round gives
    // one ratio; their median is what a round disturbed on one side only cannot move.
    const median = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const middle = Math.floor(sorted.length / 2);
      return sorted.length % 2
        ? (sorted[middle] as number)
        : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
    };
    const pairRounds = results
      .filter(({ workload }) => workload.sideBySide)
      .map(({ workload, subjectRounds, referenceRounds }) => {
        const rps = subjectRounds.map((s, i) => {
          const r = referenceRounds[i] as RoundResult;
          return s.requests / s.seconds / (r.requests / r.seconds);
        });
        const cpu = subjectRounds.map((s, i) => {
          const r = referenceRounds[i] as RoundResult;
          return (s.serverCpu + s.postgresCpu) / s.requests / ((r.serverCpu + r.postgresCpu) / r.requests);
        });
        const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
        return `${workload.name}: rps ratio by round ${list(rps)} (median ${median(rps).toFixed(2)}x); CPU per request ${list(cpu)} (median ${median(cpu).toFixed(3)}x)`;
      });
    const perOp = (c: WireCounts) => [fmt(c.Q + c.E), fmt(c.Q + c.S + c.H), fmt(c.P)] as [string, string, string];
    const statements = table(
      [
        'workload',
        'gateway statements',
        'round trips',
        'parses',
        'reference statements',
        'round trips',
        'parses',
        'gateway peak RSS MiB',
        'reference peak RSS MiB',
      ],
      results.map(({ workload, subject, reference }) => {
        const c = counts.get(workload.name);
        return [
          workload.name,
          ...(c ? perOp(c.subject) : ['?', '?', '?']),
          ...(c ? perOp(c.reference) : ['?', '?', '?']),
          mib(subject.peakRssKb),
          mib(reference.peakRssKb),
        ];
      }),
    );
    const versionRows = (await ledger.handle.db.execute('show server_version')) as unknown as {
      server_version?: string;
    }[];
    const pgVersion = versionRows[0]?.server_version ?? '?';
    const lines = [
      '',
      `machine: ${os.cpus().length} x ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, PostgreSQL ${pgVersion} at ${new URL(gwDb.url).host}, ${LAYOUT} layout`,
      `load: autocannon, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per side, alternating reference and gateway (A B B A), a checkpoint before each round (the chained-vs-unchained pair: ${PAIR_ROUNDS} rounds with both sides at once, ${Math.floor(CONNECTIONS / 2)} connections each, fresh processes each round, the side started first swapped each round${PAIR_SAME_BUILD ? '; BENCH_PAIR_SAME_BUILD=1: the unchained build on both sides' : ''}); rps over all rounds, latencies the mean of the rounds' percentiles`,
      `gateway: compiled (esbuild), one node process (${SERVER_NODE_FLAGS.join(' ')}), NODE_ENV=production, RATE_LIMITS=off, session JWT (RS256) on every request; bare server: node:http + postgres.js, pool ${CONNECTIONS}`,
      '',
      throughput,
      '',
      'CPU milliseconds per request over all rounds (user + system, from /proc): the server process, and the Postgres backends serving its connections',
      cpuTable,
      ...(pairRounds.length ? ['', 'side by side, round by round (subject / reference):', ...pairRounds] : []),
      '',
      `per operation, counted on the wire (sequential, ${COUNTED} requests): statements = Q + Execute, round trips = Q + Sync + Flush, parses = Parse messages`,
      statements,
      '',
      `peak RSS over the whole run (VmHWM): gateway ${mib(gatewayPeakKb)} MiB, bare server ${mib(baselinePeakKb)} MiB`,
      `total time ${((performance.now() - runStarted) / 1000).toFixed(0)} s`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    // The same figures for tools (docs/performance.md is filled from a quiet run).
    fs.writeFileSync(
      path.join(build.outDir, 'results.json'),
      `${JSON.stringify(
        {
          quick: QUICK,
          seconds: SECONDS,
          connections: CONNECTIONS,
          rounds: ROUNDS,
          recallMemories: RECALL_MEMORIES,
          postgres: pgVersion,
          layout: LAYOUT,
          workloads: results.map(({ workload, subject, reference }) => ({
            name: workload.name,
            reference: referenceName(workload),
            gateway: subject,
            referenceResult: reference,
            ratio: subject.rps / reference.rps,
            cpuRatio: cpuMs(subject) / cpuMs(reference),
            perOperation: counts.get(workload.name),
          })),
          peakRssKb: { gateway: gatewayPeakKb, baseline: baselinePeakKb },
        },
        null,
        2,
      )}\n`,
    );
    log(`figures also in ${path.relative(process.cwd(), path.join(build.outDir, 'results.json'))}`);
  } finally {
    await cleanup();
  }
}

await main();
