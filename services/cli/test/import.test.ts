import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { canonicalJson, type Ledger, verifyWorkspaceChain } from '@tms/ledger';
import { createTestDatabase, seedPgliteDirectory, type TestDatabase } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnv } from '../src/env';
import { EXIT_REJECTED } from '../src/import-command';
import { isoSeconds, mem0Line } from '../src/mem0';
import { bash, documentedBlock, PRELUDE, shellEnv } from './documented-shell';
import { runInProcess, withTestLedger } from './in-process';

/*
 * `svc import` (docs/import.md) on both ledgers, through the CLI with its real domain: bad lines
 * of every kind rejected alone with the service's error, the rest committed as if created one at
 * a time (each line its evidence's commit, then its memory's, chained), replays on a rerun, a run
 * killed midway resumed to exactly one commit per line, and Mem0's `get_all` output.
 */

const SLOW = { timeout: 600_000 };
const ROOT = path.resolve(import.meta.dirname, '../../..');

// biome-ignore lint/suspicious/noExplicitAny: rows and answers read field by field
type Json = Record<string, any>;

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/** A statement of the test's own (its values are ids the CLI printed, or literals). */
async function query<T>(ledger: Ledger, statement: string): Promise<T[]> {
  return rowsOf<T>(await ledger.handle.db.execute(statement));
}

/** A good line: a memory with (mostly) its evidence, some with an external key, some without an import key. */
function goodLine(i: number, namespaceId: string): Json {
  const excerpt = `Ticket ${i}: the customer wrote that parcel ${i} should go to the side door.`;
  const line: Json = {
    namespace_id: namespaceId,
    kind: i % 3 === 0 ? 'episode' : 'claim',
    // Text round-trips byte for byte, U+0000 and astral characters included (the chain checks it).
    text: `Parcel ${i} goes to the side door (\u00e9t\u00e9 \u{1f4e6}${i % 11 === 0 ? ' \u0000' : ''}).`,
    valid_from: 1_700_000_000 + i + 0.25,
  };
  if (i % 7 !== 0) line.import_key = `good-${i}`;
  if (i % 5 === 0) line.key = `crm:parcel-${i}`;
  if (i % 4 !== 0) line.evidence = { source_locator: `tickets://${i}`, content_root_sha256: sha256(excerpt), excerpt };
  return line;
}

/** The CLI in this process (its stdin given), output captured. */
const svc = (env: Record<string, string>, argv: string[], stdin?: Readable) =>
  runInProcess(argv, async () => parseEnv(env), stdin);

interface Place {
  env: Record<string, string>;
  databaseUrl: string | undefined;
  dataDir: string;
}

