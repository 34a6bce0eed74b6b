/**
 * Recall quality on LoCoMo-shaped conversations (/work/shared/bench-data/README.md): every turn
 * becomes one `episode` memory ("<speaker>: <text>", valid from its session's date) backed by
 * one evidence row (locomo://<sample_id>/<dia_id>), one namespace per conversation, written
 * through the real domain write path; once indexed, each question of categories 1-4 is asked
 * with `recall` restricted to its conversation's namespace (max_items 20). Prints evidence
 * recall@5/10/20 and hit@10 per category and overall for each recall mode, beside a bare Okapi
 * BM25 computed here over the same turns, with recall latency and the write rate.
 *
 * Usage: pnpm bench:recall [file] [--ledger pglite|postgres|both] [--modes lexical,semantic,hybrid]
 *        [--json out.json] [--rankings out.json] [--http]
 * `--http` writes and asks over HTTP against the gateway as `pnpm start` runs it (recall-http.ts)
 * instead of calling the domain in this process.
 * The file defaults to ../shared/bench-data/locomo-dev.json from the project root.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TokenVerifier } from '@tms/auth';
import { OPERATIONS_BY_NAME, type Operation } from '@tms/catalog';
import { type Caller, Domain, type RawInput } from '@tms/domain';
import { Ledger } from '@tms/ledger';
import {
  BuiltinEmbedder,
  type Embedder,
  Indexer,
  PostgresSearchProvider,
  type SearchProvider,
  semanticCursorName,
} from '@tms/search';
import { createTestDatabase, enrolledSessionCaller, type TestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import {
  bm25Reference,
  type Conversation,
  catchUpRate,
  emptyTally,
  type LedgerKind,
  type LedgerRun,
  loadConversations,
  MAX_ITEMS,
  percentile,
  Scoreboard,
  type Turn,
  type WritePhase,
} from './locomo';
import { runOverHttp } from './recall-http';

// ---- options --------------------------------------------------------------------------------

/** Recall modes, and `hybrid-rrf`: hybrid with reciprocal rank fusion (k = 60) instead of `DEFAULT_FUSION`. */
const MODES = ['lexical', 'semantic', 'hybrid', 'hybrid-rrf'] as const;
type Mode = (typeof MODES)[number];
const WRITE_CONCURRENCY = 8;

function parseArgs(argv: string[]) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  let file = path.resolve(root, '../shared/bench-data/locomo-dev.json');
  let ledgers: LedgerKind[] = ['pglite', 'postgres'];
  let modes: Mode[] = [...MODES];
  let json: string | null = null;
  let rankings: string | null = null;
  let http = false;
  // pnpm runs the script in bench/: paths given on the command line are relative to where it was typed.
  const typedIn = process.env.INIT_CWD ?? process.cwd();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--ledger') {
      const v = value();
      if (v !== 'pglite' && v !== 'postgres' && v !== 'both') throw new Error('--ledger is pglite, postgres or both');
      ledgers = v === 'both' ? ['pglite', 'postgres'] : [v];
    } else if (arg === '--modes') {
      const asked = value().split(',');
      const unknown = asked.filter((m) => !(MODES as readonly string[]).includes(m));
      if (unknown.length || asked.length === 0) throw new Error(`--modes takes ${MODES.join(',')}`);
      modes = asked as Mode[];
    } else if (arg === '--http') {
      http = true;
    } else if (arg === '--json') {
      json = path.resolve(typedIn, value());
    } else if (arg === '--rankings') {
      rankings = path.resolve(typedIn, value());
    } else if (arg.startsWith('--')) {
      throw new Error(`unknown option ${arg}`);
    } else {
      file = path.resolve(typedIn, arg);
    }
  }
  return { file, ledgers, modes, json, rankings, http };
}

// ---- the service ----------------------------------------------------------------------------

const op = (name: string) => OPERATIONS_BY_NAME.get(name) as Operation;
let keySeq = 0;
async function call(domain: Domain, caller: Caller, name: string, raw: Partial<RawInput>, workspace: string | null) {
  const result = await domain.execute(
    op(name),
    { params: raw.params ?? {}, query: raw.query ?? {}, body: raw.body },
    { caller, requestId: 'bench-recall-quality', selectedWorkspaceId: workspace, idempotencyKey: `rq-${keySeq++}` },
  );
  return JSON.parse(result.json);
}

