import { Ledger, rowsOf } from '@tms/ledger';
import { createTestDatabase, type TestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresSearchProvider } from '../src/postgres-provider';
import type { SearchDocument } from '../src/provider';
import { analyseDocument, analyseQuery } from '../src/text-analysis';

/** The embedded lexical arm (BM25 over the analysed terms) on both ledgers. */
type Driver = 'pglite' | 'postgres';
const DRIVERS: Driver[] = ['pglite', 'postgres'];

interface Opened {
  ledger: Ledger;
  provider: PostgresSearchProvider;
  close(): Promise<void>;
}

async function open(driver: Driver): Promise<Opened> {
  const database: TestDatabase | null = driver === 'postgres' ? await createTestDatabase('tms_search_bm25') : null;
  const ledger = await Ledger.open(database ? { databaseUrl: database.url } : { dataDir: 'memory://' });
  await ledger.migrate();
  const provider = new PostgresSearchProvider(ledger.handle.db);
  await provider.prepare();
  return {
    ledger,
    provider,
    async close() {
      await ledger.close();
      await database?.drop();
    },
  };
}

let sequence = 0;
const doc = (text: string, over: Partial<SearchDocument> = {}): SearchDocument => {
  sequence += 1;
  const revisionId = over.revisionId ?? `rev_${String(sequence).padStart(4, '0')}`;
  return {
    workspaceId: 'ws_t',
    revisionId,
    memoryId: `mem_${revisionId}`,
    namespaceId: 'ns_a',
    kind: 'episode',
    text,
    validFrom: 0,
    validTo: null,
    recordedAt: 100,
    recordedUntil: null,
    ...over,
  };
};

