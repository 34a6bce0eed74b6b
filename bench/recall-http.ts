/**
 * Recall quality and latency over HTTP (`pnpm bench:recall --http`): what users call. The gateway
 * runs as `pnpm start` runs it (dist/bin/gateway.mjs built by scripts/ensure-built.mjs, the same
 * node flags, the embedded indexer, the builtin embedder), on a fresh PGlite data directory or a
 * fresh Postgres database; the split is written through `/v1` and every question asked through
 * `POST /v1/recall` by one client, one at a time.
 *
 * Phases per ledger, each on a gateway process of its own:
 * 1. the turns written with `EMBEDDER=none` (the write rate with the semantic arm off), into a
 *    workspace of their own; again after phase 2, so neither warm-up nor growth favours a side;
 * 2. the turns written with `EMBEDDER=builtin` (the rate with it on), then the semantic arm's
 *    catch-up read from recall's own `indexed_sequence` (texts embedded per second); the
 *    workspaces written with the arm off are embedded first, before phase 2 and before phase 3,
 *    so that no backlog of theirs runs while something is timed;
 * 3. on Postgres, `vacuum (analyze)` (this machine runs no autovacuum); then per mode, a fresh
 *    gateway (no query vector cached), a warm-up of 20 recalls that share no text with the
 *    questions, then every question.
 *
 * Each mode also reports the CPU time per recall of each process taking part (recallCpu).
 *
 * `RECALL_HTTP_CPU_PROF=dir` starts every gateway with `node --cpu-prof`, its profile written there.
 *
 * `RATE_LIMITS=off`: the default budget (1200 calls a minute per principal) is below the
 * bench's pace. `hybrid-rrf` is not asked: the fusion is the server's, not a request's.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ledger } from '@tms/ledger';
import { createTestDatabase, type TestDatabase, TestIssuer } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { REPO_ROOT, SERVER_NODE_FLAGS } from '../scripts/build';
import { type CpuSample, sampleCpu, secondsBetween } from './cpu';
import {
  type Conversation,
  type LedgerKind,
  type LedgerRun,
  MAX_ITEMS,
  percentile,
  type RecallCpu,
  Scoreboard,
  type Turn,
  type WritePhase,
} from './locomo';
import { type Server, startServer } from './server-process';

const WRITE_CONCURRENCY = 8;
const WARM_UP_RECALLS = 20;
/** Longest wait for an arm to catch up after the writes (the builtin model embeds tens of texts a second). */
const CATCH_UP_LIMIT_MS = 30 * 60_000;

type HttpMode = 'lexical' | 'semantic' | 'hybrid';

class Api {
  constructor(
    readonly url: string,
    private readonly token: string,
  ) {}

