import net from 'node:net';
import { Ledger } from '@tms/ledger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MeilisearchProvider,
  PostgresSearchProvider,
  type SearchDocument,
  type SearchProvider,
  SearchUnavailableError,
} from '../src/index';

/**
 * One contract for every provider: always the embedded Postgres full-text provider, and
 * Meilisearch when MEILI_URL points at a server (none runs where this project is built).
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
      const provider = new MeilisearchProvider(meiliUrl, process.env.MEILI_API_KEY, `tms_contract_${Date.now()}`);
      return { provider, close: async () => {} };
    },
  });
}

const doc = (over: Partial<SearchDocument> & Pick<SearchDocument, 'revisionId' | 'text'>): SearchDocument => ({
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

const query = { workspaceId: 'ws_a', namespaceIds: ['ns_1', 'ns_2'], asOf: 50, knownAt: 1000, limit: 10, offset: 0 };

describe.each(subjects)('search provider contract: $name', (subject) => {
  let provider: SearchProvider;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ provider, close } = await subject.open());
    await provider.prepare();
    await provider.prepare(); // idempotent
  });
  afterAll(() => close?.());

  it('finds applied documents by their words, within the namespaces asked', async () => {
    await provider.apply('ws_a', {
      upserts: [
        doc({ revisionId: 'r1', text: 'The heron fishes at dawn.' }),
        doc({ revisionId: 'r2', text: 'A heron and a crane.', namespaceId: 'ns_2', kind: 'episode' }),
        doc({ revisionId: 'r3', text: 'Unrelated words only.' }),
        doc({ revisionId: 'r4', text: 'heron elsewhere', namespaceId: 'ns_9' }),
        doc({ revisionId: 'r5', text: 'heron in another workspace', workspaceId: 'ws_b' }),
      ],
      deletes: [],
    });
    const hits = await provider.search({ ...query, text: 'heron' });
    expect(hits.map((h) => h.revisionId).sort()).toEqual(['r1', 'r2']);
    expect(hits.every((h) => h.memoryId === `mem_${h.revisionId}`)).toBe(true);
    const episodes = await provider.search({ ...query, text: 'heron', kinds: ['episode'] });
    expect(episodes.map((h) => h.revisionId)).toEqual(['r2']);
  });

  it('filters by validity at as_of and record interval at known_at (half-open)', async () => {
    await provider.apply('ws_a', {
      upserts: [
        doc({ revisionId: 'v1', text: 'ibis early', validFrom: 0, validTo: 50 }),
        doc({ revisionId: 'v2', text: 'ibis late', validFrom: 50, validTo: null }),
        doc({ revisionId: 'k1', text: 'ibis superseded', recordedAt: 100, recordedUntil: 500 }),
        doc({ revisionId: 'k2', text: 'ibis future', recordedAt: 2000 }),
      ],
      deletes: [],
    });
    const ids = async (asOf: number, knownAt: number) =>
      (await provider.search({ ...query, text: 'ibis', asOf, knownAt })).map((h) => h.revisionId).sort();
    expect(await ids(50, 1000)).toEqual(['v2']);
    expect(await ids(49, 1000)).toEqual(['v1']);
    expect(await ids(50, 499)).toEqual(['k1', 'v2']);
    expect(await ids(50, 500)).toEqual(['v2']);
    expect(await ids(50, 2000)).toEqual(['k2', 'v2']);
  });

  it('applies a batch twice without duplicates, deletes, pages and clears', async () => {
    const batch = {
      upserts: [doc({ revisionId: 'd1', text: 'egret one' }), doc({ revisionId: 'd2', text: 'egret two' })],
      deletes: [],
    };
    await provider.apply('ws_a', batch);
    await provider.apply('ws_a', batch);
    expect((await provider.search({ ...query, text: 'egret' })).map((h) => h.revisionId).sort()).toEqual(['d1', 'd2']);
    const page1 = await provider.search({ ...query, text: 'egret', limit: 1 });
    const page2 = await provider.search({ ...query, text: 'egret', limit: 1, offset: 1 });
    expect([...page1, ...page2].map((h) => h.revisionId).sort()).toEqual(['d1', 'd2']);
    await provider.apply('ws_a', { upserts: [], deletes: ['d1'] });
    expect((await provider.search({ ...query, text: 'egret' })).map((h) => h.revisionId)).toEqual(['d2']);
    expect(await provider.indexedRevisionIds('ws_a')).toContain('d2');
    await provider.clear('ws_a');
    expect(await provider.indexedRevisionIds('ws_a')).toEqual([]);
    expect(await provider.indexedRevisionIds('ws_b')).toEqual(['r5']);
  });

  it('finds nothing for a query without words, and keeps U+0000 out of harm', async () => {
    await provider.apply('ws_a', { upserts: [doc({ revisionId: 'z1', text: 'stork\u0000crane' })], deletes: [] });
    expect(await provider.search({ ...query, text: '!!! ???' })).toEqual([]);
    expect((await provider.search({ ...query, text: 'stork' })).map((h) => h.revisionId)).toEqual(['z1']);
  });
});

describe('meilisearch provider against an unreachable server', () => {
  let provider: MeilisearchProvider;
  beforeAll(async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    provider = new MeilisearchProvider(`http://127.0.0.1:${port}`, 'key', 'tms_unreachable', 1000);
  });

  it('reports every call as SearchUnavailableError', async () => {
    await expect(provider.prepare()).rejects.toBeInstanceOf(SearchUnavailableError);
    await expect(
      provider.apply('ws_a', { upserts: [doc({ revisionId: 'x', text: 'x' })], deletes: [] }),
    ).rejects.toBeInstanceOf(SearchUnavailableError);
    await expect(provider.search({ ...query, text: 'heron' })).rejects.toBeInstanceOf(SearchUnavailableError);
    await expect(provider.indexedRevisionIds('ws_a')).rejects.toBeInstanceOf(SearchUnavailableError);
  });
});