async function openPlace(driver: 'postgres' | 'pglite'): Promise<{ place: Place; drop(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-import-'));
  let db: TestDatabase | null = null;
  if (driver === 'postgres') db = await createTestDatabase('tms_import');
  else await seedPgliteDirectory(path.join(dataDir, 'pglite'));
  const env = { ...(db ? { DATABASE_URL: db.url } : { DATA_DIR: dataDir }), USER: 'importer', EMBEDDER: 'none' };
  if (db) expect((await svc(env, ['migrate'])).code).toBe(0);
  return {
    place: { env, databaseUrl: db?.url, dataDir },
    async drop() {
      await db?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A fresh ledger for one describe block (migrated), dropped after it. */
function freshPlace(driver: 'postgres' | 'pglite'): { readonly place: Place } {
  let opened: { place: Place; drop(): Promise<void> } | null = null;
  beforeAll(async () => {
    opened = await openPlace(driver);
  }, SLOW.timeout);
  afterAll(() => opened?.drop());
  return {
    get place() {
      if (!opened) throw new Error('the ledger is not open yet');
      return opened.place;
    },
  };
}

/** A workspace and a namespace made with the CLI; their ids. */
async function workspaceWithNamespace(place: Place, name: string): Promise<{ ws: string; ns: string }> {
  const ws = (await svc(place.env, ['admin', 'workspace', 'create', '--name', name])).stdout.trim();
  const ns = (
    await svc(place.env, ['admin', 'namespace', 'create', '--workspace', ws, '--name', 'facts'])
  ).stdout.trim();
  expect(ws).toMatch(/^ws_/);
  expect(ns).toMatch(/^ns_/);
  return { ws, ns };
}

describe.each(['postgres', 'pglite'] as const)('svc import (%s)', SLOW, (driver) => {
  const fresh = freshPlace(driver);
  let place: Place;
  let ws: string;
  let ns: string;
  let foreignNs: string;
  const withLedger = <T>(use: (ledger: Ledger) => Promise<T>) => withTestLedger(place, use);

  beforeAll(async () => {
    place = fresh.place;
    ({ ws, ns } = await workspaceWithNamespace(place, 'imports'));
    foreignNs = (await workspaceWithNamespace(place, 'elsewhere')).ns;
  }, SLOW.timeout);

  const LINES = 1000;
  const dir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'tms-import-file-'));

  /** 990 good lines and 10 bad ones of every kind, at these line numbers (1-based). */
  function fileWithBadLines() {
    const lines: (string | Buffer)[] = [];
    for (let i = 0; i < LINES; i += 1) lines.push(JSON.stringify(goodLine(i, ns)));
    const bad = new Map<number, { code: string; detail: RegExp | null; line: string | Buffer }>();
    const put = (number: number, code: string, detail: RegExp | null, line: string | Buffer) => {
      bad.set(number, { code, detail, line });
      lines[number - 1] = line;
    };
    put(11, 'invalid_input', /^line: not JSON/, '{"namespace_id": "oops"');
    put(112, 'invalid_input', /^body\.text: is required/, JSON.stringify({ ...goodLine(111, ns), text: undefined }));
    put(213, 'invalid_input', /^line: unpaired surrogate at line\.text/, '{"namespace_id":"x","text":"a \\ud800 b"}');
    put(
      314,
      'invalid_input',
      /^body\.valid_from: must be Unix seconds between year 0001 and 9999 \(got a value in milliseconds\?\)/,
      JSON.stringify({ ...goodLine(313, ns), valid_from: 1_700_000_313_000 }),
    );
    put(415, 'not_found', null, JSON.stringify({ ...goodLine(414, ns), namespace_id: foreignNs }));
    // Line 505 (i = 504) holds no key: this one takes line 501's (i = 500), a few lines before it in one batch.
    put(
      505,
      'conflict',
      /^body\.key: held by memory mem_/,
      JSON.stringify({ ...goodLine(504, ns), key: 'crm:parcel-500' }),
    );
    // The import key of line 601 (i = 600) again, with other content.
    put(616, 'idempotency_conflict', null, JSON.stringify({ ...goodLine(615, ns), import_key: 'good-600' }));
    put(717, 'invalid_input', /^line: not UTF-8/, Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]));
    const wrongHash = goodLine(817, ns);
    wrongHash.evidence.content_root_sha256 = sha256('another excerpt');
    put(
      818,
      'invalid_input',
      /^body\.evidence\.content_root_sha256: is not the SHA-256 of the excerpt/,
      JSON.stringify(wrongHash),
    );
    put(919, 'invalid_input', /^body: unknown field "colour"/, JSON.stringify({ ...goodLine(918, ns), colour: 'red' }));
    const file = path.join(dir(), 'lines.ndjson');
    const parts = lines.flatMap((line) => [typeof line === 'string' ? Buffer.from(line) : line, Buffer.from('\n')]);
    fs.writeFileSync(file, Buffer.concat(parts));
    return { file, bad };
  }

  /** Every good line's memory, evidence and commits, read back. */
  async function imported(ledger: Ledger) {
    const memories = await query<{ id: string; key: string | null; seq: string; evidence_ids: string[] }>(
      ledger,
      `select m.id, convert_from(m.key, 'UTF8') as key, r.commit_sequence::text as seq, r.evidence_ids
            from memories m join revisions r on r.workspace_id = m.workspace_id and r.memory_id = m.id
           where m.workspace_id = '${ws}' order by r.commit_sequence`,
    );
    const evidence = await query<{ id: string; seq: string }>(
      ledger,
      `select id, commit_sequence::text as seq from evidence where workspace_id = '${ws}'`,
    );
    const commits = await query<{ sequence: string; operation: string; subject_ids: string[] }>(
      ledger,
      `select c.sequence::text as sequence, c.operation, c.subject_ids from commits c where c.workspace_id = '${ws}' order by c.sequence`,
    );
    return { memories, evidence, commits };
  }

  let firstRun: { head: number; rejects: string };

  it('commits every good line of a file with 1% bad ones, each as if created alone, and rejects exactly the bad ones', async () => {
    const { file, bad } = fileWithBadLines();
    const rejects = path.join(path.dirname(file), 'rejects.ndjson');
    const run = await svc(place.env, ['import', '--workspace', ws, '--reject', rejects, file]);
    expect(run.code, run.stderr).toBe(EXIT_REJECTED);
    const good = LINES - bad.size;
    expect(JSON.parse(run.stdout)).toMatchObject({
      workspace: ws,
      lines: LINES,
      committed: good,
      replayed: 0,
      rejected: 10,
    });
    expect(run.stderr).toContain(`svc: 10 of ${LINES} lines rejected`);

    const rejected = fs
      .readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Json);
    expect(rejected.map((r) => r.line).sort((a, b) => a - b)).toEqual([...bad.keys()]);
    for (const r of rejected) {
      const expected = bad.get(r.line);
      expect(r.code, `line ${r.line}`).toBe(expected?.code);
      if (expected?.detail) expect(r.detail, `line ${r.line}`).toMatch(expected.detail);
      if (typeof expected?.line === 'string') expect(r.original).toBe(expected.line);
    }

    await withLedger(async (ledger) => {
      const { memories, evidence, commits } = await imported(ledger);
      expect(memories).toHaveLength(good);
      // The key conflict names the memory that holds the key.
      const holder = memories.find((m) => m.key === 'crm:parcel-500');
      expect(rejected.find((r) => r.line === 505)?.detail).toBe(`body.key: held by memory ${holder?.id}`);
      // Committed in batches: the conflicts inside them (a held key, an import key repeated) sank none.
      const transactions = await query<{ n: number }>(
        ledger,
        `select count(distinct xmin::text)::int as n from commits where workspace_id = '${ws}' and operation = 'memories.create'`,
      );
      expect(transactions[0]?.n).toBeLessThanOrEqual(10);
      // Each memory its own commit, naming its memory and revision; each line's evidence the commit right before.
      const bySequence = new Map(commits.map((c) => [c.sequence, c]));
      const evidenceById = new Map(evidence.map((e) => [e.id, e]));
      expect(new Set(memories.map((m) => m.seq)).size).toBe(good);
      const goodIndexes = [...Array(LINES).keys()].filter((i) => !bad.has(i + 1));
      const withEvidence = goodIndexes.filter((i) => i % 4 !== 0).length;
      expect(evidence).toHaveLength(withEvidence);
      for (const memory of memories) {
        const commit = bySequence.get(memory.seq);
        expect(commit?.operation).toBe('memories.create');
        expect(commit?.subject_ids[0]).toBe(memory.id);
        const cited = memory.evidence_ids.at(-1);
        if (cited === undefined) continue;
        const own = evidenceById.get(cited);
        expect(Number(own?.seq)).toBe(Number(memory.seq) - 1);
        expect(bySequence.get(own?.seq as string)?.operation).toBe('evidence.create');
      }
      expect(commits.filter((c) => c.operation === 'memories.create')).toHaveLength(good);
      expect(commits.filter((c) => c.operation === 'evidence.create')).toHaveLength(withEvidence);
      // One idempotency record per step of each good line, none of a bad one.
      const records = await query<{ n: number }>(
        ledger,
        `select count(*)::int as n from idempotency_records where workspace_id = '${ws}' and operation in ('memories.create', 'evidence.create')`,
      );
      expect(records[0]?.n).toBe(good + withEvidence);
      const verdict = await verifyWorkspaceChain(ledger.stores, ws);
      expect(verdict.intact).toBe(true);
      firstRun = { head: Number(commits.at(-1)?.sequence), rejects: fs.readFileSync(rejects, 'utf8') };
    });
  });

  it('replays every committed line when run again, commits nothing and rejects the same lines', async () => {
    expect(firstRun).toBeDefined();
    const { file } = fileWithBadLines();
    const rejects = path.join(path.dirname(file), 'rejects.ndjson');
    const run = await svc(place.env, ['import', '--workspace', ws, '--reject', rejects, file]);
    expect(run.code).toBe(EXIT_REJECTED);
    expect(JSON.parse(run.stdout)).toMatchObject({ lines: LINES, committed: 0, replayed: LINES - 10, rejected: 10 });
    const again = fs
      .readFileSync(rejects, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Json);
    const before = firstRun.rejects
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Json);
    const sameLines = (list: Json[]) => list.map((r) => [r.line, r.code]).sort((a, b) => a[0] - b[0]);
    expect(sameLines(again)).toEqual(sameLines(before));
    await withLedger(async (ledger) => {
      const head = await ledger.stores.commits.head(ws);
      expect(head?.sequence).toBe(firstRun.head);
    });
  });

  it('records evidence that several lines cite once, each line citing it as evidence.create answered', async () => {
    const excerpt = 'One call transcript that three memories come from.';
    const evidence = { source_locator: 'calls://shared', content_root_sha256: sha256(excerpt), excerpt };
    const lines = [0, 1, 2].map((i) =>
      JSON.stringify({ ...goodLine(7000 + i, ns), import_key: `shared-${i}`, key: undefined, evidence }),
    );
    const file = path.join(dir(), 'shared.ndjson');
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const run = await svc(place.env, ['import', '--workspace', ws, file]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ lines: 3, committed: 3, rejected: 0 });
    await withLedger(async (ledger) => {
      const rows = await query<{ id: string; seq: string }>(
        ledger,
        `select id, commit_sequence::text as seq from evidence where workspace_id = '${ws}' and convert_from(source_locator, 'UTF8') = 'calls://shared'`,
      );
      expect(rows).toHaveLength(1);
      const citing = await query<{ n: number }>(
        ledger,
        `select count(*)::int as n from revisions where workspace_id = '${ws}' and evidence_ids = array['${rows[0]?.id}']`,
      );
      expect(citing[0]?.n).toBe(3);
      // Each line's evidence step keeps its answer (the first made it, the others found it).
      const records = await query<{ key: string; subject_ids: string[] }>(
        ledger,
        `select key, subject_ids from idempotency_records where workspace_id = '${ws}' and key like 'shared-%:evidence' order by key`,
      );
      expect(records.map((r) => [r.key, r.subject_ids])).toEqual(
        [0, 1, 2].map((i) => [`shared-${i}:evidence`, [rows[0]?.id]]),
      );
    });
  });

  it('reads stdin for -, and exits 0 when nothing is rejected', async () => {
    const lines = [0, 1, 2].map((i) => JSON.stringify({ ...goodLine(5000 + i, ns), import_key: `stdin-${i}` }));
    const run = await svc(place.env, ['import', '--workspace', ws, '-'], Readable.from([`${lines.join('\n')}\n\n`]));
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ lines: 3, committed: 3, replayed: 0, rejected: 0 });
    expect(run.stderr).toMatch(
      /imported 3 lines into ws_\w+ in [\d.]+ s \(\d+ lines\/s\): 3 committed, 0 replayed, 0 rejected/,
    );
  });

  it('refuses a workspace that does not exist, and a wrong --from', async () => {
    const file = path.join(dir(), 'one.ndjson');
    fs.writeFileSync(file, `${JSON.stringify(goodLine(1, ns))}\n`);
    const missing = await svc(place.env, ['import', '--workspace', 'ws_nosuchworkspace000000000', file]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('svc: no workspace ws_nosuchworkspace000000000');
    const wrong = await svc(place.env, ['import', '--workspace', ws, '--from', 'csv', file]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('takes ndjson or mem0');
  });
});

