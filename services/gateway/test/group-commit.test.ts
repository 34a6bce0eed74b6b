import { OPERATION_LIMITS } from '@tms/catalog';
import { GroupCommitter } from '@tms/domain';
import { newId, verifyWorkspaceChain } from '@tms/ledger';
import { ApiClient, type CallResult, freshKey } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, startPeerGateway } from './harness';
import { expectError, expectShape } from './shapes';

/**
 * Group commit per workspace (Postgres). Batches are made deterministic without timing: an
 * outside transaction holds the workspace head row, so the first write's batch waits on it;
 * the writes sent next queue behind it (observed through `GroupCommitter.pending`) and form
 * the next batch once the head is released.
 */

const POLL_LIMIT = 400;
const POLL_MS = 25;

async function until(condition: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < POLL_LIMIT; i += 1) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

function memoryBody(namespaceId: string, text: string, extra: Record<string, unknown> = {}) {
  return { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0, ...extra };
}

/** The head allocation of a group commit, as the statement log shows it (the flush's chain-hash update starts with `with`). */
const isHeadUpdate = (text: string) => /^\s*update "workspace_heads"/.test(text);

describe('group commit per workspace (postgres)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
  });
  afterAll(() => h?.close());

  async function query<T>(statement: ReturnType<typeof sql>): Promise<T[]> {
    return rowsOf<T>(await h.gateway.ledger.handle.db.execute(statement));
  }

  async function workspaceWithNamespace(): Promise<{ ws: string; api: ApiClient; namespaceId: string }> {
    const { id: ws, api } = await h.workspace();
    const ns = expectShape(await api.post('/v1/namespaces', { parent_id: null, name: 'facts' }), 'namespaces.create');
    return { ws, api, namespaceId: ns.namespace.id };
  }

  /**
   * Hold the workspace head, send `first()`, wait until its batch waits on the head, send
   * `rest()` and wait until all of it is queued behind; then release and collect every answer.
   * The writes of `rest()` then form the next batch(es) (up to the batch cap), in sending order.
   */
  async function behindHeldHead<T>(
    ws: string,
    first: () => Promise<CallResult>,
    rest: () => Promise<T>[],
    beforeRelease: () => void | Promise<void> = () => {},
  ): Promise<{ first: CallResult; rest: T[] }> {
    const committer = GroupCommitter.of(h.gateway.ledger);
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = h.gateway.ledger.transaction(async (stores) => {
      await stores.db.execute(sql`select * from workspace_heads where workspace_id = ${ws} for update`);
      locked();
      await released;
    });
    try {
      await lockTaken;
      const firstAnswer = first();
      await until(async () => {
        const waiting = await query<{ n: number }>(
          sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
        );
        return committer.pending(ws) === 1 && (waiting[0]?.n ?? 0) >= 1;
      }, 'the first batch to wait on the head');
      const restAnswers = rest();
      await until(() => committer.pending(ws) === 1 + restAnswers.length, 'the other writes to queue');
      await beforeRelease();
      release();
      await holder;
      return { first: await firstAnswer, rest: await Promise.all(restAnswers) };
    } finally {
      release();
      await holder;
    }
  }

  async function commitsOf(ws: string) {
    return query<{ sequence: string; recorded_at: number; subject_ids: string[]; xmin: string }>(
      sql`select sequence, recorded_at, subject_ids, xmin::text as xmin from commits where workspace_id = ${ws} order by sequence`,
    );
  }

  async function revisionTextsOf(ws: string): Promise<string[]> {
    const rows = await query<{ text: string }>(
      sql`select convert_from(text, 'UTF8') as text from revisions where workspace_id = ${ws} order by 1`,
    );
    return rows.map((r) => r.text);
  }

  async function idempotencyRecordsUnder(key: string): Promise<number> {
    const rows = await query<{ n: number }>(sql`select count(*)::int as n from idempotency_records where key = ${key}`);
    return rows[0]?.n ?? 0;
  }

  it("the gateway's sessions end a transaction left idle as long as an operation may last", async () => {
    // A batch whose driver lost a statement's answer would otherwise hold the head lock forever.
    const [setting] = await query<{ value: string }>(
      sql`select current_setting('idle_in_transaction_session_timeout') as value`,
    );
    expect(setting?.value).toBe(`${OPERATION_LIMITS.timeoutMs / 1000}s`);
  });

  it('200 concurrent creates into one workspace take 200 distinct, gap-free sequences in commit order, in few transactions', async () => {
    const { ws, api, namespaceId } = await workspaceWithNamespace();
    const before = (await commitsOf(ws)).length;
    const { first, rest } = await behindHeldHead(
      ws,
      () => api.post('/v1/memories', memoryBody(namespaceId, 'fact 0')),
      () => Array.from({ length: 199 }, (_, i) => api.post('/v1/memories', memoryBody(namespaceId, `fact ${i + 1}`))),
    );
    const answers = [first, ...rest].map((res) => expectShape(res, 'memories.create'));
    const sequences = answers.map((a) => a.commit.sequence as number);
    expect(new Set(sequences).size).toBe(200);
    expect([...sequences].sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => before + 1 + i));
    // Queued in sending order, sequenced in that order.
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));

    const log = (await commitsOf(ws)).slice(before);
    expect(log.map((r) => Number(r.sequence))).toEqual(Array.from({ length: 200 }, (_, i) => before + 1 + i));
    for (let i = 1; i < log.length; i += 1) {
      expect(log[i]?.recorded_at).toBeGreaterThanOrEqual(log[i - 1]?.recorded_at as number);
    }
    // The log and the answers agree: each commit names its memory and revision, at its stamp.
    const bySequence = new Map(log.map((r) => [Number(r.sequence), r]));
    for (const answer of answers) {
      const row = bySequence.get(answer.commit.sequence);
      expect(row?.subject_ids).toEqual([answer.memory.id, answer.revision.id]);
      expect(row?.recorded_at).toBe(answer.commit.recorded_at);
      expect(answer.revision.recorded_at).toBe(answer.commit.recorded_at);
    }
    const revisions = await query<{ id: string; commit_sequence: string }>(
      sql`select id, commit_sequence from revisions where workspace_id = ${ws}`,
    );
    const revisionSequence = new Map(revisions.map((r) => [r.id, Number(r.commit_sequence)]));
    for (const answer of answers) expect(revisionSequence.get(answer.revision.id)).toBe(answer.commit.sequence);

    // What the batch's multi-row inserts stored reads back as answered.
    for (const answer of [answers[0], answers[100], answers[199]]) {
      const view = expectShape(await api.get(`/v1/memories/${answer?.memory.id}`), 'memories.get').view;
      expect(view.memory).toEqual(answer?.memory);
      expect(view.revision).toEqual(answer?.revision);
    }

    // Grouped: the first write alone, then the 199 queued ones in batches of at most 64.
    const transactions = new Set(log.map((r) => r.xmin));
    expect(transactions.size).toBe(1 + Math.ceil(199 / 64));
  });

  it('a write that fails in a batch fails alone with its exact error and leaves no trace; the others commit together', async () => {
    const { ws, api, namespaceId } = await workspaceWithNamespace();
    const before = (await commitsOf(ws)).length;
    const absentEvidence = newId('ev');
    const failingKey = freshKey();
    const failing = memoryBody(namespaceId, 'cites nothing real', { evidence_ids: [absentEvidence] });
    const { rest } = await behindHeldHead(
      ws,
      () => api.post('/v1/memories', memoryBody(namespaceId, 'first')),
      () => [
        api.post('/v1/memories', memoryBody(namespaceId, 'kept A')),
        api.post('/v1/memories', failing, { idem: failingKey }),
        api.post('/v1/memories', memoryBody(namespaceId, 'kept B')),
      ],
    );
    const [keptA, failed, keptB] = rest as [CallResult, CallResult, CallResult];
    const a = expectShape(keptA, 'memories.create');
    const b = expectShape(keptB, 'memories.create');
    expect(b.commit.sequence).toBe(a.commit.sequence + 1);
    expect(a.commit.sequence).toBe(before + 2);

    // The same error, byte for byte, as the same request gets by itself.
    expectError(failed, 'not_found');
    const alone = await api.post('/v1/memories', failing);
    expect(alone.status).toBe(failed.status);
    expect(JSON.parse(alone.text).error.code).toBe(JSON.parse(failed.text).error.code);
    expect(JSON.parse(alone.text).error.message).toBe(JSON.parse(failed.text).error.message);

    // No trace: no commit, no memory, no idempotency record under its key.
    const log = (await commitsOf(ws)).slice(before);
    expect(log.map((r) => Number(r.sequence))).toEqual([before + 1, before + 2, before + 3]);
    expect(await revisionTextsOf(ws)).toEqual(['first', 'kept A', 'kept B']);
    expect(await idempotencyRecordsUnder(failingKey)).toBe(0);
    // The two kept writes committed in one transaction, apart from the first.
    expect(log[1]?.xmin).toBe(log[2]?.xmin);
    expect(log[0]?.xmin).not.toBe(log[1]?.xmin);
    // And the failing key is free: the corrected request executes under it.
    const fixed = expectShape(
      await api.post('/v1/memories', memoryBody(namespaceId, 'cites nothing real'), { idem: failingKey }),
      'memories.create',
    );
    expect(fixed.commit.sequence).toBe(before + 4);
  });

  it('a batch whose rows statement fails acknowledges nothing of it; its writes run alone', async () => {
    const { ws, api, namespaceId } = await workspaceWithNamespace();
    const before = (await commitsOf(ws)).length;
    // A real failure of the batch's rows statement, after every rule passed: Postgres refuses
    // one revision row. (Sending COMMIT right behind that statement was tried: Postgres then
    // answers COMMIT as a rollback with no error, which this test requires to be noticed.)
    const marker = 424242;
    await query(
      sql.raw(`create or replace function refuse_marked_revision() returns trigger language plpgsql as $$
      begin
        if new.valid_from = ${marker} then raise exception 'refused by the test trigger'; end if;
        return new;
      end $$`),
    );
    await query(
      sql.raw(
        'create or replace trigger refuse_marked_revision before insert on revisions for each row execute function refuse_marked_revision()',
      ),
    );
    try {
      const refusedKey = freshKey();
      const { rest } = await behindHeldHead(
        ws,
        () => api.post('/v1/memories', memoryBody(namespaceId, 'first')),
        () => [
          api.post('/v1/memories', memoryBody(namespaceId, 'kept A')),
          api.post('/v1/memories', memoryBody(namespaceId, 'refused', { valid_from: marker }), { idem: refusedKey }),
          api.post('/v1/memories', memoryBody(namespaceId, 'kept B')),
        ],
      );
      const [keptA, refused, keptB] = rest as [CallResult, CallResult, CallResult];
      expectShape(keptA, 'memories.create');
      expectShape(keptB, 'memories.create');
      expect(refused.status).toBeGreaterThanOrEqual(500);

      // Gap-free, nothing of the refused write, and the kept two committed apart: their batch
      // rolled back as a whole and each ran alone.
      const log = (await commitsOf(ws)).slice(before);
      expect(log.map((r) => Number(r.sequence))).toEqual([before + 1, before + 2, before + 3]);
      expect(new Set(log.map((r) => r.xmin)).size).toBe(3);
      expect(await revisionTextsOf(ws)).toEqual(['first', 'kept A', 'kept B']);
      expect(await idempotencyRecordsUnder(refusedKey)).toBe(0);
    } finally {
      await query(sql.raw('drop trigger if exists refuse_marked_revision on revisions'));
    }
  });

  it('two identical requests under one key sent together execute once; the second replays byte for byte', async () => {
    const { ws, api, namespaceId } = await workspaceWithNamespace();
    const before = (await commitsOf(ws)).length;
    const key = freshKey();
    const body = memoryBody(namespaceId, 'said twice');
    const { rest } = await behindHeldHead(
      ws,
      () => api.post('/v1/memories', memoryBody(namespaceId, 'first')),
      () => [
        api.post('/v1/memories', body, { idem: key }),
        api.post('/v1/memories', memoryBody(namespaceId, 'other')),
        api.post('/v1/memories', body, { idem: key }),
      ],
    );
    const [once, other, again] = rest as [CallResult, CallResult, CallResult];
    expectShape(once, 'memories.create');
    expectShape(other, 'memories.create');
    expect(again.status).toBe(200);
    expect(again.text).toBe(once.text);
    const log = (await commitsOf(ws)).slice(before);
    expect(log).toHaveLength(3);
    expect(await revisionTextsOf(ws)).toEqual(['first', 'other', 'said twice']);
    // Executed in the batch (the repeat waited for the next one), not by falling back to one
    // transaction per write.
    expect(log[1]?.xmin).toBe(log[2]?.xmin);
  });

  it('creates with one memory key never share a batch: the first wins, each later one is a conflict naming it', async () => {
    const { ws, api, namespaceId } = await workspaceWithNamespace();
    const before = (await commitsOf(ws)).length;
    const logsBefore = h.logs.length;
    const keyed = (text: string) => memoryBody(namespaceId, text, { key: 'account:9' });
    const { first, rest } = await behindHeldHead(
      ws,
      () => api.post('/v1/memories', keyed('first')),
      () => [
        api.post('/v1/memories', keyed('second')),
        api.post('/v1/memories', memoryBody(namespaceId, 'unkeyed A')),
        api.post('/v1/memories', keyed('third')),
        api.post('/v1/memories', memoryBody(namespaceId, 'other key', { key: 'account:10' })),
        api.post('/v1/memories', memoryBody(namespaceId, 'unkeyed B')),
      ],
    );
    const winner = expectShape(first, 'memories.create').memory.id;
    const [second, unkeyedA, third, otherKey, unkeyedB] = rest as CallResult[];
    for (const refused of [second, third]) {
      expectError(refused as CallResult, 'conflict', { detail: `body.key: held by memory ${winner}` });
    }
    for (const kept of [unkeyedA, otherKey, unkeyedB]) expectShape(kept as CallResult, 'memories.create');
    // The writes that could share a batch did (the second keyed create with them, refused by its
    // rule, not by the index): the three kept ones committed in one transaction, nothing ran alone.
    const log = (await commitsOf(ws)).slice(before);
    expect(log.map((r) => Number(r.sequence))).toEqual([before + 1, before + 2, before + 3, before + 4]);
    expect(new Set(log.slice(1).map((r) => r.xmin)).size).toBe(1);
    expect((await revisionTextsOf(ws)).sort()).toEqual(['first', 'other key', 'unkeyed A', 'unkeyed B']);
    expect(h.logs.slice(logsBefore).filter((line) => line.includes('"level":50'))).toEqual([]);
  });

  it('two gateways racing for one memory key: the index lets one commit, the other answers conflict naming it', async () => {
    const { ws, api, namespaceId } = await workspaceWithNamespace();
    const peer = await startPeerGateway(h, {});
    try {
      const peerApi = new ApiClient(peer.gateway.url, api.token, ws);
      const before = (await commitsOf(ws)).length;
      const logsBefore = h.logs.length;
      const keyed = (text: string) => memoryBody(namespaceId, text, { key: 'race:peer' });
      const peerCommitter = GroupCommitter.of(peer.gateway.ledger);
      let peerAnswer: Promise<CallResult> = Promise.reject(new Error('not sent'));
      peerAnswer.catch(() => {});
      // Both batches pass their rules (neither sees the other's row) and wait on the held head.
      const { first } = await behindHeldHead(
        ws,
        () => api.post('/v1/memories', keyed('from the harness gateway')),
        () => [],
        async () => {
          peerAnswer = peerApi.post('/v1/memories', keyed('from the peer gateway'));
          await until(async () => {
            const waiting = await query<{ n: number }>(
              sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
            );
            return peerCommitter.pending(ws) === 1 && (waiting[0]?.n ?? 0) >= 2;
          }, 'the peer batch to wait on the head');
        },
      );
      const answers = [first, await peerAnswer];
      const won = answers.filter((a) => a.status === 200);
      expect(won).toHaveLength(1);
      const winner = (won[0] as CallResult).body.memory.id as string;
      const lost = answers.find((a) => a.status !== 200) as CallResult;
      expectError(lost, 'conflict', { detail: `body.key: held by memory ${winner}` });
      // One commit, no gap, and the chain still whole.
      const log = (await commitsOf(ws)).slice(before);
      expect(log.map((r) => Number(r.sequence))).toEqual([before + 1]);
      const verdict = await h.gateway.ledger.snapshot((stores) => verifyWorkspaceChain(stores, ws));
      expect(verdict.intact).toBe(true);
      expect(h.logs.slice(logsBefore).filter((line) => line.includes('"level":50'))).toEqual([]);
    } finally {
      await peer.gateway.close();
    }
  });

  it('a batch of N creates sends the same statements while it holds the head, whatever N', async () => {
    const { ws, api, namespaceId } = await workspaceWithNamespace();
    const underLock: number[] = [];
    for (const n of [2, 16]) {
      await behindHeldHead(
        ws,
        () => api.post('/v1/memories', memoryBody(namespaceId, 'first')),
        () => Array.from({ length: n }, (_, i) => api.post('/v1/memories', memoryBody(namespaceId, `n${n} ${i}`))),
        () => h.queries.reset(),
      );
      // After the release only the queued batch runs: its statements from the head update on
      // (COMMIT is not a Drizzle statement) are the ones sent while the head is locked.
      const texts = h.queries.texts;
      const updates = texts.flatMap((text, i) => (isHeadUpdate(text) ? [i] : []));
      expect(updates).toHaveLength(1);
      underLock.push(texts.length - (updates[0] as number));
    }
    expect(underLock[0]).toBe(underLock[1]);
    // The head update, then one statement with the commit rows (chained), memories, revisions,
    // idempotency records, the head's new chain hash and one NOTIFY.
    expect(underLock[0]).toBe(2);
  });
});

