import { createTestDatabase, type TestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger';
import { rowsOf } from '../src/rows';

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * `idleInTransactionTimeoutMs`: a transaction that waits on its client longer than this is ended
 * by the server, so a client that lost track of one (a driver that never delivered a statement's
 * answer) cannot keep its locks. The client sees its connection close; the pool serves on.
 */
describe('a transaction idle past idleInTransactionTimeoutMs (postgres)', () => {
  let database: TestDatabase;
  const opened: Ledger[] = [];
  const open = async (idleInTransactionTimeoutMs?: number) => {
    const ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: 1, idleInTransactionTimeoutMs });
    opened.push(ledger);
    return ledger;
  };
  /** A transaction that runs a statement, waits on the client for `idleMs`, then runs another. */
  const idleFor = (ledger: Ledger, idleMs: number) =>
    ledger.transaction(
      async (stores) => {
        await stores.db.execute(sql`select 1`);
        await delay(idleMs);
        return rowsOf<{ two: number }>(await stores.db.execute(sql`select 2 as two`))[0]?.two;
      },
      { retry: false },
    );

  beforeAll(async () => {
    database = await createTestDatabase('tms_idle_transaction');
  });
  afterAll(async () => {
    await Promise.all(opened.map((ledger) => ledger.close()));
    await database?.drop();
  });

  it('is ended by the server, and the pool serves the next statement', async () => {
    const ledger = await open(300);
    const setting = rowsOf<{ value: string }>(
      await ledger.stores.db.execute(sql`select current_setting('idle_in_transaction_session_timeout') as value`),
    );
    expect(setting[0]?.value).toBe('300ms');

    await expect(idleFor(ledger, 1_200)).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    const after = rowsOf<{ one: number }>(await ledger.stores.db.execute(sql`select 1 as one`));
    expect(after[0]?.one).toBe(1);
    // A transaction that keeps talking is not affected.
    expect(await idleFor(ledger, 50)).toBe(2);
  });

  it('is left alone without the option', async () => {
    const ledger = await open();
    expect(await idleFor(ledger, 1_200)).toBe(2);
  });
});