describe('docs/import.md, "A first import", as written (postgres)', SLOW, () => {
  const fresh = freshPlace('postgres');

  it('imports the two lines, then replays them', async () => {
    const place = fresh.place;
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-import-docs-'));
    const env = shellEnv({ DATABASE_URL: place.databaseUrl as string, USER: 'ops-docs' });
    const run = await bash(`${PRELUDE}${documentedBlock('import', 'docs/import.md')}\n`, env, work);
    expect(run.code, run.stderr).toBe(0);
    const [first, second] = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Json);
    expect(first).toMatchObject({ lines: 2, committed: 2, replayed: 0, rejected: 0 });
    expect(second).toMatchObject({ lines: 2, committed: 0, replayed: 2, rejected: 0 });
    expect(run.stderr).toMatch(
      /imported 2 lines into ws_\w+ in [\d.]+ s \(\d+ lines\/s\): 2 committed, 0 replayed, 0 rejected/,
    );
    await withTestLedger(place, async (ledger) => {
      const rows = await query<{ operation: string }>(
        ledger,
        `select c.operation from commits c join workspaces w on w.id = c.workspace_id order by c.sequence`,
      );
      expect(rows.map((r) => r.operation)).toEqual([
        'workspaces.create',
        'namespaces.create',
        'evidence.create',
        'memories.create',
        'memories.create',
      ]);
    });
    fs.rmSync(work, { recursive: true, force: true });
  });
});