describe('group commit keeps request deadlines (postgres)', () => {
  const TIMEOUT_MS = 400;
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres', timeoutMs: TIMEOUT_MS });
  });
  afterAll(() => h?.close());

  it('a grouped create held past its deadline is rolled back before 503 is answered, and a retry executes once', async () => {
    const { id: ws, api } = await h.workspace();
    const namespaceId = expectShape(
      await api.post('/v1/namespaces', { parent_id: null, name: 'facts' }),
      'namespaces.create',
    ).namespace.id;
    const head = async () => (await h.gateway.ledger.stores.commits.head(ws))?.sequence;
    const before = await head();
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const lockTaken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const holder = h.gateway.ledger.transaction(async (stores) => {
      await stores.db.execute(sql`select * from workspace_heads where workspace_id = ${ws} for update`);
      locked();
      await released;
    });
    const key = freshKey();
    const body = memoryBody(namespaceId, 'held');
    try {
      await lockTaken;
      const pending = api.post('/v1/memories', body, { idem: key });
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 3));
      release();
      await holder;
      expectError(await pending, 'unavailable', { retryAfterSeconds: 1 });
    } finally {
      release();
      await holder;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await head()).toBe(before);
    const records = await h.gateway.ledger.handle.db.execute(
      sql`select count(*)::int as n from idempotency_records where key = ${key}`,
    );
    expect(rowsOf<{ n: number }>(records)[0]?.n).toBe(0);

    const retried = expectShape(await api.post('/v1/memories', body, { idem: key }), 'memories.create');
    const again = await api.post('/v1/memories', body, { idem: key });
    expect(again.body).toEqual(retried);
    expect(await head()).toBe((before as number) + 1);
  });
});