/**
 * How `recall` is asked for a mode, read from the catalog at run time: the body with `mode`
 * when the recall schema accepts it; without it for `lexical` on a service that has only that
 * arm; null (reported "n/a") for a mode the service does not have.
 */
function recallBodyFor(mode: Mode): ((body: Record<string, unknown>) => Record<string, unknown>) | null {
  const schema = op('recall').input.body as { safeParse(v: unknown): { success: boolean } } | null;
  const probe = { namespace_ids: ['ns_probe'], query: 'probe', budget: { max_items: 1, max_context_chars: 1 } };
  if (schema?.safeParse({ ...probe, mode }).success) return (body) => ({ ...body, mode });
  if (mode === 'lexical' && schema?.safeParse(probe).success) return (body) => body;
  return null;
}

/**
 * The domain and its embedded indexer as the gateway composes them (`INDEXER=embedded`, as
 * `pnpm start` runs): one embedder per process, recall's queries and the indexer's documents;
 * null leaves the semantic arm off (`EMBEDDER=none`).
 */
function composeDomain(ledger: Ledger, provider: SearchProvider, embedder: Embedder | null) {
  return {
    domain: new Domain(ledger, new TokenVerifier({}), provider, embedder ? { embedder } : {}),
    indexer: new Indexer(ledger, provider, { pollMs: 200, ...(embedder ? { embedder } : {}) }),
  };
}

type Composed = ReturnType<typeof composeDomain>;

/** Sequence every enabled arm of a workspace has reached (the semantic one when `model` is set). */
async function armSequences(ledger: Ledger, ws: string, model: string | null) {
  const of = async (cursor: string) =>
    (await ledger.stores.indexState.lag(cursor, false)).find((w) => w.workspaceId === ws);
  const lexical = await of('postgres');
  const semantic = model ? await of(semanticCursorName('postgres', model)) : undefined;
  return {
    head: lexical?.headSequence ?? 0,
    lexical: lexical?.indexedSequence ?? 0,
    semantic: model ? (semantic?.indexedSequence ?? 0) : null,
  };
}

/**
 * Writes every turn (one evidence row and one memory citing it) into a new workspace while the
 * composed indexer runs, as the gateway's embedded indexer does; then waits for both arms.
 */
