import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TokenVerifier } from '@tms/auth';
import { OPERATIONS_BY_NAME, type Operation } from '@tms/catalog';
import { type Caller, Domain } from '@tms/domain';
import { Ledger } from '@tms/ledger';
import {
  cliLines,
  createTestDatabase,
  enrolledSessionCaller,
  runSvc,
  type SvcRun,
  seedPgliteDirectory,
  sha256Hex,
  type TestDatabase,
} from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The export is checked against the domain's own answers for the same ids (the API's format),
// on both ledgers; the CLI runs as a real process over the database the domain wrote.

const PURGED_TEXTS = ['quokka-purged-first-text', 'narwhal-purged-corrected-text'];
const PURGED_EXCERPT = 'axolotl-purged-excerpt';
const PURGED_KEY = 'pangolin-purged-key';
const KEPT_KEY = 'crm:first claim';

// biome-ignore lint/suspicious/noExplicitAny: the domain's JSON answers, compared field by field
type Json = Record<string, any>;

interface Written {
  workspace: Json;
  /** id -> the API's answer for it, and the commit that wrote it. */
  expected: Map<string, { type: string; resource: Json; sequence: number; recorded_at: number }>;
  ids: Record<string, string>;
  head: number;
}

/** Write a small workspace through the domain, then read every resource back through it. */
async function writeWorkspace(ledger: Ledger): Promise<Written> {
  const domain = new Domain(ledger, new TokenVerifier({}), null);
  const caller: Caller = await enrolledSessionCaller(ledger, 'export-test', 'owner');
  let workspace: string | null = null;
  let key = 0;
  const call = async (name: string, input: { params?: Json; query?: Json; body?: Json }): Promise<Json> => {
    const operation = OPERATIONS_BY_NAME.get(name) as Operation;
    const result = await domain.execute(
      operation,
      { params: input.params ?? {}, query: input.query ?? {}, body: input.body },
      { caller, requestId: 'export-test', selectedWorkspaceId: workspace, idempotencyKey: `k-${key++}` },
    );
    return JSON.parse(result.json);
  };
  const expected: Written['expected'] = new Map();
  const stamp = (type: string, resource: Json, commit: Json) =>
    expected.set(resource.id, { type, resource, sequence: commit.sequence, recorded_at: commit.recorded_at });

  const ws = (await call('workspaces.create', { body: { name: 'export me' } })).workspace;
  workspace = ws.id;
  const namespace = async (parent_id: string | null, name: string) =>
    (await call('namespaces.create', { body: { parent_id, name } })) as Json;
  const team = await namespace(null, 'team');
  const alpha = await namespace(team.namespace.id, 'alpha-old');
  const other = await namespace(null, 'other');
  await call('namespaces.update', { params: { id: alpha.namespace.id }, body: { name: 'alpha' } });

  const evidence = async (namespace_id: string, excerpt: string) =>
    (await call('evidence.create', {
      body: { namespace_id, source_locator: `doc://${excerpt}`, content_root_sha256: sha256Hex(excerpt), excerpt },
    })) as Json;
  const verify = async (ev: Json) =>
    (await call('evidence.verify', {
      params: { id: ev.id },
      body: {
        expected_content_root_sha256: ev.content_root_sha256,
        expected_excerpt_sha256: ev.excerpt_sha256,
        verdict: 'verified',
      },
    })) as Json;
  const kept = await evidence(alpha.namespace.id, 'a kept excerpt');
  const keptCheck = await verify(kept.evidence);
  const purgedEvidence = await evidence(alpha.namespace.id, PURGED_EXCERPT);
  const purgedCheck = await verify(purgedEvidence.evidence);
  const elsewhere = await evidence(other.namespace.id, 'an excerpt elsewhere');

  const remember = async (namespace_id: string, text: string, extra: Json = {}) =>
    (await call('memories.create', { body: { namespace_id, kind: 'claim', text, valid_from: 0, ...extra } })) as Json;
  const m1 = await remember(alpha.namespace.id, 'first claim', {
    evidence_ids: [kept.evidence.id],
    key: KEPT_KEY,
  });
  const dependent = await remember(alpha.namespace.id, 'rests on the first claim', {
    support_revision_ids: [m1.revision.id],
  });
  const m1Corrected = await call('memories.correct', {
    params: { id: m1.memory.id },
    body: { expected_generation: 1, text: 'corrected claim' },
  });
  const purged = await remember(alpha.namespace.id, PURGED_TEXTS[0] as string, { key: PURGED_KEY });
  await call('memories.correct', {
    params: { id: purged.memory.id },
    body: { expected_generation: 1, text: PURGED_TEXTS[1] },
  });
  const memoryReceipt = await call('memories.forget', {
    params: { id: purged.memory.id },
    body: { mode: 'purge', expected_generation: 2 },
  });
  const evidenceReceipt = await call('evidence.forget', { params: { id: purgedEvidence.evidence.id }, body: {} });
  const retracted = await remember(alpha.namespace.id, 'retracted claim', { key: 'crm:retracted' });
  await call('memories.forget', {
    params: { id: retracted.memory.id },
    body: { mode: 'retract', expected_generation: 1 },
  });
  const far = await remember(other.namespace.id, 'a claim elsewhere');

  // What the API answers now for each exported id, at the commit that wrote it.
  stamp('workspace', ws, { sequence: 1, recorded_at: ws.created_at });
  for (const created of [team, alpha, other]) {
    stamp(
      'namespace',
      (await call('namespaces.get', { params: { id: created.namespace.id } })).namespace,
      created.commit,
    );
  }
  for (const created of [kept, elsewhere]) {
    stamp('evidence', (await call('evidence.get', { params: { id: created.evidence.id } })).evidence, created.commit);
  }
  for (const check of [keptCheck, purgedCheck]) stamp('verification', check.verification, check.commit);
  const writes = new Map<string, Json>();
  for (const w of [m1, dependent, m1Corrected, retracted, far]) writes.set(w.revision.id, w.commit);
  for (const created of [m1, dependent, retracted, far]) {
    const id = created.memory.id;
    // A retracted memory is no longer known now: its identity is read as known at its creation.
    const query = created === retracted ? { known_at: created.commit.recorded_at } : {};
    stamp('memory', (await call('memories.get', { params: { id }, query })).view.memory, created.commit);
    for (const revision of (await call('memories.history', { params: { id } })).revisions) {
      stamp('revision', revision, writes.get(revision.id) as Json);
    }
  }
  stamp('receipt', memoryReceipt.receipt, memoryReceipt.commit);
  stamp('receipt', evidenceReceipt.receipt, evidenceReceipt.commit);
  return {
    workspace: ws,
    expected,
    head: far.commit.sequence,
    ids: {
      team: team.namespace.id,
      alpha: alpha.namespace.id,
      other: other.namespace.id,
      m1: m1.memory.id,
      purged: purged.memory.id,
      purgedEvidence: purgedEvidence.evidence.id,
      elsewhere: elsewhere.evidence.id,
      far: far.memory.id,
    },
  };
}