describe('an import killed midway, resumed with the same file (postgres)', SLOW, () => {
  const fresh = freshPlace('postgres');

  it('ends with every line committed exactly once, the first run counted as replayed', async () => {
    const place = fresh.place;
    const { ws, ns } = await workspaceWithNamespace(place, 'resumed');
    const count = 6000;
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tms-import-kill-')), 'lines.ndjson');
    const lines = Array.from({ length: count }, (_, i) => {
      const line = goodLine(i, ns);
      // Every line with its evidence and its own key (the derived ones are exercised above).
      line.import_key = `resume-${i}`;
      const excerpt = `Resumable excerpt ${i}`;
      line.evidence = { source_locator: `tickets://${i}`, content_root_sha256: sha256(excerpt), excerpt };
      return JSON.stringify(line);
    });
    fs.writeFileSync(file, `${lines.join('\n')}\n`);

    const memoriesIn = (ledger: Ledger) =>
      query<{ n: number }>(ledger, `select count(*)::int as n from memories where workspace_id = '${ws}'`).then(
        (rows) => rows[0]?.n ?? 0,
      );
    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', 'services/cli/src/main.ts', 'import', '--workspace', ws, file],
      { cwd: ROOT, env: { ...process.env, ...place.env }, stdio: 'ignore' },
    );
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let before = 0;
    await withTestLedger(place, async (ledger) => {
      // Killed once some batches committed, well before the end.
      for (let i = 0; i < 6000 && before < 600; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        before = await memoriesIn(ledger);
      }
      child.kill('SIGKILL');
      await exited;
      before = await memoriesIn(ledger);
    });
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(count);

    const run = await svc(place.env, ['import', '--workspace', ws, file]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      lines: count,
      committed: count - before,
      replayed: before,
      rejected: 0,
    });

    await withTestLedger(place, async (ledger) => {
      expect(await memoriesIn(ledger)).toBe(count);
      const perOperation = await query<{ operation: string; n: number }>(
        ledger,
        `select operation, count(*)::int as n from commits where workspace_id = '${ws}' group by operation`,
      );
      expect(Object.fromEntries(perOperation.map((r) => [r.operation, r.n]))).toEqual({
        'workspaces.create': 1,
        'namespaces.create': 1,
        'evidence.create': count,
        'memories.create': count,
      });
      const keys = await query<{ key: string; n: number }>(
        ledger,
        `select key, count(*)::int as n from idempotency_records where workspace_id = '${ws}' and key like 'resume-%' group by key having count(*) > 1`,
      );
      expect(keys).toEqual([]);
      const texts = await query<{ n: number }>(
        ledger,
        `select count(distinct text)::int as n from revisions where workspace_id = '${ws}'`,
      );
      expect(texts[0]?.n).toBe(count);
      expect((await verifyWorkspaceChain(ledger.stores, ws)).intact).toBe(true);
    });
  });
});

