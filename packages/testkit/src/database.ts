import crypto from 'node:crypto';
import postgres from 'postgres';

/** Admin connection for creating throwaway databases (trust auth on the local server). */
export const ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  url: string;
  /** The tables in its `public` schema (empty until something migrates it). */
  tableNames(): Promise<string[]>;
  drop(): Promise<void>;
}

/** A fresh, empty Postgres database; `drop()` removes it (and its connections). */
export async function createTestDatabase(prefix = 'tms_test'): Promise<TestDatabase> {
  const name = `${prefix}_${crypto.randomBytes(6).toString('hex')}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async tableNames() {
      const sql = postgres(url.toString(), { max: 1, onnotice: () => {} });
      try {
        const rows = await sql<{ table_name: string }[]>`
          select table_name from information_schema.tables where table_schema = 'public' order by table_name`;
        return rows.map((row) => row.table_name);
      } finally {
        await sql.end();
      }
    },
    async drop() {
      const sql = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await sql.end();
      }
    },
  };
}

/**
 * How tests migrate their ledgers: `TEST_DATABASE_LAYOUT=partitioned` runs the suites on the
 * partitioned layout (docs/scale-out.md); plain otherwise.
 */
export function testMigrateOptions(): { layout: 'plain' | 'partitioned' } {
  return { layout: process.env.TEST_DATABASE_LAYOUT === 'partitioned' ? 'partitioned' : 'plain' };
}
