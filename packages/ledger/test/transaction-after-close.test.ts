import { createTestDatabase, gate, type TestDatabase } from '@tms/testkit';
import postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

// postgres.js 3.4.9 is patched (patches/postgres@3.4.9.patch, porsager/postgres#1186, #1215):
// when a transaction's connection closes, `sql.begin` rejects at once but its callback runs on.
// Its later queries went to the same pooled Connection object once the pool had reconnected it:
// they committed outside any transaction, or, written while the new session was starting, took
// the answers meant for other queries. Queries waiting in the transaction's own queue never
// settled. These tests end a transaction's backend with pg_terminate_backend (a real lost
// connection) and watch what its callback can still do.

type Sql = ReturnType<typeof postgres>;

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown }).code;
}

describe('postgres.js sql.begin after its connection closed', () => {
  let database: TestDatabase;
  let admin: Sql;
  let sql: Sql;
  // One connection: the pool reconnects the very Connection object the transaction held.
  const onePool = () => postgres(database.url, { max: 1, onnotice: () => {} });
  beforeAll(async () => {
    database = await createTestDatabase();
    admin = onePool();
    await admin`create table written (v int)`;
  });
  beforeEach(async () => {
    await sql?.end({ timeout: 1 });
    sql = onePool();
    await admin`truncate written`;
  });
  afterAll(async () => {
    await sql?.end({ timeout: 1 });
    await admin?.end({ timeout: 1 });
    await database?.drop();
  });

  /** Starts a transaction, terminates its backend, and resolves once `begin` has rejected. */
  async function loseTransaction(
    body: (tx: postgres.TransactionSql) => Promise<unknown>,
  ): Promise<{ beginError: unknown; callback: Promise<unknown> }> {
    const backendKnown = gate();
    let pid = 0;
    let callback: Promise<unknown> = Promise.resolve();
    const transaction = sql.begin((tx) => {
      callback = (async () => {
        [{ pid }] = (await tx`select pg_backend_pid() as pid`) as unknown as [{ pid: number }];
        backendKnown.open();
        return body(tx);
      })();
      callback.catch(() => {}); // awaited by the test where it matters
      return callback;
    });
    // Observed before the termination: `begin` may reject before the terminating query returns.
    const outcome = transaction.then(
      () => null,
      (error: unknown) => error,
    );
    await backendKnown.opened;
    await admin`select pg_terminate_backend(${pid})`;
    return { beginError: await outcome, callback };
  }

  it('refuses the callback’s statements once the pool has reconnected, so nothing commits outside the transaction', async () => {
    const later = gate();
    const { beginError, callback } = await loseTransaction(async (tx) => {
      await later.opened;
      await tx`insert into written values (1)`;
    });
    expect(codeOf(beginError)).toBe('CONNECTION_CLOSED');
    // The pool reconnects the same Connection object for an unrelated query.
    await sql`select 1`;
    later.open();
    await expect(callback).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(await admin`select v from written`).toEqual([]);
  });

  it('never hands a pool query the answer of a statement the lost transaction sent while the connection came back', async () => {
    // The callback's statement is sent a few milliseconds after the pool started reconnecting
    // the connection for another query; before the patch one of these delays put it ahead of
    // the new session's startup, and the two queries got each other's rows.
    for (let delayMs = 0; delayMs <= 8; delayMs += 1) {
      const later = gate();
      const { callback } = await loseTransaction(async (tx) => {
        await later.opened;
        return tx`select 'from the lost transaction' as answer`;
      });
      const poolQuery = sql`select 'for the pool query' as answer`;
      setTimeout(later.open, delayMs);
      expect(await poolQuery, `delay ${delayMs} ms`).toEqual([{ answer: 'for the pool query' }]);
      await expect(callback, `delay ${delayMs} ms`).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
      await sql.end({ timeout: 1 });
      sql = onePool();
    }
  });

  it('rejects the queries waiting in the transaction’s own queue when its connection closes', async () => {
    // 150 statements at once: past the driver's pipeline of 100, the rest wait in the
    // transaction's queue, which nothing settled on a lost connection before the patch.
    const { beginError, callback } = await loseTransaction((tx) =>
      Promise.allSettled([
        tx`select pg_sleep(30)`,
        ...Array.from({ length: 149 }, (_, i) => tx`insert into written values (${i})`),
      ]),
    );
    expect(codeOf(beginError)).toBe('CONNECTION_CLOSED');
    const outcomes = (await callback) as PromiseSettledResult<unknown>[];
    expect(outcomes).toHaveLength(150);
    // Every one settles as a lost connection: the driver's own CONNECTION_CLOSED, or, for
    // statements still being written when the backend went, the socket's ECONNRESET (the kernel
    // resets a connection closed with data unread; seen in CI under load).
    const codes = new Set(outcomes.map((o) => (o.status === 'rejected' ? codeOf(o.reason) : 'fulfilled')));
    expect(codes.has('CONNECTION_CLOSED')).toBe(true);
    for (const code of codes) expect(['CONNECTION_CLOSED', 'ECONNRESET']).toContain(code);
    await sql`select 1`;
    expect(await admin`select v from written`).toEqual([]);
  });

  it('refuses a statement from the callback of a transaction that has committed', async () => {
    let leaked: postgres.TransactionSql | null = null;
    await sql.begin(async (tx) => {
      leaked = tx;
      await tx`insert into written values (1)`;
    });
    await expect((leaked as unknown as postgres.TransactionSql)`insert into written values (2)`).rejects.toMatchObject({
      code: 'TRANSACTION_ENDED',
    });
    expect(await admin`select v from written`).toEqual([{ v: 1 }]);
  });
});