/** A Mem0 `get_all` answer (v1.1 format) as users export it. */
const MEM0_SAMPLE = {
  results: [
    {
      id: '3c90c3cc-0d44-4b50-8888-8dd25736052a',
      memory: 'Is a vegetarian and allergic to nuts',
      hash: 'a6c8f3e1d2b4',
      metadata: { source: 'onboarding', food: 'vegetarian' },
      categories: ['food', 'health'],
      created_at: '2024-07-20T01:29:28.123456-07:00',
      updated_at: '2024-07-21T10:00:00-07:00',
      user_id: 'alice',
    },
    {
      id: '0b4f2a9e-6c1d-4e53-9f70-2d8a1c3e5b77',
      memory: 'Prefers morning meetings',
      hash: 'b1e2',
      metadata: null,
      created_at: '2024-07-22T09:00:00Z',
      updated_at: null,
      user_id: 'alice',
      agent_id: 'scheduler',
    },
    {
      id: '7e1d9c40-2b6a-4f18-8e35-a9c0d4f6b213',
      memory: 'Lives in Lisbon',
      created_at: '2024-08-01T12:30:00',
      user_id: 'bob',
    },
    {
      id: 'c2a47f18-93de-4b65-a1f0-5e8d7c6b4a39',
      memory: 'When a refund is asked for, check the order date first',
      metadata: { memory_type: 'procedural_memory' },
      created_at: '2024-09-01T00:00:00+02:00',
      agent_id: 'support-bot',
    },
    {
      id: 'f0e1d2c3-b4a5-4968-8776-5a4b3c2d1e0f',
      memory: 'Asked about the premium plan',
      created_at: '2024-09-02T08:15:30.5+00:00',
      run_id: 'session-42',
    },
    { id: 'd4c3b2a1-0000-4000-8000-000000000001', memory: 'No creation time', user_id: 'carol' },
  ],
};