  async call(method: 'GET' | 'POST', route: string, body: unknown, workspace: string | null) {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (workspace) headers['x-service-workspace'] = workspace;
    if (method === 'POST' && route !== '/v1/recall') headers['idempotency-key'] = crypto.randomUUID();
    const response = await fetch(`${this.url}${route}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) {
      throw new Error(
        `${method} ${route}: ${response.status} ${text.slice(0, 300)} ${response.headers.get('x-error-detail') ?? ''}`,
      );
    }
    return JSON.parse(text);
  }
}

/** A ledger the gateways below share: a fresh Postgres database or PGlite data directory, migrated, the bench user enrolled. */
async function prepareLedger(kind: LedgerKind, issuer: TestIssuer, subject: string) {
  let database: TestDatabase | null = null;
  let dataDir: string | null = null;
  let ledger: Ledger;
  if (kind === 'postgres') {
    database = await createTestDatabase('tms_bench_recall_http');
    ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: 2 });
  } else {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-recall-http-'));
    ledger = await Ledger.open({ dataDir: path.join(dataDir, 'pglite') });
  }
  try {
    await ledger.migrate();
    await ledger.stores.directory.enroll(issuer.sessionIssuer, subject, Date.now() / 1000);
  } finally {
    // The embedded ledger allows one process: the gateway opens it next.
    await ledger.close();
  }
  return {
    env: (database ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir as string }) as Record<string, string>,
    /**
     * Planner statistics for what the writes loaded, before anything is asked: a Postgres
     * deployment's autovacuum keeps them, and this machine's runs none. The embedded ledger keeps
     * its own (EmbeddedStatistics, in the gateway).
     */
    async analyze() {
      if (!database) return;
      const ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: 1 });
      try {
        await ledger.handle.db.execute(sql`vacuum (analyze)`);
      } finally {
        await ledger.close();
      }
    },
    async drop() {
      await database?.drop();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every turn written (one evidence row and one memory citing it, 8 at a time) into a new workspace. */
async function writeTurns(api: Api, label: string, conversations: Conversation[]) {
  const ws = (await api.call('POST', '/v1/workspaces', { name: `locomo-http-${label}` }, null)).workspace.id as string;
  const jobs: { namespaceId: string; sampleId: string; turn: Turn }[] = [];
  const namespaceOf = new Map<string, string>();
  for (const c of conversations) {
    const ns = (await api.call('POST', '/v1/namespaces', { parent_id: null, name: c.sampleId }, ws)).namespace
      .id as string;
    namespaceOf.set(c.sampleId, ns);
    for (const turn of c.turns) jobs.push({ namespaceId: ns, sampleId: c.sampleId, turn });
  }
  const turnOfMemory = new Map<string, Turn>();
  const memorySequences: number[] = [];
  let head = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WRITE_CONCURRENCY }, async () => {
      for (let i = next++; i < jobs.length; i = next++) {
        const { namespaceId, sampleId, turn } = jobs[i] as (typeof jobs)[number];
        const evidence = await api.call(
          'POST',
          '/v1/evidence',
          {
            namespace_id: namespaceId,
            source_locator: `locomo://${sampleId}/${turn.diaId}`,
            content_root_sha256: crypto.createHash('sha256').update(turn.text).digest('hex'),
            excerpt: turn.text,
          },
          ws,
        );
        const created = await api.call(
          'POST',
          '/v1/memories',
          {
            namespace_id: namespaceId,
            kind: 'episode',
            text: turn.text,
            valid_from: turn.validFrom,
            evidence_ids: [evidence.evidence.id],
          },
          ws,
        );
        turnOfMemory.set(created.memory.id, turn);
        memorySequences.push(created.commit.sequence);
        head = Math.max(head, created.commit.sequence);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { ws, namespaceOf, turnOfMemory, memorySequences, head, seconds, rate: jobs.length / seconds };
}

type Written = Awaited<ReturnType<typeof writeTurns>>;

/** The sequence an arm (or both, `hybrid`) has indexed, as recall reports it. */
async function indexedSequence(api: Api, ws: string, namespaceId: string, mode: HttpMode): Promise<number> {
  const answer = await api.call(
    'POST',
    '/v1/recall',
    { namespace_ids: [namespaceId], query: 'catch up probe', mode, budget: { max_items: 1 } },
    ws,
  );
  return answer.indexed_sequence as number;
}

