/**
 * A million memories (issue 41, item 6): the curve of one workspace on Postgres as it grows,
 * loaded through `svc import` as users load it. Usage:
 *
 *   pnpm --filter @tms/bench scale [sizes] [--reuse] [--keep]
 *
 * `sizes`: comma-separated memory counts (default 10000,100000,1000000), each in a database of
 * its own (`tms_bench_scale_<size>`, bench/scale-state.ts; dropped and created anew). `--keep` leaves each database
 * loaded (its ids in `$TMPDIR/tms-bench-scale-<size>.json`); `--reuse` measures a kept database
 * again without loading it (after a change to the search code, say) and keeps it.
 *
 * Per size:
 * 1. Bootstrap with the CLI alone (`svc migrate`, `svc admin workspace create`, a root namespace,
 *    a service key with read, observe and admin granted on it), then 1,000 namespaces under the
 *    root over `POST /v1/namespaces`: one large (a tenth of the memories: 100,000 at a million),
 *    999 sharing the rest (about 900 each at a million). `SCALE_LARGE_SHARE=2` gives the large
 *    one half instead (bench/scale-state.ts): at 200000, the million's large namespace in minutes.
 * 2. `svc import` of `size` lines (bench/corpus.ts `noteFor`: notes with skewed names and topics
 *    and rare words; every EVIDENCE_EVERY-th line cites evidence of its own), streamed on stdin,
 *    with no gateway running: the import rate.
 * 3. `analyze`, then the gateway as `pnpm start` runs it (dist/bin/gateway.mjs, its embedded
 *    indexer, `EMBEDDER=none`, `RATE_LIMITS=off`): the lexical indexer's catch-up from 0 to the
 *    head (read from recall's `indexed_sequence`), then `analyze` again and the term index's
 *    pending list merged (`gin_clean_pending_list`), as autovacuum would after a bulk load.
 * 4. The write rate without an import: 16 concurrent `POST /v1/memories` for SCALE_POST_SECONDS
 *    (default 20) into a workspace of their own, and the indexer's rate against it.
 * 5. Lexical recall (`POST /v1/recall`, `mode: "lexical"`, 20 items) p50/p95, one client, over a
 *    namespace of the 999, the large namespace, and the whole workspace (the root and its
 *    descendants), each query followed by a `memories.get` of a memory recalled before.
 * 6. The database's size.
 *
 * `SCALE_CPU_PROF=dir` runs the measuring gateway with `node --cpu-prof` writing there.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_URL } from '@tms/testkit';
import { REPO_ROOT, SERVER_NODE_FLAGS } from '../scripts/build';
import { noteFor, noteQuery } from './corpus';
import { LARGE_SHARE, scaleDatabase, scaleStateFile } from './scale-state';
import { type Server, startServer } from './server-process';

const args = process.argv.slice(2);
const SIZES = (args.find((a) => !a.startsWith('--')) ?? '10000,100000,1000000').split(',').map(Number);
const REUSE = args.includes('--reuse');
const KEEP = REUSE || args.includes('--keep');
/** Only the recall latencies (a reused database, re-measured after a change). */
const RECALL_ONLY = args.includes('--recall-only');
const NAMESPACES = 1000;
const EVIDENCE_EVERY = Number(process.env.SCALE_EVIDENCE_EVERY ?? 4);
const POST_SECONDS = Number(process.env.SCALE_POST_SECONDS ?? 20);
const POST_CONCURRENCY = 16;
const QUERIES = Number(process.env.SCALE_QUERIES ?? 200);
const WARM_UP = 20;
/** Longest a scope's queries may take (a whole workspace of a million is slow): fewer are asked. */
const SCOPE_SECONDS = Number(process.env.SCALE_SCOPE_SECONDS ?? 180);
const MAX_ITEMS = 20;
const CPU_PROF = process.env.SCALE_CPU_PROF;
const SVC = path.join(REPO_ROOT, 'dist/bin/svc.mjs');

