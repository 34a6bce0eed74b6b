import { Ledger } from '@tms/ledger';
import { createTestDatabase, type TestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresSearchProvider } from '../src/postgres-provider';

// Gateway replicas start together on one database: each prepares the embedded index.
describe('postgres search provider: preparation by processes starting together', () => {
  let database: TestDatabase;
  let ledgers: Ledger[] = [];
  beforeAll(async () => {
    database = await createTestDatabase('tms_search_prepare');
    // One ledger (own connection pool) per would-be process.
    ledgers = await Promise.all(Array.from({ length: 8 }, () => Ledger.open({ databaseUrl: database.url })));
  });
  afterAll(async () => {
    await Promise.all(ledgers.map((ledger) => ledger.close()));
    await database?.drop();
  });

  it('eight concurrent prepares on a fresh database all succeed and leave one index', async () => {
    const results = await Promise.allSettled(
      ledgers.map((ledger) => new PostgresSearchProvider(ledger.handle.db).prepare()),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const [first] = ledgers as [Ledger];
    const tables = await first.handle.db.execute(
      sql`select count(*)::int as n from pg_tables where schemaname = 'search'`,
    );
    const rows = (Array.isArray(tables) ? tables : (tables as { rows: unknown[] }).rows) as { n: number }[];
    expect(rows[0]?.n).toBe(1);
  });
});
