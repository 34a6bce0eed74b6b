import { createTestDatabase, type TestDatabase, testMigrateOptions } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger';
import { rowsOf } from '../src/rows';
import type { StandingQuery } from '../src/storage/read-view';
import { revisionRow, UNKEYED } from './rows';

const standing: StandingQuery = { actorId: 'act_reader', credential: null, operator: false };
const POINT_READS_APPLICATION = 'tms-point-reads';

/**
 * With `pointReadConnections`, the one-statement views (memories, evidence, namespaces by id)
 * run on connections of their own, which the driver pipelines; everything else stays on the
 * pool, and inside a transaction a view runs in that transaction (it must see its writes).
 */
describe('point reads on connections of their own (postgres)', () => {
  let database: TestDatabase;
  let ledger: Ledger;
  const statements: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('tms_point_reads');
    ledger = await Ledger.open({
      databaseUrl: database.url,
      maxConnections: 1,
      pointReadConnections: 1,
      onQuery: (text) => statements.push(text),
    });
    await ledger.migrate(testMigrateOptions());
  });

  afterAll(async () => {
    await ledger?.close();
    await database?.drop();
  });

  /** The other backends on this database: which application opened each, and its last statement. */
  async function backends(): Promise<{ application: string; query: string }[]> {
    const result = await ledger.handle.db.execute(
      sql`select application_name as application, query from pg_stat_activity
           where datname = current_database() and pid <> pg_backend_pid()`,
    );
    return rowsOf<{ application: string; query: string }>(result);
  }

  it('runs memories, evidence and namespaces views on the point-read connection, counted like any statement', async () => {
    const views = [
      () => ledger.stores.memories.readView('ws_p', 'mem_absent', standing),
      () => ledger.stores.evidence.readView('ws_p', 'evd_absent', standing, { knownAt: 1, after: null, limit: 10 }),
      () => ledger.stores.evidence.citedView('ws_p', ['evd_absent'], 1),
      () => ledger.stores.namespaces.readView('ws_p', 'ns_absent', standing),
    ];
    for (const view of views) {
      const before = statements.length;
      await view();
      expect(statements.length - before).toBe(1);
      const sent = statements.at(-1) as string;
      const pointReaders = (await backends()).filter((b) => b.application === POINT_READS_APPLICATION);
      expect(pointReaders).toHaveLength(1);
      // pg_stat_activity keeps the first track_activity_query_size bytes (1 KiB by default).
      const shown = pointReaders[0]?.query ?? '';
      expect(shown.length).toBeGreaterThan(200);
      expect(sent.startsWith(shown)).toBe(true);
    }
  });

  it('keeps every other statement on the pool', async () => {
    await ledger.stores.memories.get('ws_p', 'mem_pool_marker');
    const pointReaders = (await backends()).filter((b) => b.application === POINT_READS_APPLICATION);
    expect(pointReaders.map((b) => b.query).join('\n')).not.toContain('from "memories"');
  });

  it('runs a view inside a transaction on that transaction, so it sees the transaction’s own writes', async () => {
    const seen = await ledger.transaction(async (stores) => {
      await stores.memories.insert(
        {
          workspaceId: 'ws_p',
          id: 'mem_tx',
          namespaceId: 'ns_1',
          kind: 'claim',
          generation: 1,
          createdAt: 1,
          purgedAt: null,
          key: null,
          keySha256: null,
          retractedAt: null,
        },
        revisionRow('ws_p', 'rev_tx', { memoryId: 'mem_tx' }),
      );
      return stores.memories.readView('ws_p', 'mem_tx', standing);
    });
    expect(seen.memory?.id).toBe('mem_tx');
    expect(seen.revisions.map((r) => r.id)).toEqual(['rev_tx']);
    // Committed, and then read on the point-read connection.
    const after = await ledger.stores.memories.readView('ws_p', 'mem_tx', standing);
    expect(after.revisions.map((r) => r.id)).toEqual(['rev_tx']);
  });

  it('answers many reads sent together, each with its own row', async () => {
    const ids = Array.from({ length: 64 }, (_, i) => `mem_many_${i}`);
    await ledger.transaction(async (stores) => {
      for (const id of ids) {
        await stores.memories.insert(
          { workspaceId: 'ws_p', id, namespaceId: 'ns_1', kind: 'claim', generation: 1, createdAt: 1, ...UNKEYED },
          revisionRow('ws_p', `rev_${id}`, { memoryId: id }),
        );
      }
    });
    const views = await Promise.all(ids.map((id) => ledger.stores.memories.readView('ws_p', id, standing)));
    expect(views.map((v) => v.memory?.id)).toEqual(ids);
    expect(views.map((v) => v.revisions[0]?.id)).toEqual(ids.map((id) => `rev_${id}`));
  });
});

describe('point reads without connections of their own', () => {
  it('share the pool when pointReadConnections is 0, and on the embedded ledger', async () => {
    const database = await createTestDatabase('tms_point_reads_shared');
    const onPostgres = await Ledger.open({ databaseUrl: database.url, pointReadConnections: 0 });
    const embedded = await Ledger.open({});
    try {
      expect(onPostgres.handle.pointReads).toBe(onPostgres.handle.db);
      expect(embedded.handle.pointReads).toBe(embedded.handle.db);
    } finally {
      await onPostgres.close();
      await embedded.close();
      await database.drop();
    }
  });
});