const log = (line: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** psql, unaligned and tuples only: the admin statements and the size queries. */
function psql(url: string, statement: string): string {
  const run = spawnSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-Atc', statement], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`psql: ${statement}: ${run.stderr}`);
  return run.stdout.trim();
}

/** A `svc` command as an operator runs it; its stdout. */
function svc(databaseUrl: string, command: string[]): string {
  const run = spawnSync(process.execPath, ['--enable-source-maps', SVC, ...command], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, USER: 'bench-operator' },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`svc ${command.join(' ')}: exit ${run.status}: ${run.stderr}`);
  return run.stdout.trim();
}

/**
 * A workspace, a root namespace and a service key granted `capabilities` on it (and its
 * subtree), made with the CLI alone as an operator without an identity provider makes them.
 */
function bootstrap(url: string, name: string, namespaceName: string, capabilities: string) {
  const workspace = svc(url, ['admin', 'workspace', 'create', '--name', name]);
  const namespace = svc(url, ['admin', 'namespace', 'create', '--workspace', workspace, '--name', namespaceName]);
  const key = svc(url, [
    ...['admin', 'service-key', 'issue', '--workspace', workspace, '--name', `${namespaceName}-bench`],
    ...['--capabilities', capabilities, '--namespaces', namespace, '--grant'],
  ]);
  return { workspace, namespace, key };
}

class Api {
  constructor(
    readonly url: string,
    private readonly key: string,
    private readonly workspace: string,
  ) {}

  async call(method: 'GET' | 'POST', route: string, body?: unknown): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.key}`,
      'x-service-workspace': this.workspace,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method === 'POST' && route !== '/v1/recall') headers['idempotency-key'] = crypto.randomUUID();
    const init = { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) };
    // A kept-alive connection the gateway closed while the bench was busy elsewhere (prewarming)
    // fails the next call at once: sent again (with the same idempotency key), it is answered.
    const response = await fetch(`${this.url}${route}`, init).catch(() => fetch(`${this.url}${route}`, init));
    const text = await response.text();
    if (!response.ok) {
      throw new Error(
        `${method} ${route}: ${response.status} ${response.headers.get('x-error-detail') ?? text.slice(0, 300)}`,
      );
    }
    return JSON.parse(text);
  }
}

/** A loaded database: what the measuring runs need to find their way in it. */
interface Loaded {
  size: number;
  database: string;
  workspace: string;
  key: string;
  root: string;
  large: string;
  /** The 999 other namespaces, in the order lines are dealt to them. */
  small: string[];
  head: number;
  import: { seconds: number; rate: number; committed: number; evidence: number };
  /** The indexer's catch-up from 0, once measured (a reused database is caught up already). */
  index?: {
    seconds: number;
    commits_per_second: number;
    memories_per_second: number;
    steady_commits_per_second: number;
    steady_memories_per_second: number;
  };
}

/** Line i's namespace: every LARGE_SHARE-th line to the large one, the others dealt in turn to the 999. */
const namespaceOf = (i: number, large: string, small: readonly string[]) =>
  i % LARGE_SHARE === 0 ? large : (small[(i - Math.floor(i / LARGE_SHARE) - 1) % small.length] as string);

function lineFor(i: number, namespaceId: string): string {
  const text = noteFor(i);
  const line: Record<string, unknown> = {
    import_key: `scale-${i}`,
    namespace_id: namespaceId,
    kind: i % 3 === 0 ? 'claim' : 'episode',
    text,
    valid_from: 1_600_000_000 + i * 60,
  };
  if (i % EVIDENCE_EVERY === 0) {
    const excerpt = `Ticket ${i}, as written by the customer: ${text}`;
    line.evidence = {
      source_locator: `crm://tickets/${i}`,
      content_root_sha256: crypto.createHash('sha256').update(excerpt).digest('hex'),
      excerpt,
    };
  }
  return JSON.stringify(line);
}