describe('Mem0 get_all output as import lines', () => {
  it('reads ISO 8601 times as exact Unix seconds, a time without offset as UTC', () => {
    expect(isoSeconds('2024-07-20T01:29:28.123456-07:00')).toBe(1721464168.123456);
    expect(isoSeconds('2024-07-22T09:00:00Z')).toBe(1721638800);
    expect(isoSeconds('2024-08-01T12:30:00')).toBe(1722515400);
    expect(isoSeconds('1969-12-31T23:59:59.5Z')).toBe(-0.5);
    expect(isoSeconds('2024-02-30T00:00:00Z')).toBeNull();
    expect(isoSeconds('yesterday')).toBeNull();
  });

  it('maps a record to its owner, kind, key, valid_from and its own record as evidence', () => {
    const [vegan, , , procedure, run] = MEM0_SAMPLE.results as Json[];
    const converted = mem0Line(vegan);
    expect(converted).toMatchObject({
      ok: true,
      owner: 'user:alice',
      line: {
        import_key: 'mem0-3c90c3cc-0d44-4b50-8888-8dd25736052a',
        kind: 'claim',
        text: 'Is a vegetarian and allergic to nuts',
        valid_from: 1721464168.123456,
        key: 'mem0:3c90c3cc-0d44-4b50-8888-8dd25736052a',
      },
    });
    const evidence = (converted as { line: Json }).line.evidence;
    expect(evidence.excerpt).toBe(canonicalJson(vegan));
    expect(evidence.content_root_sha256).toBe(sha256(evidence.excerpt));
    expect(mem0Line(procedure)).toMatchObject({ owner: 'agent:support-bot', line: { kind: 'procedure' } });
    expect(mem0Line(run)).toMatchObject({ owner: 'run:session-42', line: { valid_from: 1725264930.5 } });
    expect(mem0Line({ id: 'x', memory: 'no time' })).toEqual({
      ok: false,
      detail: 'mem0.created_at: is required (an ISO 8601 time)',
    });
  });
});