async function writePhase(
  kind: LedgerKind,
  label: 'warm-up' | 'on' | 'off-before' | 'off-after',
  composed: Composed,
  ledger: Ledger,
  caller: Caller,
  conversations: Conversation[],
  log: (line: string) => void,
  model: string | null,
) {
  const { domain, indexer } = composed;
  const ws = (await call(domain, caller, 'workspaces.create', { body: { name: `locomo-semantic-${label}` } }, null))
    .workspace.id as string;
  const jobs: { namespaceId: string; sampleId: string; turn: Turn }[] = [];
  const namespaceOf = new Map<string, string>();
  for (const c of conversations) {
    const ns = (await call(domain, caller, 'namespaces.create', { body: { parent_id: null, name: c.sampleId } }, ws))
      .namespace.id as string;
    namespaceOf.set(c.sampleId, ns);
    for (const turn of c.turns) jobs.push({ namespaceId: ns, sampleId: c.sampleId, turn });
  }
  const running = indexer.run();
  const turnOfMemory = new Map<string, Turn>();
  const memorySequences: number[] = [];
  let next = 0;
  const writeStart = performance.now();
  await Promise.all(
    Array.from({ length: WRITE_CONCURRENCY }, async () => {
      for (let i = next++; i < jobs.length; i = next++) {
        const { namespaceId, sampleId, turn } = jobs[i] as (typeof jobs)[number];
        const evidence = await call(
          domain,
          caller,
          'evidence.create',
          {
            body: {
              namespace_id: namespaceId,
              source_locator: `locomo://${sampleId}/${turn.diaId}`,
              content_root_sha256: crypto.createHash('sha256').update(turn.text).digest('hex'),
              excerpt: turn.text,
            },
          },
          ws,
        );
        const body = {
          namespace_id: namespaceId,
          kind: 'episode',
          text: turn.text,
          valid_from: turn.validFrom,
          evidence_ids: [evidence.evidence.id],
        };
        const created = await call(domain, caller, 'memories.create', { body }, ws);
        turnOfMemory.set(created.memory.id, turn);
        memorySequences.push(created.commit.sequence as number);
      }
    }),
  );
  const seconds = (performance.now() - writeStart) / 1000;
  const atEnd = await armSequences(ledger, ws, model);
  const semanticLagCommits = atEnd.semantic === null ? null : atEnd.head - atEnd.semantic;
  const embeddedUpTo = atEnd.semantic;
  const semanticLagTexts = embeddedUpTo === null ? null : memorySequences.filter((s) => s > embeddedUpTo).length;
  log(
    `${kind}: semantic arm ${label}: wrote ${jobs.length} turns in ${seconds.toFixed(1)} s (${(jobs.length / seconds).toFixed(1)}/s); ` +
      `at the end lexical ${atEnd.head - atEnd.lexical} commits behind, semantic ${semanticLagCommits ?? 'off'}`,
  );
  const catchUpStart = performance.now();
  for (;;) {
    const now = await armSequences(ledger, ws, model);
    if (now.lexical >= now.head && (now.semantic === null || now.semantic >= now.head)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const catchUpSeconds = (performance.now() - catchUpStart) / 1000;
  log(`${kind}: semantic arm ${label}: both arms caught up ${catchUpSeconds.toFixed(1)} s after the writes`);
  indexer.stop();
  await running;
  const phase: WritePhase = {
    seconds,
    rate: jobs.length / seconds,
    semanticLagCommits,
    semanticLagTexts,
    catchUpSeconds: model ? catchUpSeconds : null,
  };
  return { ws, namespaceOf, turnOfMemory, phase };
}

async function runOnLedger(
  kind: LedgerKind,
  conversations: Conversation[],
  modes: readonly Mode[],
  log: (line: string) => void,
): Promise<LedgerRun> {
  let database: TestDatabase | null = null;
  let ledger: Ledger;
  if (kind === 'postgres') {
    database = await createTestDatabase('tms_bench_recall');
    ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: WRITE_CONCURRENCY + 2 });
  } else {
    ledger = await Ledger.open({ dataDir: 'memory://' });
  }
  try {
    await ledger.migrate();
    const provider = new PostgresSearchProvider(ledger.handle.db, { hnsw: ledger.driver === 'postgres' });
    await provider.prepare();
    const caller: Caller = await enrolledSessionCaller(ledger, 'bench', 'bench-user');
    const embedder = new BuiltinEmbedder();
    const embedderStart = performance.now();
    await embedder.start();
    log(`${kind}: builtin embedder started in ${((performance.now() - embedderStart) / 1000).toFixed(1)} s`);
    try {
      // 1. The writes, with the embedded indexer running: with the semantic arm on (the turns
      //    asked below) between two phases with it off, each into a workspace of its own, after
      //    a warm-up phase (not counted) so that the first measured phase is not the one that
      //    compiles the code paths.
      const writeOff = (label: 'warm-up' | 'off-before' | 'off-after') =>
        writePhase(kind, label, composeDomain(ledger, provider, null), ledger, caller, conversations, log, null);
      await writeOff('warm-up');
      const offBefore = await writeOff('off-before');
      const on = composeDomain(ledger, provider, embedder);
      const written = await writePhase(kind, 'on', on, ledger, caller, conversations, log, embedder.model);
      const offAfter = await writeOff('off-after');
      const offRates: [number, number] = [offBefore.phase.rate, offAfter.phase.rate];
      // Planner statistics for what was just loaded: the machine's Postgres has no autovacuum,
      // and PGlite runs none either.
      await ledger.handle.db.execute(sql`vacuum (analyze)`);
      const { ws, namespaceOf, turnOfMemory } = written;
      // 3. Ask every question in every mode.
      const run: LedgerRun = {
        ledger: kind,
        turns: turnOfMemory.size,
        semanticOn: written.phase,
        semanticOff: {
          seconds: (offBefore.phase.seconds + offAfter.phase.seconds) / 2,
          rate: (offRates[0] + offRates[1]) / 2,
          rates: offRates,
          semanticLagCommits: null,
          semanticLagTexts: null,
          catchUpSeconds: null,
        },
        modes: {},
        scoreboards: new Map(),
        rankings: new Map(),
      };
      for (const mode of modes) {
        const bodyFor = recallBodyFor(mode === 'hybrid-rrf' ? 'hybrid' : mode);
        // A domain of its own per mode: its query vectors are not cached yet, so every mode pays
        // each question's embedding, as a recall of a new query does.
        const asker = new Domain(ledger, new TokenVerifier({}), provider, {
          embedder,
          ...(mode === 'hybrid-rrf' ? { fusion: 'rrf' as const } : {}),
        });
        if (!bodyFor) {
          run.modes[mode] = { available: false };
          continue;
        }
        const board = new Scoreboard();
        const rankings: string[][] = [];
        const latencies: number[] = [];
        let retrieval: unknown;
        for (const c of conversations) {
          for (const q of c.questions) {
            const body = bodyFor({
              namespace_ids: [namespaceOf.get(c.sampleId)],
              query: q.text,
              budget: { max_items: MAX_ITEMS, max_context_chars: 1_048_576 },
            });
            const start = performance.now();
            const answer = await call(asker, caller, 'recall', { body }, ws);
            latencies.push(performance.now() - start);
            retrieval ??= answer.retrieval;
            const turns = (answer.items as { memory: { id: string } }[]).map((item) =>
              turnOfMemory.get(item.memory.id),
            );
            board.add(
              q.category,
              q.gold,
              turns.map((t) => t?.diaId ?? '?'),
            );
            // Compared by text: turns of identical text are one document to any ranking.
            rankings.push(turns.map((t) => t?.text ?? '?'));
          }
        }
        latencies.sort((a, b) => a - b);
        run.modes[mode] = {
          available: true,
          ...(retrieval === undefined ? {} : { retrieval }),
          latency_ms: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
        };
        run.scoreboards.set(mode, board);
        run.rankings.set(mode, rankings);
      }
      return run;
    } finally {
      await embedder.close();
    }
  } finally {
    await ledger.close();
    await database?.drop();
  }
}