async function waitForIndex(api: Api, ws: string, namespaceId: string, mode: HttpMode, head: number) {
  const started = performance.now();
  while ((await indexedSequence(api, ws, namespaceId, mode)) < head) {
    if (performance.now() - started > CATCH_UP_LIMIT_MS) throw new Error(`the ${mode} index did not catch up`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return (performance.now() - started) / 1000;
}

/**
 * CPU milliseconds per recall since `before`, by process: the gateway, the builtin model's child,
 * the Postgres backends serving them (none on PGlite, whose database runs in the gateway) and
 * this client. Their sum against the latency shows how far the work shares the machine's cores.
 */
function recallCpu(
  gatewayPid: number,
  before: { processes: CpuSample; client: NodeJS.CpuUsage },
  recalls: number,
): RecallCpu {
  const after = sampleCpu(gatewayPid);
  const ms = (seconds: number) => (seconds * 1000) / recalls;
  const client = process.cpuUsage(before.client);
  return {
    gateway: ms(secondsBetween(before.processes.server, after.server, (pid) => pid === gatewayPid)),
    model: ms(secondsBetween(before.processes.server, after.server, (pid) => pid !== gatewayPid)),
    postgres: ms(secondsBetween(before.processes.postgres, after.postgres)),
    client: (client.user + client.system) / 1000 / recalls,
  };
}

export async function runOverHttp(
  kind: LedgerKind,
  conversations: Conversation[],
  modes: readonly string[],
  log: (line: string) => void,
): Promise<LedgerRun> {
  const ensure = await import('node:child_process').then(({ spawnSync }) =>
    spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/ensure-built.mjs')], { stdio: 'inherit' }),
  );
  if (ensure.status !== 0) throw new Error('scripts/ensure-built.mjs failed');
  const bundle = path.join(REPO_ROOT, 'dist/bin/gateway.mjs');
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-recall-http-logs-'));
  const issuer = await TestIssuer.start();
  const subject = 'bench-user';
  const token = await issuer.sessionToken(subject, { expiresIn: 24 * 3600 });
  const storage = await prepareLedger(kind, issuer, subject);
  let serial = 0;
  /** RECALL_HTTP_CPU_PROF=dir: every gateway writes a CPU profile there (`node --cpu-prof`). */
  const profileDir = process.env.RECALL_HTTP_CPU_PROF;
  const gateway = async (embedder: 'builtin' | 'none'): Promise<Server> =>
    startServer(
      `gateway-${kind}-${serial++}-${embedder}`,
      bundle,
      {
        ...issuer.env(),
        ...storage.env,
        HOST: '127.0.0.1',
        RATE_LIMITS: 'off',
        EMBEDDER: embedder,
      },
      '/readyz',
      logDir,
      profileDir ? [...SERVER_NODE_FLAGS, '--cpu-prof', `--cpu-prof-dir=${profileDir}`] : SERVER_NODE_FLAGS,
    );
  const withGateway = async <T>(
    embedder: 'builtin' | 'none',
    work: (api: Api, server: Server) => Promise<T>,
  ): Promise<T> => {
    const server = await gateway(embedder);
    try {
      return await work(new Api(server.url, token), server);
    } finally {
      await server.stop();
    }
  };
  try {
    const writeOff = (label: string) =>
      withGateway('none', async (api) => {
        const written = await writeTurns(api, label, conversations);
        const firstNamespace = written.namespaceOf.values().next().value as string;
        await waitForIndex(api, written.ws, firstNamespace, 'lexical', written.head);
        log(`${kind}: semantic arm off (${label}): ${written.rate.toFixed(1)} turns/s`);
        return written;
      });
    // The turns written with the semantic arm off are embedded by the next builtin gateway: that
    // backlog is cleared before anything is timed, so it neither slows the phase measured nor
    // counts in its catch-up.
    const embedAll = async (api: Api, workspaces: Written[]) => {
      for (const w of workspaces) {
        await waitForIndex(api, w.ws, w.namespaceOf.values().next().value as string, 'hybrid', w.head);
      }
    };
    const warmUp = await writeOff('warm-up');
    const offBefore = await writeOff('off-before');
    const on = await withGateway('builtin', async (api) => {
      await embedAll(api, [warmUp, offBefore]);
      const written = await writeTurns(api, 'on', conversations);
      const firstNamespace = written.namespaceOf.values().next().value as string;
      const embedded = await indexedSequence(api, written.ws, firstNamespace, 'semantic');
      const behind = written.head - embedded;
      const texts = written.memorySequences.filter((sequence) => sequence > embedded).length;
      log(
        `${kind}: semantic arm on: ${written.rate.toFixed(1)} turns/s; ${behind} commits (${texts} texts) not yet embedded`,
      );
      const catchUp = await waitForIndex(api, written.ws, firstNamespace, 'hybrid', written.head);
      log(`${kind}: both arms caught up ${catchUp.toFixed(1)} s after the writes`);
      return { written, behind, texts, catchUp };
    });
    const offAfter = await writeOff('off-after');
    await withGateway('builtin', (api) => embedAll(api, [offAfter]));
    await storage.analyze();
    const turns = on.written.turnOfMemory.size;
    const phase = (w: { seconds: number; rate: number }): WritePhase => ({
      seconds: w.seconds,
      rate: w.rate,
      semanticLagCommits: null,
      semanticLagTexts: null,
      catchUpSeconds: null,
    });
    const run: LedgerRun = {
      ledger: kind,
      turns,
      semanticOn: {
        ...phase(on.written),
        semanticLagCommits: on.behind,
        semanticLagTexts: on.texts,
        catchUpSeconds: on.catchUp,
      },
      semanticOff: {
        ...phase({
          seconds: (offBefore.seconds + offAfter.seconds) / 2,
          rate: (offBefore.rate + offAfter.rate) / 2,
        }),
        rates: [offBefore.rate, offAfter.rate],
      },
      modes: {},
      scoreboards: new Map(),
      rankings: new Map(),
    };
    const { ws, namespaceOf, turnOfMemory } = on.written;
    for (const mode of modes) {
      if (mode !== 'lexical' && mode !== 'semantic' && mode !== 'hybrid') {
        run.modes[mode] = { available: false };
        continue;
      }
      await withGateway('builtin', async (api, server) => {
        const ask = (namespaceId: string, query: string) =>
          api.call(
            'POST',
            '/v1/recall',
            {
              namespace_ids: [namespaceId],
              query,
              mode,
              budget: { max_items: MAX_ITEMS, max_context_chars: 1_048_576 },
            },
            ws,
          );
        // Warm-up: the model loaded, the code paths compiled; texts no question holds.
        const someNamespace = namespaceOf.values().next().value as string;
        for (let i = 0; i < WARM_UP_RECALLS; i += 1) {
          const answer = await ask(someNamespace, `warm up ${i} ${crypto.randomUUID()}`);
          if (i === WARM_UP_RECALLS - 1 && answer.status !== 'complete') {
            log(`${kind} ${mode}: warm-up still answers ${answer.status} (${JSON.stringify(answer.retrieval)})`);
          }
        }
        const board = new Scoreboard();
        const rankings: string[][] = [];
        const latencies: number[] = [];
        let retrieval: unknown;
        const statuses = new Map<string, number>();
        const cpuBefore = { processes: sampleCpu(server.pid), client: process.cpuUsage() };
        for (const c of conversations) {
          for (const q of c.questions) {
            const started = performance.now();
            const answer = await ask(namespaceOf.get(c.sampleId) as string, q.text);
            latencies.push(performance.now() - started);
            retrieval ??= answer.retrieval;
            statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
            const ranked = (answer.items as { memory: { id: string } }[]).map((item) =>
              turnOfMemory.get(item.memory.id),
            );
            board.add(
              q.category,
              q.gold,
              ranked.map((t) => t?.diaId ?? '?'),
            );
            rankings.push(ranked.map((t) => t?.text ?? '?'));
          }
        }
        const cpu = recallCpu(server.pid, cpuBefore, latencies.length);
        latencies.sort((a, b) => a - b);
        log(`${kind} ${mode}: statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
        run.modes[mode] = {
          available: true,
          ...(retrieval === undefined ? {} : { retrieval }),
          latency_ms: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
          cpu_ms_per_recall: cpu,
        };
        run.scoreboards.set(mode, board);
        run.rankings.set(mode, rankings);
      });
    }
    log(`${kind}: gateway logs in ${logDir}`);
    return run;
  } finally {
    await storage.drop();
    await issuer.close();
  }
}