function gatewayEnv(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { DATABASE_URL: url, HOST: '127.0.0.1', RATE_LIMITS: 'off', EMBEDDER: 'none', ...extra };
}

async function withGateway<T>(
  name: string,
  url: string,
  logDir: string,
  extra: Record<string, string>,
  work: (server: Server) => Promise<T>,
  flags: readonly string[] = SERVER_NODE_FLAGS,
): Promise<T> {
  const server = await startServer(
    name,
    path.join(REPO_ROOT, 'dist/bin/gateway.mjs'),
    gatewayEnv(url, extra),
    '/readyz',
    logDir,
    flags,
  );
  try {
    return await work(server);
  } finally {
    await server.stop();
  }
}

/** `svc import` of `size` lines streamed on stdin; its JSON totals, progress forwarded every 30 s. */
async function runImport(url: string, workspace: string, size: number, large: string, small: string[]) {
  const child = spawn(process.execPath, ['--enable-source-maps', SVC, 'import', '--workspace', workspace, '-'], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: url, USER: 'bench-operator' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderrTail = '';
  let lastForward = 0;
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    stderrTail = (stderrTail + d.toString()).slice(-4000);
    const lines = stderrTail.trimEnd().split('\n');
    if (Date.now() - lastForward > 30_000) {
      lastForward = Date.now();
      log(`  svc import: ${lines[lines.length - 1]}`);
    }
  });
  const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
  const started = performance.now();
  for (let i = 0; i < size; i += 1000) {
    const chunk: string[] = [];
    for (let k = i; k < Math.min(size, i + 1000); k += 1) chunk.push(lineFor(k, namespaceOf(k, large, small)));
    if (!child.stdin.write(`${chunk.join('\n')}\n`)) await once(child.stdin, 'drain');
  }
  child.stdin.end();
  const code = await closed;
  const wall = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`svc import exited ${code}: ${stderrTail}`);
  const totals = JSON.parse(stdout) as { committed: number; seconds: number; lines: number };
  return { ...totals, wall };
}

/** The lexical arm's indexed sequence, as recall reports it. */
async function indexedSequence(api: Api, namespaceId: string): Promise<number> {
  const answer = await api.call('POST', '/v1/recall', {
    namespace_ids: [namespaceId],
    query: 'catch up probe',
    mode: 'lexical',
    budget: { max_items: 1 },
  });
  return answer.indexed_sequence as number;
}

/** Seconds until the lexical index reaches `head`, progress every 30 s. */
async function catchUp(api: Api, namespaceId: string, head: number): Promise<number> {
  const started = performance.now();
  let lastLog = started;
  for (;;) {
    const indexed = await indexedSequence(api, namespaceId);
    if (indexed >= head) return (performance.now() - started) / 1000;
    if (performance.now() - lastLog > 30_000) {
      lastLog = performance.now();
      const seconds = (lastLog - started) / 1000;
      log(`  indexed ${indexed}/${head} commits after ${seconds.toFixed(0)} s (${(indexed / seconds).toFixed(0)}/s)`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function headOf(url: string, workspace: string): number {
  return Number(psql(url, `select coalesce(max(sequence), 0) from commits where workspace_id = '${workspace}'`));
}

async function load(size: number, logDir: string): Promise<Loaded> {
  const database = scaleDatabase(size);
  psql(ADMIN_URL, `drop database if exists ${database} with (force)`);
  psql(ADMIN_URL, `create database ${database}`);
  const url = databaseUrl(database);
  svc(url, ['migrate']);
  const { workspace, namespace: root, key } = bootstrap(url, `scale ${size}`, 'all', 'read,observe,admin');
  // The namespaces over the API, 8 at a time; no indexer runs during the load.
  const namespaces = await withGateway('gateway-setup', url, logDir, { INDEXER: 'external' }, async (server) => {
    const api = new Api(server.url, key, workspace);
    const ids: string[] = new Array(NAMESPACES);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < NAMESPACES; i = next++) {
          const name = i === 0 ? 'large' : `team-${String(i).padStart(3, '0')}`;
          const answer = await api.call('POST', '/v1/namespaces', { parent_id: root, name });
          ids[i] = (answer.namespace as { id: string }).id;
        }
      }),
    );
    return ids;
  });
  const [large, ...small] = namespaces as [string, ...string[]];
  log(`${size}: ${workspace} bootstrapped with svc, ${NAMESPACES} namespaces created; svc import of ${size} lines...`);
  const imported = await runImport(url, workspace, size, large, small);
  if (imported.committed !== size) throw new Error(`svc import committed ${imported.committed} of ${size} lines`);
  const rate = imported.committed / imported.seconds;
  log(
    `${size}: svc import committed ${imported.committed} lines in ${imported.seconds.toFixed(1)} s: ${rate.toFixed(0)}/s`,
  );
  const loaded: Loaded = {
    size,
    database,
    workspace,
    key,
    root,
    large,
    small,
    head: headOf(url, workspace),
    import: {
      seconds: round(imported.seconds),
      rate: Math.round(rate),
      committed: imported.committed,
      evidence: Math.ceil(size / EVIDENCE_EVERY),
    },
  };
  fs.writeFileSync(scaleStateFile(size), JSON.stringify(loaded));
  return loaded;
}