/** A database whose `execute` calls (the provider's statements) are counted. */
function countingStatements(db: Ledger['handle']['db']) {
  const counter = { statements: 0, db };
  counter.db = new Proxy(db, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'execute') return value;
      return (...args: unknown[]) => {
        counter.statements += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return counter;
}

const at = { asOf: 50, knownAt: 1000, limit: 20, offset: 0 };

/** The statistics BM25 needs, recomputed from scratch over the documents that should be indexed. */
function expectedStatistics(documents: readonly SearchDocument[], namespaceId: string) {
  const inNamespace = documents.filter((d) => d.namespaceId === namespaceId);
  const terms = new Map<string, number>();
  let totalLength = 0;
  for (const d of inNamespace) {
    const analysed = analyseDocument(d.text);
    totalLength += analysed.length;
    for (const term of analysed.termFrequencies.keys()) terms.set(term, (terms.get(term) ?? 0) + 1);
  }
  return {
    documents: inNamespace.length,
    totalLength,
    terms: new Map([...terms].sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

describe.each(DRIVERS)('lexical arm: BM25 ranking (%s)', (driver) => {
  let opened: Opened;
  let provider: PostgresSearchProvider;
  beforeAll(async () => {
    opened = await open(driver);
    provider = opened.provider;
  });
  afterAll(() => opened?.close());

  const search = (workspaceId: string, text: string, namespaceIds = ['ns_a']) =>
    provider.search({ workspaceId, text, namespaceIds, ...at });

  it('ranks a rare word above words that fill the namespace', async () => {
    const ws = 'ws_rare';
    const chatter = Array.from({ length: 12 }, (_, i) =>
      doc(`Oskar: did you go out today? Oskar went to the market again, day ${i}.`, { workspaceId: ws }),
    );
    const answer = doc('Lena: the glassblowing class on Friday was wonderful.', { workspaceId: ws });
    await provider.apply(ws, { upserts: [...chatter, answer], deletes: [] });
    const hits = await search(ws, 'When did Oskar go to the glassblowing class?');
    expect(hits[0]?.revisionId).toBe(answer.revisionId);
    // Every document mentioning only the common words still comes, below it.
    expect(hits).toHaveLength(13);
  });

  it('matches inflected forms through their stem', async () => {
    const ws = 'ws_stem';
    const pottery = doc('Mira signed up for two pottery workshops last spring.', { workspaceId: ws });
    const painting = doc('Mira paints landscapes on weekends.', { workspaceId: ws });
    await provider.apply(ws, {
      upserts: [pottery, painting, doc('Unrelated lines.', { workspaceId: ws })],
      deletes: [],
    });
    expect((await search(ws, 'workshop')).map((h) => h.revisionId)).toEqual([pottery.revisionId]);
    expect((await search(ws, 'painting')).map((h) => h.revisionId)).toEqual([painting.revisionId]);
    expect((await search(ws, 'Potteries')).map((h) => h.revisionId)).toEqual([pottery.revisionId]);
  });

  it('finds ids, numbers and non-English words exactly', async () => {
    const ws = 'ws_exact';
    const order = doc('Order 4711 shipped with tracking XK-99812 to Zürich.', { workspaceId: ws });
    const other = doc('Order 4712 is still waiting; ticket t1234ab is open.', { workspaceId: ws });
    await provider.apply(ws, { upserts: [order, other], deletes: [] });
    expect((await search(ws, '4711')).map((h) => h.revisionId)).toEqual([order.revisionId]);
    expect((await search(ws, '99812')).map((h) => h.revisionId)).toEqual([order.revisionId]);
    expect((await search(ws, 'T1234AB')).map((h) => h.revisionId)).toEqual([other.revisionId]);
    expect(await search(ws, 't1234a')).toEqual([]);
    expect(await search(ws, '471')).toEqual([]);
    expect((await search(ws, 'zürich')).map((h) => h.revisionId)).toEqual([order.revisionId]);
  });

  it('answers a query made only of stop words from the documents holding them', async () => {
    const ws = 'ws_stop';
    const tide = doc('It is about the tide.', { workspaceId: ws });
    await provider.apply(ws, { upserts: [tide, doc('Heron at dawn.', { workspaceId: ws })], deletes: [] });
    expect(analyseQuery('What is it about?')).toEqual(['what', 'is', 'it', 'about']);
    expect((await search(ws, 'What is it about?')).map((h) => h.revisionId)).toEqual([tide.revisionId]);
    // With a content word beside them, the stop words are left out of the query.
    expect(analyseQuery('what is the heron doing')).toEqual(['heron', 'do']);
  });

  it('breaks ties by revision id and pages without overlap', async () => {
    const ws = 'ws_ties';
    const same = ['rev_c', 'rev_a', 'rev_b'].map((revisionId) =>
      doc('Kestrel over the field.', { workspaceId: ws, revisionId }),
    );
    await provider.apply(ws, { upserts: same, deletes: [] });
    const hits = await search(ws, 'kestrel');
    expect(hits.map((h) => h.revisionId)).toEqual(['rev_a', 'rev_b', 'rev_c']);
    expect(new Set(hits.map((h) => h.score)).size).toBe(1);
    const second = await provider.search({
      workspaceId: ws,
      text: 'kestrel',
      namespaceIds: ['ns_a'],
      ...at,
      limit: 2,
      offset: 2,
    });
    expect(second.map((h) => h.revisionId)).toEqual(['rev_c']);
  });

  it('prunes the documents holding only common terms (MaxScore) and answers every page as a full scoring does', async () => {
    const ws = 'ws_prune';
    // "river" in almost every document, "stone" in half (five times in a few short ones),
    // "quartz" in eight short documents and "zephyr" in eight long ones; some texts repeat (ties
    // broken by text digest, then revision id).
    const texts = Array.from({ length: 120 }, (_, i) => {
      const words = [i % 6 === 5 ? 'meadow' : 'river', ...(i % 2 === 0 ? ['stone'] : [])];
      if (i % 7 === 0) words.push('river');
      if (i % 10 === 4) words.push('stone', 'stone', 'stone', 'stone');
      if (i % 15 === 1) words.push('quartz');
      if (i % 15 === 0) words.push('zephyr', ...Array.from({ length: 40 }, (_, k) => `filler${k}`));
      return `${words.join(' ')} ${'word '.repeat(i % 5)}day ${i % 40 < 30 ? i : 'same'}`;
    });
    const documents = texts.map((text, i) =>
      doc(text, { workspaceId: ws, revisionId: `p${String(i).padStart(3, '0')}` }),
    );
    await provider.apply(ws, { upserts: documents, deletes: [] });
    // Statements the provider sends: a pruned search sends two (the statistics, the rarest terms'
    // documents), a full one two or three.
    const counter = countingStatements(opened.ledger.handle.db);
    const counted = new PostgresSearchProvider(counter.db);
    const everyId = documents.map((d) => d.revisionId);
    // "quartz" ranks its documents first and prunes; "zephyr"'s long documents rank below the
    // short ones full of "stone", which a pruned search would have left out.
    for (const text of ['quartz river stone', 'zephyr stone', 'river stone', 'meadow river zephyr quartz']) {
      // Scoring named revisions is never pruned: every document, scored and ordered.
      const full = await provider.search({
        workspaceId: ws,
        text,
        namespaceIds: ['ns_a'],
        ...at,
        limit: 200,
        revisionIds: everyId,
      });
      expect(full.length).toBeGreaterThan(20);
      for (const [limit, offset] of [
        [5, 0],
        [5, 5],
        [10, 10],
        [40, 0],
      ] as const) {
        counter.statements = 0;
        const page = await counted.search({ workspaceId: ws, text, namespaceIds: ['ns_a'], ...at, limit, offset });
        expect(page).toEqual(full.slice(offset, offset + limit));
        if (text === 'quartz river stone' && offset + limit <= 8) expect(counter.statements).toBe(2);
        if (text === 'zephyr stone' && offset + limit <= 8) expect(counter.statements).toBe(3);
      }
    }
  });

  it("a recall's lexical scope answers every page and any revisions' scores as `search` does, in two statements when small", async () => {
    const ws = 'ws_whole';
    const texts = Array.from(
      { length: 60 },
      (_, i) => `${i % 3 === 0 ? 'heron' : 'river'} ${i % 4 === 0 ? 'reed reed' : 'bank'} ${'mud '.repeat(i % 5)}`,
    );
    const documents = texts.map((text, i) =>
      doc(text, { workspaceId: ws, revisionId: `w${String(i).padStart(2, '0')}` }),
    );
    await provider.apply(ws, {
      upserts: [...documents, doc('heron', { workspaceId: ws, revisionId: 'w_old', validTo: 10 })],
      deletes: [],
    });
    const counter = countingStatements(opened.ledger.handle.db);
    const scope = { workspaceId: ws, text: 'heron reed', namespaceIds: ['ns_a'], asOf: at.asOf, knownAt: at.knownAt };
    const given = ['w03', 'w01', 'w_old', 'w59', 'w08', 'nowhere'];
    const pages = [
      { limit: 10, offset: 0 },
      { limit: 10, offset: 10 },
      { limit: 40, offset: 0 },
      { limit: 6, offset: 0, revisionIds: given },
      { limit: 5, offset: 0, revisionIds: [] },
    ];
    for (const wholeScopeDocuments of [2000, 10]) {
      const counted = new PostgresSearchProvider(counter.db, {}, { wholeScopeDocuments });
      const scoped = counted.lexicalScope(scope);
      counter.statements = 0;
      for (const page of pages) {
        const expected = await provider.search({ ...scope, ...page });
        const before = counter.statements;
        expect(await scoped.search(page)).toEqual(expected);
        if (page.revisionIds?.length) expect(expected.map((h) => h.revisionId).sort()).toEqual(['w03', 'w08']);
        if (wholeScopeDocuments === 2000 && before > 0) expect(counter.statements).toBe(before);
      }
      // Scored whole: the statistics and every document holding a term, once. Past the bound,
      // the statistics once and then a statement (or two, pruned) per page.
      if (wholeScopeDocuments === 2000) expect(counter.statements).toBe(2);
      else expect(counter.statements).toBeGreaterThanOrEqual(1 + pages.length - 1);
    }
  });

  it('computes IDF over the namespaces in scope, and keeps filters inside the query', async () => {
    const ws = 'ws_scope';
    // In ns_a "otter" is rare and "river" common; in ns_b the reverse.
    const a = [
      doc('otter river', { workspaceId: ws, namespaceId: 'ns_a', revisionId: 'a1' }),
      ...['a2', 'a3', 'a4'].map((revisionId) =>
        doc('river bank', { workspaceId: ws, namespaceId: 'ns_a', revisionId }),
      ),
    ];
    const b = [
      doc('river otter', { workspaceId: ws, namespaceId: 'ns_b', revisionId: 'b1' }),
      ...['b2', 'b3', 'b4'].map((revisionId) => doc('otter pup', { workspaceId: ws, namespaceId: 'ns_b', revisionId })),
    ];
    const old = doc('otter otter otter', { workspaceId: ws, namespaceId: 'ns_a', revisionId: 'a5', validTo: 10 });
    await provider.apply(ws, { upserts: [...a, ...b, old], deletes: [] });
    const onlyA = await search(ws, 'otter', ['ns_a']);
    expect(onlyA.map((h) => h.revisionId)).toEqual(['a1']); // a5 is not valid at as_of 50
    const scoreA = (await search(ws, 'otter river', ['ns_a']))[0];
    expect(scoreA?.revisionId).toBe('a1');
    // Across both namespaces the statistics are summed (every indexed revision counts, a5 too):
    // "otter" is in 6 of 9 documents, of 19 words in all.
    const both = await search(ws, 'otter', ['ns_a', 'ns_b']);
    expect(both.map((h) => h.revisionId).sort()).toEqual(['a1', 'b1', 'b2', 'b3', 'b4']);
    const n = 9;
    const df = 6;
    const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
    const averageLength = 19 / 9;
    const expected = (idf * 1 * 2.2) / (1 + 1.2 * (0.25 + (0.75 * 2) / averageLength));
    expect(both[0]?.score).toBeCloseTo(expected, 8);
    // Over many namespaces (their statistics read term by term), the same statistics.
    const many = ['ns_a', 'ns_b', ...Array.from({ length: 30 }, (_, i) => `ns_empty_${i}`)];
    expect(await search(ws, 'otter', many)).toEqual(both);
  });

  it("asks the term index for a few namespaces' documents only, not every document holding the words", async () => {
    const ws = 'ws_term_index';
    // A namespace id with a quote and a backslash: quoted in the tsvector and the tsquery alike.
    const odd = "ns_o'brien\\x";
    const few = [
      doc('a heron by the weir', { workspaceId: ws, namespaceId: 'ns_small' }),
      doc('the heron again', { workspaceId: ws, namespaceId: 'ns_small' }),
      doc('one heron more', { workspaceId: ws, namespaceId: odd }),
    ];
    const crowd = Array.from({ length: 3000 }, (_, i) =>
      doc(`heron sighting ${i}`, { workspaceId: ws, namespaceId: 'ns_crowd' }),
    );
    await provider.apply(ws, { upserts: [...few, ...crowd], deletes: [] });
    await opened.ledger.handle.db.execute(sql`analyze search.documents`);

    // Each statement reading the documents is explained first, with sequential scans off so
    // that a table this small is still read through an index, as a large one is.
    const db = opened.ledger.handle.db;
    const termIndexRows: number[] = [];
    const explaining = new Proxy(db, {
      get(target, property, receiver) {
        if (property !== 'execute') return Reflect.get(target, property, receiver);
        return async (query: Parameters<typeof db.execute>[0]) => {
          const text = JSON.stringify(query);
          if (text.includes('from search.documents m')) {
            await target.transaction(async (tx) => {
              await tx.execute(sql`set local enable_seqscan = off`);
              const [row] = rowsOf<{ 'QUERY PLAN': unknown }>(
                await tx.execute(sql`explain (analyze, format json) ${query}`),
              );
              const plan =
                typeof row?.['QUERY PLAN'] === 'string' ? JSON.parse(row['QUERY PLAN']) : row?.['QUERY PLAN'];
              const visit = (node: Record<string, unknown>) => {
                if (node['Index Name'] === 'documents_tsv') termIndexRows.push(Number(node['Actual Rows']));
                for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
              };
              visit((plan as { Plan: Record<string, unknown> }[])[0]?.Plan ?? {});
            });
          }
          return target.execute(query);
        };
      },
    });
    const explained = new PostgresSearchProvider(explaining as never);
    const hits = await explained.search({ workspaceId: ws, text: 'heron', namespaceIds: ['ns_small', odd], ...at });
    expect(hits.map((h) => h.revisionId).sort()).toEqual(few.map((d) => d.revisionId).sort());
    expect(termIndexRows).toEqual([3]);
    // Over many namespaces the words alone are asked: the same documents.
    const many = ['ns_small', odd, ...Array.from({ length: 20 }, (_, i) => `ns_empty_${i}`)];
    expect((await search(ws, 'heron', many)).map((h) => h.revisionId).sort()).toEqual(
      few.map((d) => d.revisionId).sort(),
    );
  });

  it('keeps the term statistics exact through re-applies, corrections and purges', async () => {
    const ws = 'ws_stats';
    const first = doc('Nadia adopted a puppy named Biscuit.', { workspaceId: ws, revisionId: 's1' });
    const second = doc('Nadia walks Biscuit twice a day.', { workspaceId: ws, revisionId: 's2' });
    const third = doc('A quiet evening with tea.', { workspaceId: ws, revisionId: 's3' });
    await provider.apply(ws, { upserts: [first, second, third], deletes: [] });
    await provider.apply(ws, { upserts: [first, second, third], deletes: [] }); // again: counted once
    expect(await provider.termStatistics(ws, 'ns_a')).toEqual(expectedStatistics([first, second, third], 'ns_a'));

    // A correction: the old revision stops being current (only its temporal columns change) and a new one appears.
    const superseded = { ...second, recordedUntil: 500 };
    const corrected = doc('Nadia walks Biscuit three times a day.', {
      workspaceId: ws,
      revisionId: 's4',
      recordedAt: 500,
    });
    await provider.apply(ws, { upserts: [superseded, corrected], deletes: [] });
    expect(await provider.termStatistics(ws, 'ns_a')).toEqual(
      expectedStatistics([first, second, third, corrected], 'ns_a'),
    );
    const now = await provider.search({ workspaceId: ws, text: 'walks', namespaceIds: ['ns_a'], ...at, knownAt: 600 });
    expect(now.map((h) => h.revisionId)).toEqual(['s4']);
    const before = await provider.search({
      workspaceId: ws,
      text: 'walks',
      namespaceIds: ['ns_a'],
      ...at,
      knownAt: 400,
    });
    expect(before.map((h) => h.revisionId)).toEqual(['s2']);

    // Purging the memory deletes both its revisions: their words leave the statistics ("three" with them).
    await provider.apply(ws, { upserts: [], deletes: ['s2', 's4'] });
    const afterPurge = await provider.termStatistics(ws, 'ns_a');
    expect(afterPurge).toEqual(expectedStatistics([first, third], 'ns_a'));
    expect(afterPurge.terms.has('three')).toBe(false);
    expect(afterPurge.terms.get('biscuit')).toBe(1);
    // Deleting again changes nothing; deleting the rest leaves no trace at all.
    await provider.apply(ws, { upserts: [], deletes: ['s2', 's4'] });
    expect(await provider.termStatistics(ws, 'ns_a')).toEqual(afterPurge);
    await provider.apply(ws, { upserts: [], deletes: ['s1', 's3'] });
    expect(await provider.termStatistics(ws, 'ns_a')).toEqual({ documents: 0, totalLength: 0, terms: new Map() });
    expect(await search(ws, 'biscuit')).toEqual([]);
  });

  it('clears a workspace with its statistics, leaving other workspaces alone', async () => {
    await provider.apply('ws_keep', { upserts: [doc('Falcon.', { workspaceId: 'ws_keep' })], deletes: [] });
    await provider.apply('ws_gone', { upserts: [doc('Falcon.', { workspaceId: 'ws_gone' })], deletes: [] });
    await provider.clear('ws_gone');
    expect(await provider.termStatistics('ws_gone', 'ns_a')).toEqual({
      documents: 0,
      totalLength: 0,
      terms: new Map(),
    });
    expect((await provider.termStatistics('ws_keep', 'ns_a')).documents).toBe(1);
    expect(await search('ws_keep', 'falcon')).toHaveLength(1);
  });
});

describe('lexical arm: identical loads rank identically', () => {
  const stores: Opened[] = [];
  beforeAll(async () => {
    stores.push(await open('pglite'), await open('postgres'), await open('postgres'));
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });

  it('gives the same hits, scores and order on every database, whatever the revision ids', async () => {
    const words = ['amber', 'birch', 'cedar', 'delta', 'ember', 'fjord', 'grove', 'harbor', 'islet', 'juniper'];
    const texts = Array.from(
      { length: 120 },
      (_, i) => `${Array.from({ length: 3 + (i % 7) }, (_, k) => words[(i * 3 + k * k) % words.length]).join(' ')}.`,
    );
    const queries = ['amber', 'birch cedar', 'harbor islet juniper', 'the grove', 'fjord ember delta amber'];
    const answers: { ids: string; texts: string }[] = [];
    for (const [n, s] of stores.entries()) {
      // The last database gets other revision ids (as two loads through the API would).
      const idOf = (i: number) => (n < 2 ? `rev_${(i * 37) % 120}_${i}` : `rev_${(i * 53 + 7) % 120}_x${i}`);
      const documents = texts.map((text, i) => doc(text, { workspaceId: 'ws_same', revisionId: idOf(i) }));
      const textOf = new Map(documents.map((d) => [d.revisionId, d.text]));
      // Two batches, split differently per database: the statistics do not depend on batching.
      const cut = n * 40 + 10;
      await s.provider.apply('ws_same', { upserts: documents.slice(0, cut), deletes: [] });
      await s.provider.apply('ws_same', { upserts: documents.slice(cut), deletes: [] });
      const results = [];
      for (const text of queries) {
        results.push(
          await s.provider.search({ workspaceId: 'ws_same', text, namespaceIds: ['ns_a'], ...at, limit: 100 }),
        );
      }
      answers.push({
        ids: JSON.stringify(results),
        texts: JSON.stringify(results.map((hits) => hits.map((h) => [textOf.get(h.revisionId), h.score]))),
      });
    }
    const [first, second, third] = answers as [(typeof answers)[0], (typeof answers)[0], (typeof answers)[0]];
    expect(JSON.parse(first.ids).every((hits: unknown[]) => hits.length > 0)).toBe(true);
    expect(second.ids).toBe(first.ids);
    expect(third.texts).toBe(first.texts);
  });
});