/** The bare BM25 reference over each conversation's turns. */
// ---- report ---------------------------------------------------------------------------------

const f3 = (x: number) => x.toFixed(3);
const pad = (s: string, n: number) => s.padEnd(n);

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const log = (line: string) =>
    process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
  if (!fs.existsSync(options.file)) {
    throw new Error(`no data set at ${options.file}: give the LoCoMo-shaped file's path as the first argument`);
  }
  const { conversations, repairs } = loadConversations(options.file);
  const turns = conversations.reduce((n, c) => n + c.turns.length, 0);
  const questions = conversations.reduce((n, c) => n + c.questions.length, 0);

  const bm25 = bm25Reference(conversations);
  const runs: LedgerRun[] = [];
  for (const kind of options.ledgers) {
    runs.push(
      options.http
        ? await runOverHttp(kind, conversations, options.modes, log)
        : await runOnLedger(kind, conversations, options.modes, log),
    );
  }

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const lines: string[] = [
    `recall quality${options.http ? ' over HTTP (the gateway as `pnpm start` runs it, one client)' : ' in process'}, ${new Date().toISOString()}, ${os.cpus().length} x ${cpu}, Node ${process.version}`,
    `data: ${path.basename(options.file)}: ${conversations.length} conversations, ${turns} turns, ${questions} questions of categories 1-4 (max_items ${MAX_ITEMS})`,
    `evidence ids: ${repairs.repaired} repaired, ${repairs.dropped} dropped, ${repairs.questionsWithoutEvidence} questions left without evidence (skipped)`,
    '',
    `${pad('ledger', 9)}${pad('ranking', 11)}${['r@5', 'r@10', 'r@20', 'hit@10'].map((h) => h.padStart(7)).join('')}${'r@10/bm25'.padStart(11)}${'p50 ms'.padStart(9)}${'p95 ms'.padStart(9)}`,
  ];
  const bm25Summary = Scoreboard.summary(bm25.board.overall);
  const row = (ledger: string, name: string, board: Scoreboard | null, latency?: { p50: number; p95: number }) => {
    if (!board) return `${pad(ledger, 9)}${pad(name, 11)}${'n/a'.padStart(7)}`;
    const s = Scoreboard.summary(board.overall);
    const ratio = `${(s.recall_at_10 / bm25Summary.recall_at_10).toFixed(2)}x`;
    return `${pad(ledger, 9)}${pad(name, 11)}${[s.recall_at_5, s.recall_at_10, s.recall_at_20, s.hit_at_10].map((x) => f3(x).padStart(7)).join('')}${ratio.padStart(11)}${(latency ? latency.p50.toFixed(1) : '-').padStart(9)}${(latency ? latency.p95.toFixed(1) : '-').padStart(9)}`;
  };
  for (const run of runs) {
    for (const mode of options.modes) {
      const m = run.modes[mode];
      lines.push(row(run.ledger, mode, run.scoreboards.get(mode) ?? null, m?.latency_ms));
    }
  }
  lines.push(row('(js)', 'bare bm25', bm25.board));

  const categories = [...bm25.board.byCategory.keys()].sort((a, b) => a - b);
  lines.push(
    '',
    `recall@10 by category (questions): ${categories.map((c) => `${c} (${bm25.board.byCategory.get(c)?.questions})`).join(', ')}`,
  );
  const categoryRow = (label: string, board: Scoreboard) =>
    `  ${pad(label, 20)}${categories.map((c) => f3(Scoreboard.summary(board.byCategory.get(c) ?? emptyTally()).recall_at_10).padStart(7)).join('')}`;
  for (const run of runs) {
    for (const [mode, board] of run.scoreboards) lines.push(categoryRow(`${run.ledger} ${mode}`, board));
  }
  lines.push(categoryRow('bare bm25', bm25.board));

  lines.push('');
  for (const run of runs) {
    lines.push(
      `${run.ledger}: write rate with the embedded indexer running (${WRITE_CONCURRENCY} concurrent, evidence.create + memories.create a turn): ` +
        `semantic arm on ${run.semanticOn.rate.toFixed(1)} turns/s, off ${run.semanticOff.rate.toFixed(1)} turns/s (mean of ${run.semanticOff.rates.map((r) => r.toFixed(1)).join(' before and ')} after; on/off ${(run.semanticOn.rate / run.semanticOff.rate).toFixed(2)}x); ` +
        catchUpRate(run.semanticOn),
    );
    for (const [mode, m] of Object.entries(run.modes)) {
      if (m.retrieval !== undefined) lines.push(`  ${mode} retrieval: ${JSON.stringify(m.retrieval)}`);
      const cpu = m.cpu_ms_per_recall;
      if (cpu) {
        const total = cpu.gateway + cpu.model + cpu.postgres + cpu.client;
        lines.push(
          `  ${mode} CPU ms per recall: gateway ${cpu.gateway.toFixed(1)}, model ${cpu.model.toFixed(1)}, Postgres ${cpu.postgres.toFixed(1)}, client ${cpu.client.toFixed(1)} (total ${total.toFixed(1)})`,
        );
      }
    }
  }
  const identical: Record<string, { identical: number; questions: number }> = {};
  if (runs.length === 2) {
    const [a, b] = runs as [LedgerRun, LedgerRun];
    for (const [mode, rankingsA] of a.rankings) {
      const rankingsB = b.rankings.get(mode) ?? [];
      const same = rankingsA.filter((r, i) => JSON.stringify(r) === JSON.stringify(rankingsB[i])).length;
      identical[mode] = { identical: same, questions: rankingsA.length };
      lines.push(
        `${mode}: ${same} of ${rankingsA.length} questions ranked identically (top ${MAX_ITEMS}, compared by text) on both ledgers`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);

  // Every question's ranking per ledger and mode, to compare two runs (a change that must not alter them).
  if (options.rankings) {
    const all = Object.fromEntries(runs.map((run) => [run.ledger, Object.fromEntries(run.rankings)]));
    fs.writeFileSync(options.rankings, `${JSON.stringify(all)}\n`);
    log(`wrote ${options.rankings}`);
  }

  if (options.json) {
    const report = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, cpu, memory_gib: Math.round(os.totalmem() / 2 ** 30), node: process.version },
      data: { file: path.basename(options.file), conversations: conversations.length, turns, questions },
      evidence_repairs: repairs,
      max_items: MAX_ITEMS,
      bare_bm25: { k1: 1.2, b: 0.75, ...bm25.board.toJson() },
      ledgers: Object.fromEntries(
        runs.map((run) => [
          run.ledger,
          {
            write_semantic_on: run.semanticOn,
            write_semantic_off: run.semanticOff,
            modes: Object.fromEntries(
              options.modes.map((mode) => {
                const m = run.modes[mode];
                const board = run.scoreboards.get(mode);
                return [mode, m?.available && board ? { ...m, ...board.toJson() } : { available: false }];
              }),
            ),
          },
        ]),
      ),
      identical_rankings_across_ledgers: runs.length === 2 ? identical : null,
    };
    fs.writeFileSync(options.json, `${JSON.stringify(report, null, 2)}\n`);
    log(`wrote ${options.json}`);
  }
}

await main();