describe('svc import --from mem0 (postgres)', SLOW, () => {
  const fresh = freshPlace('postgres');

  it('makes a namespace per owner under mem0/, keys each memory by its Mem0 id, and replays on a rerun', async () => {
    const place = fresh.place;
    const { ws } = await workspaceWithNamespace(place, 'from mem0');
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tms-mem0-')), 'get_all.json');
    fs.writeFileSync(file, JSON.stringify(MEM0_SAMPLE, null, 2));
    const rejects = `${file}.rejects`;
    const run = await svc(place.env, ['import', '--from', 'mem0', '--workspace', ws, '--reject', rejects, file]);
    expect(run.code, run.stderr).toBe(EXIT_REJECTED);
    expect(JSON.parse(run.stdout)).toMatchObject({ lines: 6, committed: 5, replayed: 0, rejected: 1 });
    expect(JSON.parse(fs.readFileSync(rejects, 'utf8'))).toMatchObject({
      line: 6,
      code: 'invalid_input',
      detail: 'mem0.created_at: is required (an ISO 8601 time)',
    });

    const read = (ledger: Ledger) =>
      query<{ path: string; key: string; text: string; valid_from: number; kind: string; excerpt: string }>(
        ledger,
        `select convert_from(n.name, 'UTF8') as path, convert_from(m.key, 'UTF8') as key, convert_from(r.text, 'UTF8') as text,
                   r.valid_from, r.kind, convert_from(e.excerpt, 'UTF8') as excerpt
              from memories m
              join revisions r on r.workspace_id = m.workspace_id and r.memory_id = m.id
              join namespaces n on n.workspace_id = m.workspace_id and n.id = m.namespace_id
              join evidence e on e.workspace_id = m.workspace_id and e.id = r.evidence_ids[1]
             where m.workspace_id = '${ws}' order by r.valid_from`,
      );
    const namespaces = (ledger: Ledger) =>
      query<{ id: string; name: string; parent: string | null }>(
        ledger,
        `select n.id, convert_from(n.name, 'UTF8') as name, convert_from(p.name, 'UTF8') as parent from namespaces n left join namespaces p on p.workspace_id = n.workspace_id and p.id = n.parent_id where n.workspace_id = '${ws}'`,
      ).then((rows) => rows.sort((a, b) => (a.name < b.name ? -1 : 1)));
    const before = await withTestLedger(place, async (ledger) => {
      const rows = await read(ledger);
      expect(rows.map((r) => [r.path, r.key, r.kind, r.valid_from])).toEqual([
        ['user:alice', 'mem0:3c90c3cc-0d44-4b50-8888-8dd25736052a', 'claim', 1721464168.123456],
        ['user:alice', 'mem0:0b4f2a9e-6c1d-4e53-9f70-2d8a1c3e5b77', 'claim', 1721638800],
        ['user:bob', 'mem0:7e1d9c40-2b6a-4f18-8e35-a9c0d4f6b213', 'claim', 1722515400],
        ['agent:support-bot', 'mem0:c2a47f18-93de-4b65-a1f0-5e8d7c6b4a39', 'procedure', 1725141600],
        ['run:session-42', 'mem0:f0e1d2c3-b4a5-4968-8776-5a4b3c2d1e0f', 'claim', 1725264930.5],
      ]);
      // The Mem0 record itself, metadata and all, is the evidence each memory cites.
      expect(JSON.parse(rows[0]?.excerpt as string)).toEqual(MEM0_SAMPLE.results[0]);
      const list = await namespaces(ledger);
      expect(list.map((n) => [n.name, n.parent])).toEqual([
        ['agent:support-bot', 'mem0'],
        ['facts', null],
        ['mem0', null],
        ['run:session-42', 'mem0'],
        ['user:alice', 'mem0'],
        ['user:bob', 'mem0'],
      ]);
      return list;
    });

    const again = await svc(place.env, ['import', '--from', 'mem0', '--workspace', ws, file]);
    expect(again.code).toBe(EXIT_REJECTED);
    expect(JSON.parse(again.stdout)).toMatchObject({ lines: 6, committed: 0, replayed: 5, rejected: 1 });
    expect(again.stderr).toContain('line 6: invalid_input: mem0.created_at: is required (an ISO 8601 time)');
    await withTestLedger(place, async (ledger) => {
      expect(await namespaces(ledger)).toEqual(before);
    });
  });
});
