/**
 * Scratch: EXPLAIN (ANALYZE, BUFFERS) of the lexical arm's query on a kept scale database.
 * Usage: tsx explain-lexical.ts <size> <scope: namespace|large|workspace> "<query>" [limit]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ledger } from '@tms/ledger';
import { PostgresSearchProvider } from '@tms/search';
import { ADMIN_URL } from '@tms/testkit';
import { sql } from 'drizzle-orm';

const [size, scope, text, limit] = process.argv.slice(2) as [string, string, string, string | undefined];
const state = JSON.parse(fs.readFileSync(path.join(os.tmpdir(), `tms-bench-scale-${size}.json`), 'utf8'));
const url = new URL(ADMIN_URL);
url.pathname = `/${state.database}`;
const ledger = await Ledger.open({ databaseUrl: url.toString(), maxConnections: 1 });
try {
  const namespaceIds: string[] =
    scope === 'namespace'
      ? [state.small[0]]
      : scope === 'large'
        ? [state.large]
        : [state.root, state.large, ...state.small];
  const db = ledger.handle.db;
  const explaining = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'execute') {
        return async (query: never) => {
          const result = await target.execute(sql`explain (analyze, buffers) ${query}`);
          for (const row of result as unknown as { 'QUERY PLAN': string }[])
            process.stdout.write(`${row['QUERY PLAN']}\n`);
          return [];
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  const provider = new PostgresSearchProvider(explaining as never);
  const now = Date.now() / 1000;
  await provider.search({
    workspaceId: state.workspace,
    namespaceIds,
    text,
    asOf: now,
    knownAt: now,
    limit: Number(limit ?? 40),
    offset: 0,
  });
} finally {
  await ledger.close();
}
