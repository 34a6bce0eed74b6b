/**
 * EXPLAIN (ANALYZE, BUFFERS) of the lexical arm's statements on a database kept by `scale --keep`:
 * each statement the provider sends is explained, then run, and the search is done twice (the
 * second time with the catalog and the pages cached). `SCALE_LARGE_SHARE` as the load had it.
 * Usage: pnpm --filter @tms/bench exec tsx explain-lexical.ts <size> <namespace|large|workspace> "<query>" [limit]
 */
import fs from 'node:fs';
import { Ledger } from '@tms/ledger';
import { PostgresSearchProvider } from '@tms/search';
import { ADMIN_URL } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { scaleStateFile } from './scale-state';

const [size, scope, text, limit] = process.argv.slice(2) as [string, string, string, string | undefined];
const state = JSON.parse(fs.readFileSync(scaleStateFile(Number(size)), 'utf8'));
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
      if (prop !== 'execute') return Reflect.get(target, prop, receiver);
      return async (query: never) => {
        const plan = await target.execute(sql`explain (analyze, buffers) ${query}`);
        for (const row of plan as unknown as { 'QUERY PLAN': string }[]) process.stdout.write(`${row['QUERY PLAN']}\n`);
        process.stdout.write('----\n');
        return target.execute(query);
      };
    },
  });
  const provider = new PostgresSearchProvider(explaining as never);
  const now = Date.now() / 1000;
  for (const round of [1, 2]) {
    process.stdout.write(`==== round ${round}\n`);
    const hits = await provider.search({
      workspaceId: state.workspace,
      namespaceIds,
      text,
      asOf: now,
      knownAt: now,
      limit: Number(limit ?? 40),
      offset: 0,
    });
    process.stdout.write(`${hits.length} hits\n`);
  }
} finally {
  await ledger.close();
}
