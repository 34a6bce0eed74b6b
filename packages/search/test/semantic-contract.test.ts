import net from 'node:net';
import { Ledger } from '@tms/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MeilisearchProvider,
  PostgresSearchProvider,
  type SearchProvider,
  SearchUnavailableError,
  type SemanticQuery,
  type VectorDocument,
} from '../src/index';

/**
 * The semantic arm's contract for every provider: the embedded Postgres store (on PGlite, so
 * pgvector) and Meilisearch when MEILI_URL points at a server (none runs where this is built).
 */
interface Subject {
  name: string;
  open(): Promise<{ provider: SearchProvider; close(): Promise<void> }>;
}

const subjects: Subject[] = [
  {
    name: 'postgres (on PGlite)',
    async open() {
      const ledger = await Ledger.open({ dataDir: 'memory://' });
      await ledger.migrate();
      return { provider: new PostgresSearchProvider(ledger.handle.db), close: () => ledger.close() };
    },
  },
];
const meiliUrl = process.env.MEILI_URL;
if (meiliUrl) {
  subjects.push({
    name: 'meilisearch',
    async open() {
      const provider = new MeilisearchProvider(meiliUrl, process.env.MEILI_API_KEY, `tms_semantic_${Date.now()}`);
      return { provider, close: async () => {} };
    },
  });
}

/** A unit vector along the given axes (weights), in 8 dimensions. */
function unit(...weights: number[]): Float32Array {
  const v = new Float32Array(8);
  weights.forEach((w, i) => {
    v[i] = w;
  });
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / norm);
}

const MODEL_A = 'test:axes@8';
const MODEL_B = 'test:other-axes@8';

const vdoc = (over: Partial<VectorDocument> & Pick<VectorDocument, 'revisionId' | 'vector'>): VectorDocument => ({
  workspaceId: 'ws_a',
  memoryId: `mem_${over.revisionId}`,
  namespaceId: 'ns_1',
  kind: 'claim',
  validFrom: 0,
  validTo: null,
  recordedAt: 100,
  recordedUntil: null,
  ...over,
});

const semantic = (vector: Float32Array, over: Partial<SemanticQuery> = {}): SemanticQuery => ({
  workspaceId: 'ws_a',
  namespaceIds: ['ns_1', 'ns_2'],
  asOf: 50,
  knownAt: 1000,
  limit: 10,
  offset: 0,
  model: MODEL_A,
  vector,
  ...over,
});

const batch = (upserts: VectorDocument[], model = MODEL_A) => ({
  model,
  dimensions: 8,
  upserts,
  updates: [],
  deletes: [],
});

