import { type Database, Ledger, rowsOf } from '@tms/ledger';
import { createTestDatabase, type TestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresSearchProvider } from '../src/postgres-provider';
import type { VectorStoreOptions } from '../src/postgres-vectors';
import type { VectorDocument } from '../src/provider';

/** A deterministic unit vector from a seed (a small LCG), so stores can be compared on the same data. */
function randomUnit(seed: number, dimensions: number): Float32Array {
  let state = seed >>> 0;
  const v = new Float32Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    v[i] = state / 2 ** 32 - 0.5;
    norm += (v[i] as number) ** 2;
  }
  const scale = 1 / Math.sqrt(norm);
  return v.map((x) => x * scale);
}

const DIMENSIONS = 64;
const MODEL = 'test:random@64';

function documents(count: number): VectorDocument[] {
  return Array.from({ length: count }, (_, i) => ({
    workspaceId: 'ws_a',
    revisionId: `rev_${String(i).padStart(4, '0')}`,
    memoryId: `mem_${i}`,
    namespaceId: `ns_${i % 4}`,
    kind: i % 3 === 0 ? 'episode' : 'claim',
    validFrom: 0,
    validTo: null,
    recordedAt: 100 + i,
    recordedUntil: i % 10 === 0 ? 200 + i : null,
    vector: randomUnit(i + 1, DIMENSIONS),
  }));
}

/** Store `docs` as new vectors of the test model. */
function upsert(provider: PostgresSearchProvider, docs: VectorDocument[]) {
  return provider.applyVectors('ws_a', {
    model: MODEL,
    dimensions: DIMENSIONS,
    upserts: docs,
    updates: [],
    deletes: [],
  });
}

interface Opened {
  provider: PostgresSearchProvider;
  db: Database;
  close(): Promise<void>;
  /** Statements this instance's database handle has sent so far. */
  statements(): number;
}

interface Subject {
  name: string;
  open(store: 'auto' | 'exact', options?: VectorStoreOptions): Promise<Opened>;
}

let database: TestDatabase | null = null;
const subjects: Subject[] = [
  {
    name: 'PGlite',
    async open(store, options = {}) {
      let statements = 0;
      const ledger = await Ledger.open({ dataDir: 'memory://', onQuery: () => statements++ });
      await ledger.migrate();
      const db = ledger.handle.db;
      return {
        provider: new PostgresSearchProvider(db, { store, ...options }),
        db,
        close: () => ledger.close(),
        statements: () => statements,
      };
    },
  },
  {
    name: 'Postgres',
    async open(store, options = {}) {
      database ??= await createTestDatabase('tms_vectors');
      let statements = 0;
      const ledger = await Ledger.open({ databaseUrl: database.url, onQuery: () => statements++ });
      await ledger.migrate();
      const db = ledger.handle.db;
      return {
        provider: new PostgresSearchProvider(db, { store, ...options }),
        db,
        close: () => ledger.close(),
        statements: () => statements,
      };
    },
  },
];

afterAll(async () => {
  await database?.drop();
});

