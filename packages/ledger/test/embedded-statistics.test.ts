import { createTestDatabase, testMigrateOptions } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger';
import type { RevisionRow } from '../src/rows';
import { revisionRow, UNKEYED } from './rows';

/** Rows of the ledger whose planner statistics exist (pg_stats), for one table. */
async function statisticRows(ledger: Ledger, table: string): Promise<number> {
  const result = (await ledger.handle.db.execute(
    sql`select count(*)::int as n from pg_stats where schemaname = 'public' and tablename = ${table}`,
  )) as unknown as { rows?: { n: number }[] } & { n: number }[];
  const rows = result.rows ?? result;
  return Number(rows[0]?.n ?? 0);
}

describe('planner statistics of the embedded ledger (PGlite has no autovacuum)', () => {
  let ledger: Ledger;
  let memories = 0;

  /** `count` memories of one revision each, and the workspace's head moved on by as many commits. */
  async function write(count: number) {
    await ledger.transaction(async (stores) => {
      for (let i = 0; i < count; i += 1) {
        memories += 1;
        const revision = revisionRow('ws_stats', `rev_${memories}`, { memoryId: `mem_${memories}` }) as RevisionRow;
        await stores.memories.insert(
          {
            ...UNKEYED,
            workspaceId: 'ws_stats',
            id: `mem_${memories}`,
            namespaceId: 'ns_1',
            kind: 'claim',
            createdAt: 1,
            generation: 1,
          },
          revision,
        );
      }
    });
    await ledger.handle.db.execute(
      sql`insert into workspace_heads (workspace_id, sequence, recorded_at) values ('ws_stats', ${memories}, 1)
          on conflict (workspace_id) do update set sequence = excluded.sequence`,
    );
  }

  beforeAll(async () => {
    ledger = await Ledger.open({});
    await ledger.migrate(testMigrateOptions());
  });
  afterAll(() => ledger.close());

  it('analyzes once the ledger has grown by 50 commits, then again after 10% more', async () => {
    await write(30);
    expect(await ledger.refreshStatistics()).toBe(false);
    expect(await statisticRows(ledger, 'revisions')).toBe(0);
    await write(30);
    expect(await ledger.refreshStatistics()).toBe(true);
    expect(await statisticRows(ledger, 'revisions')).toBeGreaterThan(0);
    expect(await statisticRows(ledger, 'memories')).toBeGreaterThan(0);
    // 60 commits analyzed: the next is due at 60 + 50 + 6.
    await write(55);
    expect(await ledger.refreshStatistics()).toBe(false);
    await write(1);
    expect(await ledger.refreshStatistics()).toBe(true);
  });
});

describe('planner statistics on Postgres', () => {
  it('are autovacuum’s: the ledger leaves them alone', async () => {
    const database = await createTestDatabase('tms_statistics');
    const ledger = await Ledger.open({ databaseUrl: database.url });
    try {
      await ledger.migrate(testMigrateOptions());
      expect(await ledger.refreshStatistics()).toBe(false);
    } finally {
      await ledger.close();
      await database.drop();
    }
  });
});
