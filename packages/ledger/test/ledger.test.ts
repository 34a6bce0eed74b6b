import { createTestDatabase, type TestDatabase, testMigrateOptions } from '@tms/testkit';
import { asc, eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TABLE_PLACEMENT } from '../src/distribution';
import { decodePathKey, encodePathKey, GENESIS_CHAIN_HASH, Ledger, schema } from '../src/index';
import { evidenceRow, revisionRow } from './rows';

type Driver = 'pglite' | 'postgres';
const DRIVERS: Driver[] = ['pglite', 'postgres'];

/** `db.execute` answers an array on postgres-js and `{ rows }` on PGlite. */
async function query<T>(ledger: Ledger, statement: ReturnType<typeof sql>): Promise<T[]> {
  const result = (await ledger.handle.db.execute(statement)) as unknown;
  return (Array.isArray(result) ? result : ((result as { rows: T[] }).rows ?? [])) as T[];
}

/** A ledger on a fresh database of the given driver; nothing migrated yet. */
async function openFresh(driver: Driver): Promise<{ ledger: Ledger; close(): Promise<void> }> {
  if (driver === 'pglite') {
    const ledger = await Ledger.open({ dataDir: 'memory://' });
    return { ledger, close: () => ledger.close() };
  }
  const database: TestDatabase = await createTestDatabase();
  const ledger = await Ledger.open({ databaseUrl: database.url });
  return {
    ledger,
    async close() {
      await ledger.close();
      await database.drop();
    },
  };
}

/** The directory tables (decisions §6): the only ones allowed to lack `workspace_id` in their keys. */
/** The reference tables of schema/distribution.json: copied to every node, no workspace key. */
const DIRECTORY_TABLES = new Set(
  Object.entries(TABLE_PLACEMENT)
    .filter(([, placement]) => placement === 'reference')
    .map(([table]) => table),
);

/** The largest double below `x` (finite x). */
function nextDown(x: number): number {
  if (x === 0) return -Number.MIN_VALUE;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) + (x > 0 ? -1n : 1n));
  return view.getFloat64(0);
}

/** Segment-by-segment comparison of display paths, each segment by Unicode code point. */
function comparePaths(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const x = Array.from(a[i] as string, (c) => c.codePointAt(0) as number);
    const y = Array.from(b[i] as string, (c) => c.codePointAt(0) as number);
    for (let j = 0; j < Math.min(x.length, y.length); j += 1) {
      if (x[j] !== y[j]) return (x[j] as number) - (y[j] as number);
    }
    if (x.length !== y.length) return x.length - y.length;
  }
  return a.length - b.length;
}

