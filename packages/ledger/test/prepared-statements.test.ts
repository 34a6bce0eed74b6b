import { createTestDatabase, type TestDatabase, testMigrateOptions } from '@tms/testkit';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger';
import { rowsOf } from '../src/rows';
import { workspaces } from '../src/schema';

// On Postgres, Drizzle's parameterised statements are prepared once per connection (named), so
// that a repeated query costs Postgres no parse and postgres.js no Describe round trip. With one
// connection in the pool, that connection's `pg_prepared_statements` shows what was prepared.
describe('prepared statements (postgres)', () => {
  let database: TestDatabase;
  let ledger: Ledger;

  beforeAll(async () => {
    database = await createTestDatabase('tms_prepared');
    ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: 1 });
    await ledger.migrate(testMigrateOptions());
  });

  afterAll(async () => {
    await ledger?.close();
    await database?.drop();
  });

  /** The statements prepared on the pool's one connection whose text contains `marker`. */
  async function prepared(marker: string): Promise<string[]> {
    const result = await ledger.handle.db.execute(sql`select statement from pg_prepared_statements`);
    return rowsOf<{ statement: string }>(result)
      .map((row) => row.statement)
      .filter((text) => text.includes(marker));
  }

  it('prepares a parameterised select once and reuses it', async () => {
    const select = (id: string) =>
      ledger.handle.db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.id, id));
    for (const id of ['ws_a', 'ws_b', 'ws_c']) expect(await select(id)).toEqual([]);
    const statements = await prepared('from "workspaces" where "workspaces"."id" = $1');
    expect(statements).toHaveLength(1);
  });

  it('prepares inside transactions and savepoints too', async () => {
    await ledger.handle.db.transaction(async (db) => {
      await db.select({ id: workspaces.id }).from(workspaces).where(eq(workspaces.name, 'in a transaction'));
      await db.transaction(async (nested) => {
        await nested.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.name, 'in a savepoint'));
      });
    });
    expect(await prepared('select "id" from "workspaces" where "workspaces"."name" = $1')).toHaveLength(1);
    expect(await prepared('select "name" from "workspaces" where "workspaces"."name" = $1')).toHaveLength(1);
  });

  it('leaves statements without parameters unnamed (their text may carry literals)', async () => {
    await ledger.handle.db.execute(sql.raw('select 12345 as literal_marker'));
    expect(await prepared('literal_marker')).toEqual([]);
  });
});