describe.each(subjects)('postgres vector store on $name', (subject) => {
  let provider: PostgresSearchProvider;
  let close: () => Promise<void>;
  let statements: () => number;
  const docs = documents(300);
  beforeAll(async () => {
    ({ provider, close, statements } = await subject.open('auto'));
    await provider.prepare();
    await provider.prepare();
    await provider.applyVectors('ws_a', {
      model: MODEL,
      dimensions: DIMENSIONS,
      upserts: docs,
      updates: [],
      deletes: [],
    });
  });
  afterAll(() => close?.());

  const query = (seed: number, over: object = {}) => ({
    workspaceId: 'ws_a',
    namespaceIds: ['ns_0', 'ns_1', 'ns_2', 'ns_3'],
    asOf: 1000,
    knownAt: 1000,
    limit: 10,
    offset: 0,
    model: MODEL,
    vector: randomUnit(seed, DIMENSIONS),
    ...over,
  });

  it('ranks by cosine similarity, best first, within the filters', async () => {
    const q = query(42, { namespaceIds: ['ns_1'], kinds: ['claim'] });
    const hits = await provider.searchSemantic(q);
    const expected = docs
      .filter((d) => d.namespaceId === 'ns_1' && d.kind === 'claim' && d.recordedUntil === null)
      .map((d) => ({ id: d.revisionId, score: d.vector.reduce((s, x, i) => s + x * (q.vector[i] as number), 0) }))
      .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
      .slice(0, 10);
    expect(hits.map((h) => h.revisionId)).toEqual(expected.map((e) => e.id));
    for (const [i, hit] of hits.entries()) expect(hit.score).toBeCloseTo(expected[i]?.score ?? Number.NaN, 4);
  });

  it('a narrow known_at filter still fills the answer', async () => {
    // Only the closed revisions (every tenth) were current at 205: 30 of 300.
    const hits = await provider.searchSemantic(query(7, { knownAt: 205.5, limit: 20 }));
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) {
      const doc = docs.find((d) => d.revisionId === hit.revisionId);
      expect(doc?.recordedAt).toBeLessThanOrEqual(205.5);
      expect(doc?.recordedUntil === null || (doc?.recordedUntil ?? 0) > 205.5).toBe(true);
    }
    const expectedCount = docs.filter(
      (d) => d.recordedAt <= 205.5 && (d.recordedUntil === null || d.recordedUntil > 205.5),
    ).length;
    expect(hits.length).toBe(Math.min(20, expectedCount));
  });

  it('answers alike from vectors kept in the process and from reads, and never keeps one that is gone', async () => {
    const q = query(91, { limit: 30 });
    const first = await provider.searchSemantic(q);
    const again = await provider.searchSemantic(q);
    expect(again).toEqual(first);
    if (subject.name === 'Postgres') {
      // Another store on the same database (PGlite's `memory://` would be a new one) keeps no
      // vector yet: its answer comes from reads alone.
      const { provider: cold, close: closeCold } = await subject.open('auto');
      try {
        await cold.prepare();
        expect(await cold.searchSemantic({ ...q })).toEqual(first);
      } finally {
        await closeCold();
      }
    }
    const gone = first.slice(0, 3).map((h) => h.revisionId);
    await provider.applyVectors('ws_a', {
      model: MODEL,
      dimensions: DIMENSIONS,
      upserts: [],
      updates: [],
      deletes: gone,
    });
    const after = await provider.searchSemantic(q);
    expect(after.map((h) => h.revisionId)).toEqual(
      first
        .map((h) => h.revisionId)
        .filter((id) => !gone.includes(id))
        .concat(after.slice(27).map((h) => h.revisionId)),
    );
    // Put back for the cases that follow.
    await provider.applyVectors('ws_a', {
      model: MODEL,
      dimensions: DIMENSIONS,
      upserts: docs.filter((d) => gone.includes(d.revisionId)),
      updates: [],
      deletes: [],
    });
  });

  it('ranks a scope read whole as the search does, then scores given revisions and further pages with no statement', async () => {
    for (const [seed, over] of [
      [5, {}],
      [8, { namespaceIds: ['ns_3'], kinds: ['episode'] }],
      [13, { knownAt: 205.5 }],
    ] as const) {
      const q = query(seed, { ...over, limit: 40 });
      const { vector, limit, offset, ...scope } = q;
      const expected = await provider.searchSemantic(q);
      expect(expected.length).toBeGreaterThan(0);
      const scoped = provider.semanticScope(scope);
      // Its revision ids are read at once; the vector comes later (the query is being embedded).
      const first = await scoped.search(vector, { limit, offset });
      expect(first.map((h) => h.revisionId)).toEqual(expected.map((h) => h.revisionId));
      for (const [i, hit] of first.entries()) expect(hit.score).toBeCloseTo(expected[i]?.score ?? Number.NaN, 4);
      const before = statements();
      const second = await scoped.search(vector, { limit: 10, offset: 5 });
      expect(second).toEqual(first.slice(5, 15));
      // The other arm's candidates, one of them outside the filters: scored as the search scores them.
      const given = [...first.slice(-3).map((h) => h.revisionId), 'rev_none'];
      const crossed = await scoped.search(vector, { limit: 4, offset: 0, revisionIds: given });
      const searched = await provider.searchSemantic({ ...q, limit: 4, revisionIds: given });
      expect(crossed.map((h) => h.revisionId)).toEqual(given.slice(0, 3));
      expect(crossed.map((h) => h.revisionId)).toEqual(searched.map((h) => h.revisionId));
      // pgvector computes in single precision; the scope in double.
      for (const [i, hit] of crossed.entries()) expect(hit.score).toBeCloseTo(searched[i]?.score ?? Number.NaN, 6);
      expect(statements() - before).toBe(1); // the `searchSemantic` just above, none of the scope's
    }
  });

  it('searches a scope larger than `wholeScopeRows` statement by statement, with the same answers', async () => {
    const small = await subject.open('auto', { wholeScopeRows: 20 });
    try {
      await small.provider.prepare();
      // PGlite's `memory://` is a database of its own.
      await upsert(small.provider, docs);
      const q = query(17, { limit: 10 });
      const { vector, limit, offset, ...scope } = q;
      const scoped = small.provider.semanticScope(scope);
      const hits = await scoped.search(vector, { limit, offset });
      expect(hits.map((h) => h.revisionId)).toEqual((await provider.searchSemantic(q)).map((h) => h.revisionId));
      const before = small.statements();
      await scoped.search(vector, { limit, offset: 10 });
      expect(small.statements()).toBeGreaterThan(before);
    } finally {
      await small.close();
    }
  });

  it('never compares vectors of another model', async () => {
    expect(await provider.searchSemantic(query(42, { model: 'test:other@64' }))).toEqual([]);
  });

  it('settles on pgvector where the extension exists and on the exact scan where it does not', () => {
    // PGlite ships pgvector; this machine's Postgres 15 has no `vector` extension.
    expect(provider.vectors.kind).toBe(subject.name === 'PGlite' ? 'pgvector' : 'exact');
  });
});