describe('path-key encoding (pure)', () => {
  const paths: string[][] = [
    ['a'],
    ['a', 'b'],
    ['a', 'b', 'c'],
    ['a', '\u0000'],
    ['a', '\u0001'],
    ['a', '\u0001\u0000'],
    ['a', '\u0002'],
    ['a!'],
    ['a\u0000'],
    ['a\u0000', 'z'],
    ['a\u0000\u0000'],
    ['a\u0000\u0001'],
    ['a\u0001'],
    ['a\u0001', '\u0001'],
    ['a\u0001\u0001'],
    ['a\u0002'],
    ['ab'],
    ['b'],
    ['é'],
    ['\uFFFD'],
    ['\u{1F600}'],
    ['\u{1F600}', 'x'],
    ['\u{10FFFF}'],
    ['\u0000'],
    ['\u0001'],
    ['\u0000', '\u0000'],
  ];

  it('decodes every key back to its segments, U+0000 and U+0001 included', () => {
    for (const path of paths) expect(decodePathKey(encodePathKey(path))).toEqual(path);
  });

  it('never puts 0x00 inside a segment, so the separator is unambiguous', () => {
    const key = encodePathKey(['x\u0000y\u0001z']);
    expect([...key]).not.toContain(0x00);
    expect(encodePathKey(['a', 'b']).equals(encodePathKey(['a\u0000b']))).toBe(false);
    expect(encodePathKey(['a\u0001', 'b']).equals(encodePathKey(['a', '\u0001b']))).toBe(false);
  });

  it('orders keys bytewise exactly as display paths compare segment by segment (code points)', () => {
    const expected = [...paths].sort(comparePaths);
    const byKey = [...paths].sort((a, b) => Buffer.compare(encodePathKey(a), encodePathKey(b)));
    expect(byKey).toEqual(expected);
    // A parent sorts right before its subtree, before any sibling that extends its name.
    const names = expected.map((p) => JSON.stringify(p));
    expect(names.indexOf(JSON.stringify(['a']))).toBeLessThan(names.indexOf(JSON.stringify(['a', 'b'])));
    expect(names.indexOf(JSON.stringify(['a', 'b', 'c']))).toBeLessThan(names.indexOf(JSON.stringify(['a!'])));
    expect(names.indexOf(JSON.stringify(['a', '\u0002']))).toBeLessThan(names.indexOf(JSON.stringify(['a\u0000'])));
    // Code point order, not UTF-16 order: U+FFFD sorts before U+1F600.
    expect(names.indexOf(JSON.stringify(['\uFFFD']))).toBeLessThan(names.indexOf(JSON.stringify(['\u{1F600}'])));
  });

  it('agrees with segment order on many generated paths', () => {
    // Deterministic generator (xorshift) over an alphabet dense in the escape bytes.
    let state = 0x9e3779b9;
    const next = (n: number) => {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      return (state >>> 0) % n;
    };
    const alphabet = ['\u0000', '\u0001', '\u0002', 'a', 'b', '\u007f', 'é', '\uFFFD', '\u{1F600}'];
    const generated: string[][] = [];
    for (let i = 0; i < 400; i += 1) {
      const depth = 1 + next(3);
      const path: string[] = [];
      for (let d = 0; d < depth; d += 1) {
        let segment = '';
        const length = 1 + next(3);
        for (let c = 0; c < length; c += 1) segment += alphabet[next(alphabet.length)];
        path.push(segment);
      }
      generated.push(path);
    }
    for (const path of generated) expect(decodePathKey(encodePathKey(path))).toEqual(path);
    for (let i = 1; i < generated.length; i += 1) {
      const a = generated[i - 1] as string[];
      const b = generated[i] as string[];
      expect(Math.sign(Buffer.compare(encodePathKey(a), encodePathKey(b)))).toBe(Math.sign(comparePaths(a, b)));
    }
  });
});