const parseLines = (ndjson: string): Json[] =>
  ndjson
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

/** Each line is the API's answer for its id plus `type`, `sequence` and the commit's `recorded_at`. */
function expectLinesAsTheApiShows(lines: Json[], written: Written, ids: Iterable<string>) {
  expect(lines.map((l) => l.id).sort()).toEqual([...ids].sort());
  for (const line of lines) {
    const want = written.expected.get(line.id);
    if (!want) throw new Error(`unexpected line ${line.id}`);
    // Where the resource has a recorded_at, it is its commit's (decisions §2): one field serves both.
    if ('recorded_at' in want.resource) expect(want.resource.recorded_at).toBe(want.recorded_at);
    expect(line).toEqual({ type: want.type, ...want.resource, sequence: want.sequence, recorded_at: want.recorded_at });
  }
  const sequences = lines.map((l) => l.sequence as number);
  expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
  // A memory comes right before its first revision (the same commit).
  for (const [i, line] of lines.entries()) {
    if (line.type === 'memory')
      expect(lines[i + 1]).toMatchObject({ type: 'revision', memory_id: line.id, generation: 1 });
  }
}

describe.each(['pglite', 'postgres'] as const)('svc export (%s)', (driver) => {
  let dir: string;
  let database: TestDatabase | null = null;
  let env: Record<string, string>;
  let written: Written;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-export-'));
    if (driver === 'postgres') database = await createTestDatabase();
    env = database ? { DATABASE_URL: database.url } : { DATA_DIR: path.join(dir, 'data') };
    if (!database) await seedPgliteDirectory(path.join(dir, 'data', 'pglite'));
    const ledger = await Ledger.open(
      database ? { databaseUrl: database.url } : { dataDir: path.join(dir, 'data', 'pglite'), holder: 'export test' },
    );
    try {
      await ledger.migrate();
      written = await writeWorkspace(ledger);
    } finally {
      // The embedded ledger admits one process: the CLI opens it after this.
      await ledger.close();
    }
  }, 120_000);
  afterAll(async () => {
    await database?.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const svc = (args: string[]): Promise<SvcRun> => runSvc(['export', ...args], env);

  it('writes every unpurged row as the API shows it, in sequence order, and nothing purged', async () => {
    const file = path.join(dir, 'full.ndjson');
    const toFile = await svc(['--workspace', written.workspace.id, '--output', file]);
    expect(toFile.code, toFile.stderr).toBe(0);
    expect(toFile.stdout).toBe('');
    const total = written.expected.size;
    expect(cliLines(toFile.stderr)[0]).toBe(
      `exporting workspace ${written.workspace.id} up to sequence ${written.head} to ${file}`,
    );
    expect(cliLines(toFile.stderr).at(-1)).toMatch(
      new RegExp(
        `^exported ${total} rows of workspace ${written.workspace.id} \\(commits up to ${written.head}\\) to `,
      ),
    );
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
    const bytes = fs.readFileSync(file);
    const all = parseLines(bytes.toString('utf8'));
    // Each commit's line (its chain hash and digest input, hashes only) comes first in its sequence.
    const commitLines = all.filter((l) => l.type === 'commit');
    expect(commitLines.map((l) => l.sequence)).toEqual(Array.from({ length: written.head }, (_, i) => i + 1));
    expect(all[0]).toMatchObject({ type: 'commit', sequence: 1, chain_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const lines = all.filter((l) => l.type !== 'commit');
    expect(lines[0]).toMatchObject({ type: 'workspace', sequence: 1 });
    expectLinesAsTheApiShows(lines, written, written.expected.keys());
    // The purged memory and evidence are gone; their receipts (hashes only) are there.
    const ofPurged = lines.filter((l) => l.id === written.ids.purged || l.memory_id === written.ids.purged);
    expect(ofPurged.map((l) => l.type)).toEqual(['receipt']);
    expect(
      lines
        .filter((l) => l.type === 'receipt')
        .map((l) => l.memory_id ?? l.evidence_id)
        .sort(),
    ).toEqual([written.ids.purged, written.ids.purgedEvidence].sort());
    for (const secret of [...PURGED_TEXTS, PURGED_EXCERPT, PURGED_KEY]) {
      expect(bytes.includes(secret), secret).toBe(false);
    }
    expect(bytes.includes('corrected claim')).toBe(true);
    // Keys are exported with their memories (the purged one only as its receipt's hash).
    expect(lines.find((l) => l.id === written.ids.m1)).toMatchObject({ type: 'memory', key: KEPT_KEY });
    expect(lines.find((l) => l.memory_id === written.ids.purged)).toMatchObject({
      type: 'receipt',
      erased_key_sha256: sha256Hex(PURGED_KEY),
    });
    // The renamed namespace is listed once, at its creation, under its present name.
    expect(lines.filter((l) => l.id === written.ids.alpha)).toMatchObject([
      { name: 'alpha', display_path: ['team', 'alpha'] },
    ]);

    const toStdout = await svc(['--workspace', written.workspace.id]);
    expect(toStdout.code, toStdout.stderr).toBe(0);
    expect(toStdout.stdout).toBe(bytes.toString('utf8'));

    // The export verifies offline with the chain's own arithmetic, and reaches the ledger's head.
    const offline = await runSvc(['ledger', 'verify', '--file', file], env);
    expect(offline.code, offline.stderr).toBe(0);
    const online = await runSvc(['ledger', 'verify', '--workspace', written.workspace.id], env);
    expect(online.code, online.stderr).toBe(0);
    expect(online.stdout).toMatch(
      new RegExp(
        `^ledger of workspace ${written.workspace.id} is intact up to sequence ${written.head}, chain_hash [0-9a-f]{64}\n$`,
      ),
    );
    const headHash = online.stdout.trim().split(' ').at(-1);
    expect(offline.stdout).toBe(`export ${file} is intact up to sequence ${written.head}, chain_hash ${headHash}\n`);
    expect(online.stderr).toContain(`${written.head}/${written.head} commits`);
    // Then the pass over the revisions' record ends, with its own count.
    const checked = Number(/record ends: (\d+) revisions checked\n$/.exec(online.stderr)?.[1]);
    expect(checked).toBeGreaterThan(0);
    // One edited text in the file is named by the commit that wrote it.
    const edited = path.join(dir, 'edited.ndjson');
    const revision = lines.find((l) => l.type === 'revision' && typeof l.text === 'string') as Json;
    fs.writeFileSync(
      edited,
      all
        .map((l) => JSON.stringify(l.id === revision.id && l.type === 'revision' ? { ...l, text: `${l.text}!` } : l))
        .join('\n'),
    );
    const tampered = await runSvc(['ledger', 'verify', '--file', edited], env);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain(`breaks at sequence ${revision.sequence}:`);
  }, 120_000);

  it('with --namespace, writes only that subtree (and the workspace line)', async () => {
    const run = await svc(['--workspace', written.workspace.id, '--namespace', written.ids.team]);
    expect(run.code, run.stderr).toBe(0);
    const lines = parseLines(run.stdout);
    // A subtree's export is not a whole chain: it carries no commit lines.
    expect(lines.some((l) => l.type === 'commit')).toBe(false);
    const outside = new Set([written.ids.other, written.ids.elsewhere, written.ids.far]);
    const inside = [...written.expected.entries()]
      .filter(([id, e]) => !outside.has(id) && e.resource.memory_id !== written.ids.far)
      .map(([id]) => id);
    expectLinesAsTheApiShows(lines, written, inside);
    expect(inside.length).toBeLessThan(written.expected.size);
  }, 120_000);

  it('svc migrate chains a ledger written before the chain, with progress, to the same head', async () => {
    const before = await runSvc(['ledger', 'verify', '--workspace', written.workspace.id], env);
    expect(before.code, before.stderr).toBe(0);
    const ledger = await Ledger.open(
      database ? { databaseUrl: database.url } : { dataDir: path.join(dir, 'data', 'pglite'), holder: 'export test' },
    );
    try {
      await ledger.handle.db.execute(`update commits set chain_hash = null`);
    } finally {
      await ledger.close();
    }
    const unchained = await runSvc(['ledger', 'verify', '--workspace', written.workspace.id], env);
    expect(unchained.code).toBe(1);
    expect(unchained.stderr).toContain('breaks at sequence 1: commit 1 is not chained yet: run svc migrate');
    const migrate = await runSvc(['migrate'], env);
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout).toBe('migrations applied; older ledgers chained\n');
    expect(migrate.stderr).toContain(`chaining workspace ${written.workspace.id}: `);
    expect(migrate.stderr).toContain(`${written.head}/${written.head} commits`);
    const after = await runSvc(['ledger', 'verify', '--workspace', written.workspace.id], env);
    expect(after.stdout).toBe(before.stdout);
  }, 120_000);

  it('refuses an unknown workspace or namespace with a one-line reason (exit 1)', async () => {
    const noWorkspace = await svc(['--workspace', 'ws_nope']);
    expect({ code: noWorkspace.code, stderr: cliLines(noWorkspace.stderr) }).toEqual({
      code: 1,
      stderr: ['svc: no workspace ws_nope'],
    });
    const noNamespace = await svc(['--workspace', written.workspace.id, '--namespace', 'ns_nope']);
    expect(noNamespace.code).toBe(1);
    expect(cliLines(noNamespace.stderr)).toEqual([`svc: no namespace ns_nope in workspace ${written.workspace.id}`]);
  }, 120_000);
});

describe('svc export arguments', () => {
  const env = { DATA_DIR: path.join(os.tmpdir(), 'tms-export-never-opened') };
  it.each([
    [['--namespace', 'ns_x'], "required option '--workspace <id>' not specified"],
    [['--workspace', 'ws_x', '--format', 'csv'], "unknown option '--format'"],
    [['--workspace', 'ws_x', 'extra'], "too many arguments for 'export'"],
  ])(
    '%j exits 2 with the usage',
    async (args, reason) => {
      const run = await runSvc(['export', ...args], env);
      expect(run.code).toBe(2);
      const lines = cliLines(run.stderr);
      expect(lines[0]).toContain(`svc: ${reason}`);
      expect(lines).toContain('Usage: svc export [options]');
      expect(run.stdout).toBe('');
      expect(fs.existsSync(env.DATA_DIR)).toBe(false);
    },
    60_000,
  );

  it('--help prints the usage and exits 0', async () => {
    const run = await runSvc(['export', '--help'], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: svc export [options]');
    expect(run.stdout).toContain('--namespace <id>');
  }, 60_000);
});
