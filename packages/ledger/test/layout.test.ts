import { createTestDatabase, type TestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CITUS_MISSING } from '../src/database';
import { Ledger } from '../src/index';
import { partitionedStatements } from '../src/layout';
import { rowsOf } from '../src/rows';

describe('migration layouts', () => {
  it('partitions a distributed CREATE TABLE and leaves everything else alone', () => {
    const create = 'CREATE TABLE "commits" (\n\t"workspace_id" text NOT NULL,\n\t"sequence" bigint NOT NULL\n);\n';
    const out = partitionedStatements(create);
    expect(out).toHaveLength(9);
    expect(out[0]).toMatch(/\)\s*PARTITION BY HASH \("workspace_id"\);$/);
    expect(out[8]).toBe('CREATE TABLE "commits_p7" PARTITION OF "commits" FOR VALUES WITH (MODULUS 8, REMAINDER 7);');
    const reference = 'CREATE TABLE "actors" (\n\t"id" text PRIMARY KEY NOT NULL\n);\n';
    expect(partitionedStatements(reference)).toEqual([reference]);
    const alter = 'ALTER TABLE "commits" ADD COLUMN "x" text;';
    expect(partitionedStatements(alter)).toEqual([alter]);
  });

  describe('on postgres', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase('tms_layout');
    });
    afterAll(() => database?.drop());

    it('CITUS=1 on a database without Citus migrates, then stops naming the missing extension', async () => {
      const ledger = await Ledger.open({ databaseUrl: database.url });
      try {
        await expect(ledger.migrate({ layout: 'plain', citus: true })).rejects.toThrow(CITUS_MISSING);
        expect(await ledger.ready()).toBe(true);
        const keys = rowsOf<{ n: number }>(
          await ledger.handle.db.execute(sql`select count(*)::int as n from pg_class where relname = 'revisions_p0'`),
        );
        expect(keys[0]?.n).toBe(0);
      } finally {
        await ledger.close();
      }
    });
  });

  it('the embedded ledger refuses CITUS=1', async () => {
    const ledger = await Ledger.open({});
    try {
      await expect(ledger.migrate({ citus: true })).rejects.toThrow('CITUS=1 needs DATABASE_URL');
    } finally {
      await ledger.close();
    }
  });
});