describe.each(DRIVERS)('ledger on %s', (driver) => {
  describe('migrations', () => {
    let opened: { ledger: Ledger; close(): Promise<void> } | null = null;
    afterEach(async () => {
      await opened?.close();
      opened = null;
    });

    it('is not ready before migrate and ready after it', async () => {
      opened = await openFresh(driver);
      const { ledger } = opened;
      expect(ledger.driver).toBe(driver);
      expect(await ledger.ready()).toBe(false);
      await ledger.migrate(testMigrateOptions());
      expect(await ledger.ready()).toBe(true);
      const tables = await query<{ table_name: string }>(
        ledger,
        sql`select table_name from information_schema.tables where table_schema = 'public' order by table_name`,
      );
      expect(tables.map((t) => t.table_name)).toEqual(
        expect.arrayContaining([
          'actors',
          'commits',
          'evidence',
          'idempotency_records',
          'memories',
          'namespaces',
          'revisions',
          'verifications',
          'workspace_heads',
        ]),
      );
    });

    it('a second migrate is a no-op that keeps the data', async () => {
      opened = await openFresh(driver);
      const { ledger } = opened;
      await ledger.migrate(testMigrateOptions());
      const applied = async () =>
        (await query<{ n: number }>(ledger, sql`select count(*)::int as n from drizzle.__drizzle_migrations`))[0]?.n;
      const before = await applied();
      expect(before).toBeGreaterThan(0);
      const actor = await ledger.stores.directory.findOrCreateActor('https://issuer.test', 'alice', 1);
      await ledger.migrate(testMigrateOptions());
      expect(await applied()).toBe(before);
      expect(await ledger.ready()).toBe(true);
      expect(await ledger.stores.directory.findActor('https://issuer.test', 'alice')).toEqual(actor);
    });
  });

  describe('with a migrated ledger', () => {
    let opened: { ledger: Ledger; close(): Promise<void> };
    let ledger: Ledger;
    beforeAll(async () => {
      opened = await openFresh(driver);
      ledger = opened.ledger;
      await ledger.migrate(testMigrateOptions());
    });
    afterAll(() => opened?.close());

    it('every table but the directory ones has workspace_id in its primary key and every unique index', async () => {
      const tables = await query<{ table_name: string }>(
        ledger,
        sql`select table_name from information_schema.tables
             where table_schema = 'public' and table_type = 'BASE TABLE'`,
      );
      const keys = await query<{ table_name: string; index_name: string; is_primary: boolean; columns: string }>(
        ledger,
        sql`select t.relname as table_name, i.relname as index_name, x.indisprimary as is_primary,
                   coalesce(string_agg(a.attname::text, ',' order by k.ord), '') as columns
              from pg_index x
              join pg_class t on t.oid = x.indrelid
              join pg_class i on i.oid = x.indexrelid
              join pg_namespace n on n.oid = t.relnamespace
              cross join lateral unnest(x.indkey::int2[]) with ordinality as k(attnum, ord)
              left join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
             where n.nspname = 'public' and (x.indisprimary or x.indisunique)
             group by t.relname, i.relname, x.indisprimary`,
      );
      const ledgerTables = tables.map((t) => t.table_name).filter((name) => !DIRECTORY_TABLES.has(name));
      // The guard must actually look at the ledger tables.
      expect(ledgerTables).toEqual(
        expect.arrayContaining([
          'commits',
          'evidence',
          'grants',
          'idempotency_records',
          'revisions',
          'workspace_heads',
        ]),
      );
      const failures: string[] = [];
      for (const table of ledgerTables) {
        const own = keys.filter((k) => k.table_name === table);
        if (!own.some((k) => k.is_primary)) failures.push(`${table}: no primary key`);
        for (const key of own) {
          // An expression column (attnum 0) leaves an empty name; workspace_id must be a plain column.
          if (!key.columns.split(',').includes('workspace_id'))
            failures.push(`${table}.${key.index_name}: ${key.columns}`);
        }
      }
      expect(failures).toEqual([]);
      // Sanity: the query sees unique indexes as well as primary keys.
      expect(keys.some((k) => k.index_name === 'evidence_dedup' && !k.is_primary)).toBe(true);
      expect(keys.find((k) => k.index_name === 'revisions_generation')?.columns).toBe(
        'workspace_id,memory_id,generation',
      );
    });

    it('utf8 columns round-trip U+0000 and astral characters byte for byte', async () => {
      const samples = [
        'a\u0000b',
        '\u0000',
        '\u0000\u0000\u0001',
        '\u{1F600}\u{10FFFF}\u{10000}',
        'é\u0000\u{1F4A9}\u200D\uFEFF\r\n\t',
        `${'x'.repeat(1000)}\u0000${'\u{1D11E}'.repeat(500)}`,
      ];
      const ws = 'ws_utf8';
      for (const [i, text] of samples.entries()) {
        await ledger.stores.evidence.insert(
          evidenceRow(ws, `ev_${i}`, {
            excerpt: text,
            sourceLocator: `loc\u0000${text}`,
            excerptSha256: `${i}`.repeat(64).slice(0, 64),
          }),
        );
        await ledger.stores.memories.insert(
          {
            workspaceId: ws,
            id: `mem_rev_${i}`,
            namespaceId: 'ns_1',
            kind: 'claim',
            generation: 1,
            createdAt: 1,
            purgedAt: null,
            key: null,
            keySha256: null,
            retractedAt: null,
          },
          revisionRow(ws, `rev_${i}`, { text }),
        );
      }
      for (const [i, text] of samples.entries()) {
        const ev = await ledger.stores.evidence.get(ws, `ev_${i}`);
        expect(ev?.excerpt).toBe(text);
        expect(ev?.sourceLocator).toBe(`loc\u0000${text}`);
        const [rev] = await ledger.stores.memories.getRevisions(ws, [`rev_${i}`]);
        expect(rev?.text).toBe(text);
        // The stored bytes are exactly the UTF-8 encoding.
        const [raw] = await query<{ hex: string; n: number }>(
          ledger,
          sql`select encode(excerpt, 'hex') as hex, octet_length(excerpt)::int as n
                from evidence where workspace_id = ${ws} and id = ${`ev_${i}`}`,
        );
        expect(raw?.hex).toBe(Buffer.from(text, 'utf8').toString('hex'));
        expect(raw?.n).toBe(Buffer.byteLength(text, 'utf8'));
      }
    });

    it('double precision times round-trip exactly', async () => {
      const times = [0.1, -1.5, 1e15, 1700000000.123456, nextDown(1700000000.123456), 5e-324, -0.000001];
      const ws = 'ws_times';
      for (const [i, t] of times.entries()) {
        await ledger.stores.commits.insert({
          workspaceId: ws,
          sequence: i + 1,
          recordedAt: t,
          operation: 'test',
          actorId: 'act_1',
          subjectIds: [],
        });
        await ledger.stores.memories.insert(
          {
            workspaceId: ws,
            id: `mem_t${i}`,
            namespaceId: 'ns_1',
            kind: 'claim',
            generation: 1,
            createdAt: t,
            purgedAt: null,
            key: null,
            keySha256: null,
            retractedAt: null,
          },
          revisionRow(ws, `rev_t${i}`, { memoryId: `mem_t${i}`, validFrom: t, validTo: t + 1, recordedAt: t }),
        );
      }
      const rows = await ledger.handle.db
        .select()
        .from(schema.commits)
        .where(eq(schema.commits.workspaceId, ws))
        .orderBy(asc(schema.commits.sequence));
      expect(rows.map((r) => r.recordedAt)).toEqual(times);
      for (const [i, t] of times.entries()) {
        const [rev] = await ledger.stores.memories.getRevisions(ws, [`rev_t${i}`]);
        expect(Object.is(rev?.validFrom, t)).toBe(true);
        expect(rev?.validTo).toBe(t + 1);
        expect((await ledger.stores.memories.get(ws, `mem_t${i}`))?.createdAt).toBe(t);
        // Compared in SQL, a parameter equals the stored value (no precision lost on the way in).
        const hits = await ledger.stores.memories.revisionsKnownAt(ws, `mem_t${i}`, { knownAt: t });
        expect(hits.map((r) => r.id)).toEqual([`rev_t${i}`]);
        const none = await ledger.stores.memories.revisionsKnownAt(ws, `mem_t${i}`, { knownAt: nextDown(t) });
        expect(none).toEqual([]);
      }
      // The largest finite double works as an "everything so far" bound.
      const all = await ledger.stores.memories.revisionsKnownAt(ws, 'mem_t2', { knownAt: Number.MAX_VALUE });
      expect(all.map((r) => r.id)).toEqual(['rev_t2']);
    });

    it('commit allocation is gap-free per workspace and recorded_at never goes backwards', async () => {
      await ledger.stores.commits.createHead('ws_alloc_a');
      await ledger.stores.commits.createHead('ws_alloc_b');
      const a1 = await ledger.transaction((s) => s.commits.allocate('ws_alloc_a'));
      const b1 = await ledger.transaction((s) => s.commits.allocate('ws_alloc_b'));
      const a2 = await ledger.transaction((s) => s.commits.allocate('ws_alloc_a'));
      expect([a1.sequence, a2.sequence, b1.sequence]).toEqual([1, 2, 1]);
      // Before sequence 1 the chain starts from genesis.
      expect(a1.previousChainHash).toBe(GENESIS_CHAIN_HASH);
      expect(a2.recordedAt).toBeGreaterThanOrEqual(a1.recordedAt);

      // A head recorded in the future (clock skew) holds recorded_at there.
      const future = a2.recordedAt + 10_000.5;
      await ledger.handle.db
        .update(schema.workspaceHeads)
        .set({ recordedAt: future })
        .where(eq(schema.workspaceHeads.workspaceId, 'ws_alloc_a'));
      const a3 = await ledger.transaction((s) => s.commits.allocate('ws_alloc_a'));
      // The chain hash before is commit 2's: this test wrote no commit rows, so there is none.
      expect(a3).toEqual({ sequence: 3, recordedAt: future, previousChainHash: null });
      expect(await ledger.stores.commits.head('ws_alloc_a')).toEqual({ sequence: 3, recordedAt: future });

      // A transaction that fails gives its sequence back.
      await expect(
        ledger.transaction(async (s) => {
          await s.commits.allocate('ws_alloc_b');
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect((await ledger.stores.commits.head('ws_alloc_b'))?.sequence).toBe(1);
      expect((await ledger.transaction((s) => s.commits.allocate('ws_alloc_b'))).sequence).toBe(2);
    });

    it.runIf(driver === 'postgres')(
      'a writer that waited for the head lock chains on from the commit the holder wrote',
      async () => {
        const ws = 'ws_alloc_wait';
        await ledger.stores.commits.createHead(ws);
        const holderHash = 'a'.repeat(64);
        let release!: () => void;
        const released = new Promise<void>((resolve) => {
          release = resolve;
        });
        let locked!: () => void;
        const holding = new Promise<void>((resolve) => {
          locked = resolve;
        });
        const holder = ledger.transaction(async (s) => {
          const stamp = await s.commits.allocate(ws);
          await s.commits.insert({
            workspaceId: ws,
            sequence: stamp.sequence,
            recordedAt: stamp.recordedAt,
            operation: 'test',
            actorId: 'act_t',
            subjectIds: [],
            chainHash: holderHash,
          });
          locked();
          await released;
        });
        await holding;
        // The waiter's statement starts (and takes its snapshot) before the holder commits.
        const waiter = ledger.transaction((s) => s.commits.allocate(ws));
        await new Promise((resolve) => setTimeout(resolve, 200));
        release();
        await holder;
        expect(await waiter).toMatchObject({ sequence: 2, previousChainHash: holderHash });
      },
    );

    it('lists namespaces in display-path order by their stored keys', async () => {
      const ws = 'ws_paths';
      const paths = [
        ['b'],
        ['a', '\u0001'],
        ['a\u0000'],
        ['a'],
        ['a', 'b'],
        ['a\u0001'],
        ['a', '\u0000'],
        ['a!'],
        ['\u{1F600}'],
        ['\uFFFD'],
        ['a', 'b', 'c'],
      ];
      for (const [i, path] of paths.entries()) {
        await ledger.stores.namespaces.insert({
          workspaceId: ws,
          id: `ns_${String(i).padStart(2, '0')}`,
          parentId: null,
          name: path.at(-1) as string,
          ancestorIds: [],
          pathKey: encodePathKey(path),
          createdAt: 1,
          updatedAt: 1,
        });
      }
      const listed = await ledger.stores.namespaces.list(ws, {
        parentId: undefined,
        visibility: 'all',
        after: null,
        limit: 100,
      });
      expect(listed.map((r) => decodePathKey(r.pathKey))).toEqual([...paths].sort(comparePaths));
      // The name column (utf8) keeps the control characters too.
      expect(listed.map((r) => r.name)).toContain('a\u0000');
    });
  });
});