describe('the exact-scan store and the pgvector store (PGlite) on the same data', () => {
  const docs = documents(400);
  const opened: { provider: PostgresSearchProvider; db: Database; close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const o of opened) await o.close();
  });

  it('give the same top results', async () => {
    const [pglite] = subjects as [Subject];
    for (const store of ['exact', 'auto'] as const) {
      const o = await pglite.open(store);
      opened.push(o);
      await o.provider.prepare();
      await upsert(o.provider, docs);
    }
    const [exact, hnsw] = opened as [(typeof opened)[0], (typeof opened)[0]];
    expect(exact.provider.vectors.kind).toBe('exact');
    expect(hnsw.provider.vectors.kind).toBe('pgvector');
    for (const seed of [3, 11, 29]) {
      for (const over of [{}, { namespaceIds: ['ns_2'] }, { kinds: ['episode'], knownAt: 250 }]) {
        const q = {
          workspaceId: 'ws_a',
          namespaceIds: ['ns_0', 'ns_1', 'ns_2', 'ns_3'],
          asOf: 1000,
          knownAt: 1000,
          limit: 10,
          offset: 0,
          model: MODEL,
          vector: randomUnit(seed * 1000, DIMENSIONS),
          ...over,
        };
        const a = await exact.provider.searchSemantic(q);
        const b = await hnsw.provider.searchSemantic(q);
        expect(a.length).toBeGreaterThan(0);
        expect(b.map((h) => h.revisionId)).toEqual(a.map((h) => h.revisionId));
        for (const [i, hit] of b.entries()) expect(hit.score).toBeCloseTo(a[i]?.score ?? Number.NaN, 4);
      }
    }
  });

  it('fills a pgvector store in the background when pgvector arrives; an instance that saw the exact store switches without a restart', async () => {
    const [exact, hnsw] = opened as [(typeof opened)[0], (typeof opened)[0]];
    const q = {
      workspaceId: 'ws_a',
      namespaceIds: ['ns_0', 'ns_1', 'ns_2', 'ns_3'],
      asOf: 1000,
      knownAt: 1000,
      limit: 10,
      offset: 0,
      model: MODEL,
      vector: randomUnit(977, DIMENSIONS),
    };
    const ids = (hits: { revisionId: string }[]) => hits.map((h) => h.revisionId);
    const columnType = async () =>
      rowsOf<{ type: string }>(
        await exact.db.execute(sql`
          select format_type(atttypid, atttypmod) as type from pg_attribute
           where attrelid = 'search.vectors'::regclass and attname = 'embedding' and not attisdropped`),
      )[0]?.type;
    // The running instance (a gateway) answers from the exact store.
    const gateway = exact.provider;
    const before = await gateway.searchSemantic(q);
    expect(gateway.vectors.kind).toBe('exact');
    // Another instance on the same database, one that may use the extension (PGlite ships it),
    // prepares: the pgvector copy is only begun, and the exact store goes on serving.
    const converter = new PostgresSearchProvider(exact.db);
    await converter.prepare();
    expect(converter.vectors.kind).toBe('exact');
    expect(await converter.fillVectorStore()).toBeGreaterThan(0);
    expect(ids(await gateway.searchSemantic(q))).toEqual(ids(before));
    // A vector written while the copy fills (the query's own vector: it ranks first from now on).
    const written = {
      ...docs[1],
      revisionId: 'rev_written',
      memoryId: 'mem_written',
      vector: q.vector,
    } as VectorDocument;
    await gateway.applyVectors('ws_a', {
      model: MODEL,
      dimensions: DIMENSIONS,
      upserts: [written],
      updates: [],
      deletes: [],
    });
    const expected = ['rev_written', ...ids(before).slice(0, 9)];
    expect(ids(await gateway.searchSemantic(q))).toEqual(expected);
    let steps = 1;
    while ((await converter.fillVectorStore()) > 0) steps += 1;
    expect(steps).toBeGreaterThan(1);
    expect(await columnType()).toBe('vector');
    expect(converter.vectors.kind).toBe('pgvector');
    // The gateway still remembers the exact store: its next statement finds the other one, and
    // it looks again and answers the same from the pgvector store (scores included).
    expect(gateway.vectors.kind).toBe('exact');
    // A recall's scope, read whole, finds the switch the same way.
    const { vector, limit, offset, ...scope } = q;
    expect(ids(await gateway.semanticScope(scope).search(vector, { limit, offset }))).toEqual(expected);
    expect(gateway.vectors.kind).toBe('pgvector');
    const after = await gateway.searchSemantic(q);
    expect(ids(after)).toEqual(expected);
    const given = await gateway.searchSemantic({ ...q, revisionIds: expected.slice(0, 3) });
    expect(ids(given)).toEqual(expected.slice(0, 3));
    for (const [i, hit] of after.slice(1).entries()) expect(hit.score).toBeCloseTo(before[i]?.score ?? Number.NaN, 4);
    expect(ids(await hnsw.provider.searchSemantic(q)).slice(0, 9)).toEqual(expected.slice(1));
    // Its writes go to the pgvector store too; nothing was embedded again, nothing lost.
    const next = { ...written, revisionId: 'rev_next', memoryId: 'mem_next' } as VectorDocument;
    await gateway.applyVectors('ws_a', {
      model: MODEL,
      dimensions: DIMENSIONS,
      upserts: [next],
      updates: [],
      deletes: [],
    });
    expect(ids(await gateway.searchSemantic({ ...q, limit: 2 })).sort()).toEqual(['rev_next', 'rev_written']);
    expect(await converter.vectorRevisionIds('ws_a', MODEL)).toHaveLength(docs.length + 2);
    expect(await converter.fillVectorStore()).toBe(0);
  });
});
