import { createTestDatabase, type TestDatabase } from '@tms/testkit';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// postgres.js 3.4.9 is patched (patches/postgres@3.4.9.patch, porsager/postgres#1189): a
// transaction's BEGIN that was the query filling its connection's pipeline (100 queries, the
// driver's default `max_pipeline`) was sent without reserving the connection. The transaction
// failed with a TypeError while the server kept its BEGIN open, and the next unrelated queries
// on that connection ran inside it (a rollback there would take their writes with it).
const MAX_PIPELINE = 100;

describe('postgres.js sql.begin at the pipeline boundary', () => {
  let database: TestDatabase;
  let sql: ReturnType<typeof postgres>;
  beforeAll(async () => {
    database = await createTestDatabase();
    sql = postgres(database.url, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await sql?.end({ timeout: 1 });
    await database?.drop();
  });

  it('reserves the connection for a BEGIN that fills the pipeline, and no later query runs inside it', async () => {
    await sql`select 1`; // the connection is open and idle
    // One active query and 99 pipelined behind it: the BEGIN is the 100th in the pipeline.
    const ahead = [sql.unsafe('select pg_sleep(0.05)').execute()];
    for (let i = 1; i < MAX_PIPELINE; i += 1) ahead.push(sql.unsafe('select 1').execute());
    const inTransaction = sql.begin(async (tx) => {
      const [row] = await tx.unsafe('select txid_current()::text as txid');
      return row?.txid as string;
    });
    await Promise.all(ahead);
    const transactionTxid = await inTransaction;

    // Outside any transaction, two statements get two transaction ids; inside a BEGIN left
    // open on the server they would share one.
    const [first] = await sql.unsafe('select txid_current()::text as txid');
    const [second] = await sql.unsafe('select txid_current()::text as txid');
    expect(first?.txid).not.toBe(second?.txid);
    expect([first?.txid, second?.txid]).not.toContain(transactionTxid);
    const [state] = await sql.unsafe(
      'select state, xact_start = query_start as own_transaction from pg_stat_activity where pid = pg_backend_pid()',
    );
    expect(state).toEqual({ state: 'active', own_transaction: true });
  });
});
