// biome-ignore-all lint/suspicious/noExplicitAny: answers are walked as plain JSON.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildScenario, memoryIn, ok, type Scenario } from './changes-scenario';
import { type Harness, startHarness } from './harness';

/**
 * Done-when of the change feed: a consumer in its own process, SIGKILLed at random points and
 * restarted from its last persisted `next_after`, reading `/v1/changes` in pages beside
 * concurrent writers, ends with exactly the ledger's commits it may see, in order, none twice.
 * The expectation is computed from the `commits` table and the ids the test itself placed, not
 * from the feed. Longer runs: CHANGES_CRASH_WRITES (writes per writer) and CHANGES_CRASH_ROUNDS.
 */
const WRITES_PER_WRITER = Number(process.env.CHANGES_CRASH_WRITES ?? 24);
const KILL_ROUNDS = Number(process.env.CHANGES_CRASH_ROUNDS ?? 6);
const CONSUMER = path.resolve(import.meta.dirname, 'fixtures/changes-consumer.mjs');

/** Subject types by id prefix (decisions §10); grants and members are told apart by operation. */
const TYPE_BY_PREFIX: Record<string, string> = {
  ns: 'namespace',
  ev: 'evidence',
  vf: 'verification',
  mem: 'memory',
  rev: 'revision',
};

interface Consumer {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: string[];
}

describe('a consumer killed at random points (postgres)', () => {
  let h: Harness;
  let s: Scenario;
  let dir: string;

  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
    s = await buildScenario(h);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-consumer-'));
  });
  afterAll(async () => {
    await h?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('ends with exactly the commits it may see, in order, none twice', async () => {
    const state = path.join(dir, 'state.json');
    const token = await s.reader.token();
    const start = (drain: boolean): Consumer => {
      const child = spawn(process.execPath, [CONSUMER], {
        env: {
          ...process.env,
          TMS_URL: h.url,
          TOKEN: token,
          WS: s.workspaceId,
          STATE: state,
          LIMIT: '4',
          ...(drain ? { DRAIN: '1' } : {}),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const stderr: string[] = [];
      child.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );
      return { child, exited, stderr };
    };

    // Writers: two at once, into A and A/A1 (readable by the consumer) and B (not).
    const targets = [s.ns.a, s.ns.a1, s.ns.b];
    const writer = async (w: number) => {
      for (let i = 0; i < WRITES_PER_WRITER; i += 1) {
        const ns = targets[(i + w) % targets.length] as string;
        const created = (await memoryIn(s.admin, ns, `writer ${w} #${i}`)).body;
        s.placed.set(created.memory.id, ns);
        s.placed.set(created.revision.id, ns);
      }
    };
    let writing = true;
    const writers = Promise.all([writer(0), writer(1)]).finally(() => {
      writing = false;
    });

    const progress = () => (fs.existsSync(state) ? fs.statSync(state).mtimeMs : 0);
    let kills = 0;
    for (let round = 0; round < KILL_ROUNDS || writing; round += 1) {
      const before = progress();
      const consumer = start(false);
      // Odd rounds let it persist a page first (for up to a second); then a random moment
      // before, during or after a request or the state file's rename.
      for (let waited = 0; round % 2 === 1 && progress() === before && waited < 1000; waited += 10) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 150));
      consumer.child.kill('SIGKILL');
      const exit = await consumer.exited;
      expect(exit.code, consumer.stderr.join('')).not.toBe(2);
      if (exit.signal === 'SIGKILL') kills += 1;
    }
    // The killed consumers got somewhere: the drain below resumes from what they persisted.
    const persisted = JSON.parse(fs.readFileSync(state, 'utf8')) as { next_after: number };
    expect(persisted.next_after).toBeGreaterThan(0);
    await writers;
    const drained = start(true);
    const exit = await drained.exited;
    expect(exit, drained.stderr.join('')).toEqual({ code: 0, signal: null });
    expect(kills).toBeGreaterThan(0);

    const seen = JSON.parse(fs.readFileSync(state, 'utf8')) as { next_after: number; changes: any[] };
    const sequences = seen.changes.map((c) => c.sequence);
    // In order and none twice.
    for (let i = 1; i < sequences.length; i += 1) expect(sequences[i]).toBeGreaterThan(sequences[i - 1]);

    // What the ledger holds, seen through the reader's grant on A (inherited by A/A1).
    const result = await h.gateway.ledger.handle.db.execute(
      sql`select sequence, recorded_at, operation, actor_id, subject_ids from commits
           where workspace_id = ${s.workspaceId} order by sequence`,
    );
    const commits = (Array.isArray(result) ? result : (result as { rows: any[] }).rows) as any[];
    const readable = new Set([s.ns.a, s.ns.a1]);
    const expected = commits
      .map((c) => ({
        sequence: Number(c.sequence),
        recorded_at: Number(c.recorded_at),
        operation: c.operation,
        actor_id: c.actor_id,
        subjects: (c.subject_ids as string[])
          .filter((id) => c.operation !== 'namespaces.grants.put' && readable.has(s.placed.get(id) ?? ''))
          .map((id) => ({ type: TYPE_BY_PREFIX[id.split('_')[0] as string], id, namespace_id: s.placed.get(id) })),
      }))
      .filter((c) => c.subjects.length > 0);
    expect(seen.changes).toEqual(expected);
    expect(seen.next_after).toBe(Number(commits.at(-1)?.sequence));
    // The writers' changes in B never reached it; theirs in A and A1 all did.
    const inA = [...s.placed].filter(([id, ns]) => id.startsWith('mem_') && readable.has(ns ?? '')).length;
    expect(seen.changes.filter((c) => c.operation === 'memories.create')).toHaveLength(inA);
  });

  it('an admin reading the same feed sees every sequence from 1 with no gap', async () => {
    const seen: number[] = [];
    let after = 0;
    for (;;) {
      const page = (await ok(s.admin.get('/v1/changes', { query: { after, limit: 100 } }))).body;
      seen.push(...page.changes.map((c: any) => c.sequence));
      if (page.next_after === page.head_sequence) break;
      after = page.next_after;
    }
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i + 1));
    expect(seen.length).toBeGreaterThan(2 * WRITES_PER_WRITER);
  });
});
