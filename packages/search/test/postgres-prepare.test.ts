import { type Database, Ledger } from '@tms/ledger';
import { createTestDatabase, type TestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEXICAL_LAYOUT_VERSION, PostgresSearchProvider } from '../src/postgres-provider';

const rowsOf = <T>(result: unknown): T[] =>
  (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as T[];

const SEARCH_TABLES = ['documents', 'layout', 'namespace_stats', 'term_stats'];

async function searchTables(db: Database): Promise<string[]> {
  const result = await db.execute(
    sql`select tablename from pg_tables where schemaname = 'search' and tablename in (${sql.join(
      SEARCH_TABLES.map((t) => sql`${t}`),
      sql`, `,
    )}) order by tablename`,
  );
  return rowsOf<{ tablename: string }>(result).map((r) => r.tablename);
}

/** The index as the first release made it (layout 1, no record of its version), with one document. */
async function createLayoutOne(db: Database): Promise<void> {
  await db.execute(sql`create schema if not exists search`);
  await db.execute(sql`
    create table search.documents (
      workspace_id text not null, revision_id text not null, memory_id text not null,
      namespace_id text not null, kind text not null, tsv tsvector not null,
      valid_from double precision not null, valid_to double precision,
      recorded_at double precision not null, recorded_until double precision,
      primary key (workspace_id, revision_id))`);
  await db.execute(sql`create index documents_tsv on search.documents using gin (tsv)`);
  await db.execute(sql`
    insert into search.documents values
      ('ws_1', 'rev_old', 'mem_old', 'ns_1', 'claim', to_tsvector('simple', 'an old heron'), 0, null, 1, null)`);
  for (const [workspace, head] of [
    ['ws_1', 7],
    ['ws_2', 3],
  ] as const) {
    await db.execute(
      sql`insert into workspace_heads (workspace_id, sequence, recorded_at) values (${workspace}, ${head}, 1)`,
    );
  }
}

async function cursors(ledger: Ledger) {
  return {
    ws1: await ledger.stores.indexState.indexedSequence('ws_1', 'postgres'),
    ws2: await ledger.stores.indexState.indexedSequence('ws_2', 'postgres'),
    ws1Meili: await ledger.stores.indexState.indexedSequence('ws_1', 'meilisearch'),
  };
}

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

  // Before the ledger's own tables exist too (nothing to reset then).
  it('eight concurrent prepares on a fresh database all succeed and leave one index', async () => {
    const results = await Promise.allSettled(
      ledgers.map((ledger) => new PostgresSearchProvider(ledger.handle.db).prepare()),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const [first] = ledgers as [Ledger];
    expect(await searchTables(first.handle.db)).toEqual(SEARCH_TABLES);
  });

  it('eight concurrent prepares on a first-release index upgrade it once and send its cursors back to 0', async () => {
    const [first] = ledgers as [Ledger];
    await first.migrate();
    await first.handle.db.execute(sql`drop schema search cascade`);
    await createLayoutOne(first.handle.db);
    await first.stores.indexState.advance('ws_1', 'postgres', 7, 1);
    await first.stores.indexState.advance('ws_2', 'postgres', 3, 1);
    await first.stores.indexState.advance('ws_1', 'meilisearch', 7, 1);

    const results = await Promise.allSettled(
      ledgers.map((ledger) => new PostgresSearchProvider(ledger.handle.db).prepare()),
    );
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(await searchTables(first.handle.db)).toEqual(SEARCH_TABLES);
    expect(await cursors(first)).toEqual({ ws1: 0, ws2: 0, ws1Meili: 7 });
    expect(await new PostgresSearchProvider(first.handle.db).indexedRevisionIds('ws_1')).toEqual([]);
  });

  it('an upgrade waits for an indexer batch in flight, then resets the cursor that batch advanced', async () => {
    const [first, second] = ledgers as [Ledger, Ledger];
    await first.handle.db.execute(sql`update search.layout set version = ${LEXICAL_LAYOUT_VERSION + 1}`);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let claimed = () => {};
    const claim = new Promise<void>((resolve) => {
      claimed = resolve;
    });
    // An indexer's batch: it claims the workspace, applies (to the old tables), then advances
    // its cursor, and holds the claim until that advance commits.
    const batch = first.transaction(async (stores) => {
      expect(await stores.indexState.tryClaim('ws_1')).toBe(true);
      claimed();
      await held;
      await stores.indexState.advance('ws_1', 'postgres', 7, 5);
    });
    await claim;
    let prepared = false;
    const preparing = new PostgresSearchProvider(second.handle.db).prepare().then(() => {
      prepared = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(prepared).toBe(false);
    release();
    await batch;
    await preparing;
    expect((await cursors(first)).ws1).toBe(0);
  });
});

describe.each(['pglite', 'postgres'] as const)('postgres search provider: layout upgrade (%s)', (driver) => {
  let database: TestDatabase | null = null;
  let ledger: Ledger;
  let provider: PostgresSearchProvider;
  beforeAll(async () => {
    if (driver === 'postgres') database = await createTestDatabase('tms_search_upgrade');
    ledger = await Ledger.open(database ? { databaseUrl: database.url } : { dataDir: 'memory://' });
    await ledger.migrate();
    provider = new PostgresSearchProvider(ledger.handle.db);
  });
  afterAll(async () => {
    await ledger?.close();
    await database?.drop();
  });

  it('rebuilds a first-release index empty, records its layout and resets only its own cursors', async () => {
    await createLayoutOne(ledger.handle.db);
    await ledger.stores.indexState.advance('ws_1', 'postgres', 7, 1);
    await ledger.stores.indexState.advance('ws_2', 'postgres', 3, 1);
    await ledger.stores.indexState.advance('ws_1', 'meilisearch', 7, 1);
    expect(await provider.indexedRevisionIds('ws_1')).toEqual(['rev_old']);

    await provider.prepare();
    expect(await searchTables(ledger.handle.db)).toEqual(SEARCH_TABLES);
    const layout = rowsOf<{ part: string; version: number }>(
      await ledger.handle.db.execute(sql`select part, version from search.layout`),
    );
    expect(layout).toEqual([{ part: 'lexical', version: LEXICAL_LAYOUT_VERSION }]);
    expect(await cursors(ledger)).toEqual({ ws1: 0, ws2: 0, ws1Meili: 7 });
    expect(await provider.indexedRevisionIds('ws_1')).toEqual([]);

    // The new layout works, and preparing it again keeps documents and cursors.
    await provider.apply('ws_1', {
      upserts: [
        {
          workspaceId: 'ws_1',
          revisionId: 'rev_new',
          memoryId: 'mem_old',
          namespaceId: 'ns_1',
          kind: 'claim',
          text: 'an old heron',
          validFrom: 0,
          validTo: null,
          recordedAt: 1,
          recordedUntil: null,
        },
      ],
      deletes: [],
    });
    await ledger.stores.indexState.advance('ws_1', 'postgres', 7, 2);
    await provider.prepare();
    expect(await provider.indexedRevisionIds('ws_1')).toEqual(['rev_new']);
    expect((await cursors(ledger)).ws1).toBe(7);
    const hits = await provider.search({
      workspaceId: 'ws_1',
      text: 'herons',
      namespaceIds: ['ns_1'],
      asOf: 1,
      knownAt: 2,
      limit: 5,
      offset: 0,
    });
    expect(hits.map((h) => h.revisionId)).toEqual(['rev_new']);
  });

  it('rebuilds an index of another recorded layout version', async () => {
    await ledger.handle.db.execute(sql`update search.layout set version = ${LEXICAL_LAYOUT_VERSION + 1}`);
    await ledger.stores.indexState.advance('ws_2', 'postgres', 3, 3);
    await provider.prepare();
    expect(await provider.indexedRevisionIds('ws_1')).toEqual([]);
    expect(await cursors(ledger)).toEqual({ ws1: 0, ws2: 0, ws1Meili: 7 });
  });

  it('rewrites the tables unlogged or logged as asked, keeping their rows, and rebuilds them when their sentinel row is gone', async () => {
    const db = ledger.handle.db;
    const persistence = async () =>
      rowsOf<{ relname: string; relpersistence: string }>(
        await db.execute(sql`
          select relname, relpersistence from pg_class where relnamespace = 'search'::regnamespace and relkind = 'r'
             and relname in ('documents', 'term_stats', 'namespace_stats', 'lexical_sentinel') order by relname`),
      ).map((r) => `${r.relname}:${r.relpersistence}`);
    const heron = {
      workspaceId: 'ws_1',
      revisionId: 'rev_kept',
      memoryId: 'mem_kept',
      namespaceId: 'ns_1',
      kind: 'claim' as const,
      text: 'a heron kept',
      validFrom: 0,
      validTo: null,
      recordedAt: 1,
      recordedUntil: null,
    };
    const query = {
      workspaceId: 'ws_1',
      text: 'heron',
      namespaceIds: ['ns_1'],
      asOf: 1,
      knownAt: 2,
      limit: 5,
      offset: 0,
    };
    await provider.prepare();
    await provider.apply('ws_1', { upserts: [heron], deletes: [] });
    await ledger.stores.indexState.advance('ws_1', 'postgres', 5, 4);

    const unlogged = new PostgresSearchProvider(db, {}, { unlogged: true });
    await unlogged.prepare();
    expect(await persistence()).toEqual(['documents:u', 'lexical_sentinel:u', 'namespace_stats:u', 'term_stats:u']);
    expect((await unlogged.search(query)).map((h) => h.revisionId)).toEqual(['rev_kept']);
    expect((await cursors(ledger)).ws1).toBe(5);
    await provider.prepare();
    expect(await persistence()).toEqual(['documents:p', 'lexical_sentinel:p', 'namespace_stats:p', 'term_stats:p']);
    expect((await provider.search(query)).map((h) => h.revisionId)).toEqual(['rev_kept']);
    await unlogged.prepare();

    // What Postgres leaves after a crash: the unlogged tables empty, the sentinel's row with them
    // (services/gateway/test/faults/postgres-crash.test.ts crashes a server for real).
    await db.execute(
      sql`truncate search.documents, search.term_stats, search.namespace_stats, search.lexical_sentinel`,
    );
    await expect(unlogged.search(query)).rejects.toThrow(/lost its rows/);
    await expect(unlogged.verifyIntact()).rejects.toThrow(/lost its rows/);
    await unlogged.prepare();
    expect((await cursors(ledger)).ws1).toBe(0);
    await unlogged.verifyIntact();
    expect(await unlogged.search(query)).toEqual([]);
    // A recall that read the cursor before the rebuild (at 5) gets no answer from the emptied index.
    await expect(unlogged.search({ ...query, indexedSequence: 5 })).rejects.toThrow(/being rebuilt/);
    expect(await unlogged.search({ ...query, indexedSequence: 0 })).toEqual([]);
  });
});