describe.each(subjects)('semantic search contract: $name', (subject) => {
  let provider: SearchProvider;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ provider, close } = await subject.open());
    await provider.prepare();
  });
  afterAll(() => close?.());

  it('ranks by cosine similarity within the namespaces, kinds and model asked', async () => {
    await provider.applyVectors(
      'ws_a',
      batch([
        vdoc({ revisionId: 's1', vector: unit(1, 0.1) }),
        vdoc({ revisionId: 's2', vector: unit(1, 0.5), namespaceId: 'ns_2', kind: 'episode' }),
        vdoc({ revisionId: 's3', vector: unit(0, 0, 1) }),
        vdoc({ revisionId: 's4', vector: unit(1), namespaceId: 'ns_9' }),
      ]),
    );
    await provider.applyVectors('ws_b', batch([vdoc({ revisionId: 's5', vector: unit(1), workspaceId: 'ws_b' })]));
    const hits = await provider.searchSemantic(semantic(unit(1)));
    expect(hits.map((h) => h.revisionId)).toEqual(['s1', 's2', 's3']);
    expect(hits.every((h) => h.memoryId === `mem_${h.revisionId}`)).toBe(true);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? 1);
    expect((await provider.searchSemantic(semantic(unit(1), { kinds: ['episode'] }))).map((h) => h.revisionId)).toEqual(
      ['s2'],
    );
    // Another model's vectors are never compared with this one's.
    expect(await provider.searchSemantic(semantic(unit(1), { model: MODEL_B }))).toEqual([]);
    expect(await provider.vectorRevisionIds('ws_a', MODEL_A, ['s1', 's3', 'nope'])).toEqual(['s1', 's3']);
  });

  it('filters by validity at as_of and record interval at known_at, and updates them without a new vector', async () => {
    await provider.applyVectors(
      'ws_a',
      batch([
        vdoc({ revisionId: 't1', vector: unit(0, 0, 0, 1), validFrom: 0, validTo: 50 }),
        vdoc({ revisionId: 't2', vector: unit(0, 0, 0, 1, 0.2), validFrom: 50 }),
        vdoc({ revisionId: 't3', vector: unit(0, 0, 0, 1, 0.4), recordedAt: 2000 }),
      ]),
    );
    const ids = async (asOf: number, knownAt: number) =>
      (await provider.searchSemantic(semantic(unit(0, 0, 0, 1), { asOf, knownAt, limit: 3 })))
        .map((h) => h.revisionId)
        .filter((id) => id.startsWith('t'))
        .sort();
    expect(await ids(49, 1000)).toEqual(['t1']);
    expect(await ids(50, 1000)).toEqual(['t2']);
    expect(await ids(50, 2000)).toEqual(['t2', 't3']);
    // A correction closes t2's record interval: metadata only, the vector stays.
    await provider.applyVectors('ws_a', {
      model: MODEL_A,
      dimensions: 8,
      upserts: [],
      updates: [{ ...vdoc({ revisionId: 't2', vector: unit(1) }), validFrom: 50, recordedUntil: 500 }].map(
        ({ vector: _vector, ...metadata }) => metadata,
      ),
      deletes: [],
    });
    expect(await ids(50, 499)).toEqual(['t2']);
    expect(await ids(50, 500)).toEqual([]);
  });

  it('deletes vectors of every model, clears other models, and keeps vectors through lexical upserts', async () => {
    await provider.applyVectors('ws_a', batch([vdoc({ revisionId: 'p1', vector: unit(0, 0, 0, 0, 0, 1) })]));
    await provider.applyVectors('ws_a', batch([vdoc({ revisionId: 'p1', vector: unit(0, 0, 0, 0, 0, 1) })], MODEL_B));
    // The lexical arm writes the same revision: its vectors stay.
    await provider.apply('ws_a', {
      upserts: [{ ...vdoc({ revisionId: 'p1', vector: unit(1) }), text: 'a purged secret' }].map(
        ({ vector: _vector, ...d }) => d,
      ),
      deletes: [],
    });
    const near = semantic(unit(0, 0, 0, 0, 0, 1), { limit: 1 });
    expect((await provider.searchSemantic(near)).map((h) => h.revisionId)).toEqual(['p1']);
    expect((await provider.searchSemantic({ ...near, model: MODEL_B })).map((h) => h.revisionId)).toEqual(['p1']);
    await provider.applyVectors('ws_a', { model: MODEL_A, dimensions: 8, upserts: [], updates: [], deletes: ['p1'] });
    expect(await provider.vectorRevisionIds('ws_a', MODEL_A, ['p1'])).toEqual([]);
    expect(await provider.vectorRevisionIds('ws_a', MODEL_B, ['p1'])).toEqual([]);
    await provider.applyVectors('ws_a', batch([vdoc({ revisionId: 'm1', vector: unit(1) })], MODEL_B));
    await provider.clearVectors('ws_a', { keepModel: MODEL_A });
    expect(await provider.vectorRevisionIds('ws_a', MODEL_B)).toEqual([]);
    expect((await provider.vectorRevisionIds('ws_a', MODEL_A)).length).toBeGreaterThan(0);
    expect(await provider.vectorRevisionIds('ws_b', MODEL_A)).toEqual(['s5']);
    await provider.clearVectors('ws_a');
    expect(await provider.vectorRevisionIds('ws_a', MODEL_A)).toEqual([]);
  });
});

describe('meilisearch semantic arm against an unreachable server', () => {
  it('reports every call as SearchUnavailableError', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const provider = new MeilisearchProvider(`http://127.0.0.1:${port}`, 'key', 'tms_unreachable', 1000);
    await expect(provider.searchSemantic(semantic(unit(1)))).rejects.toBeInstanceOf(SearchUnavailableError);
    await expect(
      provider.applyVectors('ws_a', batch([vdoc({ revisionId: 'x', vector: unit(1) })])),
    ).rejects.toBeInstanceOf(SearchUnavailableError);
    await expect(provider.vectorRevisionIds('ws_a', MODEL_A)).rejects.toBeInstanceOf(SearchUnavailableError);
  });
});