/** The documents of a scope, as line numbers (the generator is deterministic). */
function linesIn(size: number, loaded: Loaded, namespaceId: string): number[] {
  const found: number[] = [];
  for (let i = 0; i < size; i += 1) if (namespaceOf(i, loaded.large, loaded.small) === namespaceId) found.push(i);
  return found;
}

interface Latency {
  p50: number;
  p95: number;
  items: number;
}

async function measureRecall(api: Api, loaded: Loaded, scope: 'namespace' | 'large' | 'workspace') {
  const namespaceId =
    scope === 'namespace' ? (loaded.small[0] as string) : scope === 'large' ? loaded.large : loaded.root;
  const lines = scope === 'workspace' ? null : linesIn(loaded.size, loaded, namespaceId);
  const scopeSize = lines ? lines.length : loaded.size;
  const pick = (n: number) => (lines ? (lines[n % lines.length] as number) : n % loaded.size);
  const body = (q: number) => ({
    namespace_ids: [namespaceId],
    include_descendants: scope === 'workspace',
    query: noteQuery(q, pick(q * 7919 + 13), pick(q * 104729 + 7)),
    mode: 'lexical',
    budget: { max_items: MAX_ITEMS, max_context_chars: 100_000 },
  });
  const recalled: string[] = [];
  for (let q = 0; q < WARM_UP; q += 1) {
    const answer = await api.call('POST', '/v1/recall', body(100_000 + q));
    for (const item of answer.items as { memory: { id: string } }[]) recalled.push(item.memory.id);
  }
  const recallMs: number[] = [];
  /** By query class (bench/corpus.ts `noteQuery`): two rare words, or a person, a topic and a rare word. */
  const classMs: [number[], number[]] = [[], []];
  const getMs: number[] = [];
  let items = 0;
  const statuses = new Map<string, number>();
  const until = performance.now() + SCOPE_SECONDS * 1000;
  let asked = 0;
  for (let q = 0; q < QUERIES && performance.now() < until; q += 1) {
    asked += 1;
    let started = performance.now();
    const answer = await api.call('POST', '/v1/recall', body(q));
    recallMs.push(performance.now() - started);
    classMs[q % 2]?.push(performance.now() - started);
    statuses.set(answer.status as string, (statuses.get(answer.status as string) ?? 0) + 1);
    const found = answer.items as { memory: { id: string } }[];
    items += found.length;
    for (const item of found) recalled.push(item.memory.id);
    const id = recalled[(q * 31) % recalled.length] as string;
    started = performance.now();
    await api.call('GET', `/v1/memories/${id}`);
    getMs.push(performance.now() - started);
  }
  recallMs.sort((a, b) => a - b);
  getMs.sort((a, b) => a - b);
  const recall: Latency = {
    p50: round(percentile(recallMs, 50)),
    p95: round(percentile(recallMs, 95)),
    items: round(items / asked),
  };
  const get: Latency = { p50: round(percentile(getMs, 50)), p95: round(percentile(getMs, 95)), items: 1 };
  const [rare, common] = classMs.map((ms) => {
    ms.sort((a, b) => a - b);
    return { p50: round(percentile(ms, 50)), p95: round(percentile(ms, 95)) };
  }) as [{ p50: number; p95: number }, { p50: number; p95: number }];
  log(
    `  recall over ${scope} (${scopeSize} memories), ${asked} queries: p50 ${recall.p50} ms, p95 ${recall.p95} ms (rare words ${rare.p50}/${rare.p95}, with common words ${common.p50}/${common.p95}), ${recall.items} items; memories.get p50 ${get.p50} ms, p95 ${get.p95} ms; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
  );
  return { scope, memories: scopeSize, queries: asked, recall, rare_words: rare, common_words: common, get };
}

/** POST /v1/memories by 16 clients into a workspace of their own; memories a second. */
async function postRate(url: string, server: Server) {
  const { workspace, namespace, key } = bootstrap(url, 'posted', 'posted', 'read,observe');
  const api = new Api(server.url, key, workspace);
  let serial = 0;
  let head = 0;
  const post = async () => {
    const i = serial++;
    const answer = await api.call('POST', '/v1/memories', {
      namespace_id: namespace,
      kind: 'episode',
      text: noteFor(i),
      valid_from: 1_600_000_000 + i,
    });
    head = Math.max(head, (answer.commit as { sequence: number }).sequence);
  };
  for (let i = 0; i < 300; i += POST_CONCURRENCY) await Promise.all(Array.from({ length: POST_CONCURRENCY }, post));
  let posts = 0;
  const started = performance.now();
  const until = started + POST_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: POST_CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await post();
        posts += 1;
      }
    }),
  );
  return { rate: posts / ((performance.now() - started) / 1000), head, workspace, namespace, key };
}

async function measure(loaded: Loaded, logDir: string) {
  const url = databaseUrl(loaded.database);
  const { size } = loaded;
  psql(url, 'analyze');
  const gatewayStarted = performance.now();
  const flags = CPU_PROF ? [...SERVER_NODE_FLAGS, '--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : SERVER_NODE_FLAGS;
  return withGateway(
    `gateway-${size}`,
    url,
    logDir,
    {},
    async (server) => {
      const api = new Api(server.url, loaded.key, loaded.workspace);
      // Timed from the gateway's start (its embedded indexer starts with it), and from its first
      // answer on (the indexer's own pace, without the process's start).
      const ready = performance.now();
      const indexedAtReady = await indexedSequence(api, loaded.large);
      await catchUp(api, loaded.large, loaded.head);
      const done = performance.now();
      const seconds = (done - gatewayStarted) / 1000;
      if (!loaded.index) {
        const steady = (loaded.head - indexedAtReady) / ((done - ready) / 1000);
        loaded.index = {
          seconds: round(seconds),
          commits_per_second: Math.round(loaded.head / seconds),
          memories_per_second: Math.round(loaded.size / seconds),
          steady_commits_per_second: Math.round(steady),
          steady_memories_per_second: Math.round((steady * loaded.size) / loaded.head),
        };
        fs.writeFileSync(scaleStateFile(size), JSON.stringify(loaded));
        log(
          `${size}: the embedded lexical indexer caught up from 0 to ${loaded.head} commits (${loaded.size} memories) in ${loaded.index.seconds} s from the gateway's start: ${loaded.index.commits_per_second} commits/s, ${loaded.index.memories_per_second} memories/s (from its first answer: ${loaded.index.steady_commits_per_second} commits/s, ${loaded.index.steady_memories_per_second} memories/s)`,
        );
      } else
        log(
          `${size}: caught up in ${seconds.toFixed(1)} s from the gateway's start (the catch-up from 0: ${loaded.index.seconds} s)`,
        );
      const index = loaded.index;
      // What autovacuum does after a bulk load, which this machine's Postgres runs without: the
      // statistics, and the term index's pending list merged into the index (`fastupdate`: up
      // to 4 MB of entries every search would otherwise read through).
      psql(url, 'analyze');
      psql(url, "select gin_clean_pending_list('search.documents_tsv'::regclass)");

      // The write rate without an import, and the indexer behind it.
      let posted = { rate: Number.NaN, lag: Number.NaN };
      if (!RECALL_ONLY) {
        const run = await postRate(url, server);
        const lag = await catchUp(new Api(server.url, run.key, run.workspace), run.namespace, run.head);
        posted = { rate: run.rate, lag };
        log(
          `${size}: POST /v1/memories, ${POST_CONCURRENCY} at once: ${run.rate.toFixed(0)}/s; the index caught up ${lag.toFixed(1)} s after the last`,
        );
      }

      // The search tables and their indexes read once into the operating system's cache, as a
      // deployment serving recall keeps them (its RAM permitting): otherwise the first queries
      // of a scope read their pages from disk, which measures the disk.
      psql(url, 'create extension if not exists pg_prewarm');
      psql(
        url,
        "select sum(pg_prewarm(c.oid, 'prefetch')) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'search' and c.relkind in ('r', 'i')",
      );
      const scopes = [];
      for (const scope of ['namespace', 'large', 'workspace'] as const)
        scopes.push(await measureRecall(api, loaded, scope));
      const databaseBytes = Number(psql(url, 'select pg_database_size(current_database())'));
      const searchBytes = Number(
        psql(
          url,
          "select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'search' and c.relkind = 'r'",
        ),
      );
      log(
        `${size}: database ${(databaseBytes / 2 ** 20).toFixed(0)} MiB, of which the search schema ${(searchBytes / 2 ** 20).toFixed(0)} MiB`,
      );
      return {
        size,
        namespaces: NAMESPACES,
        large_namespace: Math.ceil(size / LARGE_SHARE),
        import: loaded.import,
        index,
        post_per_second: Math.round(posted.rate),
        index_to_post_ratio: round(index.memories_per_second / posted.rate, 2),
        steady_index_to_post_ratio: round(index.steady_memories_per_second / posted.rate, 2),
        index_lag_after_posts_seconds: round(posted.lag, 2),
        recall: scopes,
        database_mib: Math.round(databaseBytes / 2 ** 20),
        search_mib: Math.round(searchBytes / 2 ** 20),
      };
    },
    flags,
  );
}

async function main(): Promise<void> {
  const built = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/ensure-built.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('scripts/ensure-built.mjs failed');
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-scale-logs-'));
  log(`gateway logs in ${logDir}`);
  for (const size of SIZES) {
    let loaded: Loaded;
    if (REUSE) {
      if (!fs.existsSync(scaleStateFile(size)))
        throw new Error(`--reuse: no ${scaleStateFile(size)}; run with --keep first`);
      loaded = JSON.parse(fs.readFileSync(scaleStateFile(size), 'utf8'));
      log(`${size}: reusing ${loaded.database} (${loaded.workspace}, head ${loaded.head})`);
    } else loaded = await load(size, logDir);
    try {
      const result = await measure(loaded, logDir);
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } finally {
      if (!KEEP) {
        psql(ADMIN_URL, `drop database if exists ${loaded.database} with (force)`);
        fs.rmSync(scaleStateFile(size), { force: true });
      }
    }
  }
}

await main();
