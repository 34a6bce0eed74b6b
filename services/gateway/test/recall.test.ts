import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const budget = { max_items: 10, max_context_chars: 10000 };

describe.each(DRIVERS)('recall with the embedded indexer (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver, env: { INDEXER: 'embedded', EMBEDDER: 'builtin' } });
  });
  afterAll(() => h?.close());

  it('finds a memory once its commit is indexed, and says pending beyond the ledger', async () => {
    const { api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'notes' })).body.namespace;
    const created = await api.post('/v1/memories', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'The quokka lives on Rottnest Island.',
      valid_from: 0,
    });
    const sequence = created.body.commit.sequence;
    // The builtin embedder loads its model at the first commit: the semantic arm may take a while.
    const recallIndexed = () =>
      api.post('/v1/recall', {
        namespace_ids: [ns.id],
        query: 'quokka island',
        budget,
        min_sequence: sequence,
        wait_ms: 5000,
      });
    let found = await recallIndexed();
    for (let tries = 0; tries < 6 && found.body.status !== 'complete'; tries += 1) found = await recallIndexed();
    expect(found.status).toBe(200);
    expect(found.body.status).toBe('complete');
    expect(found.body.indexed_sequence).toBeGreaterThanOrEqual(sequence);
    expect(found.body.items.map((i: { memory: { id: string } }) => i.memory.id)).toEqual([created.body.memory.id]);
    expect(found.body.context_chars).toBe('The quokka lives on Rottnest Island.'.length);

    const beyond = await api.post('/v1/recall', {
      namespace_ids: [ns.id],
      query: 'quokka',
      budget,
      min_sequence: sequence + 1000,
    });
    expect(beyond.body.status).toBe('pending');
    const asError = await api.post('/v1/recall', {
      namespace_ids: [ns.id],
      query: 'quokka',
      budget,
      min_sequence: sequence + 1000,
      on_pending: 'error',
    });
    expect(asError.status).toBe(409);
    expect(asError.body.error).toMatchObject({ code: 'projection_pending', retryable: true, retry_after_seconds: 1 });
  });

  it("searches the readable part of a namespace's subtree, loaded with the caller's standing", async () => {
    const { id: ws, api, owner } = await h.workspace();
    const namespace = async (name: string, parent: string | null) =>
      (await api.post('/v1/namespaces', { parent_id: parent, name })).body.namespace.id as string;
    const top = await namespace('top', null);
    const open = await namespace('open', top);
    const closed = await namespace('closed', top);
    let last = 0;
    const memoryIn = new Map<string, string>();
    for (const [ns, text] of [
      [top, 'kiwi on top'],
      [open, 'kiwi in the open'],
      [closed, 'kiwi kept closed'],
    ] as const) {
      const created = await api.post('/v1/memories', { namespace_id: ns, kind: 'claim', text, valid_from: 0 });
      memoryIn.set(created.body.memory.id, ns);
      last = created.body.commit.sequence;
    }
    const bob = await h.human({ enroll: false });
    const members = [
      { actor_id: owner.actorId, role: 'admin' },
      { actor_id: bob.actorId, role: 'member' },
    ];
    expect((await api.put(`/v1/workspaces/${ws}/members`, { members })).status).toBe(200);
    const grant = (inherit: boolean) => ({
      grants: [{ target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read'], inherit }],
    });
    expect((await api.put(`/v1/namespaces/${top}/grants`, grant(false))).status).toBe(200);
    expect((await api.put(`/v1/namespaces/${open}/grants`, grant(true))).status).toBe(200);
    const reader = await bob.api(ws);
    const namespacesFound = async (ids: string[], includeDescendants: boolean) => {
      const res = await reader.post('/v1/recall', {
        namespace_ids: ids,
        include_descendants: includeDescendants,
        query: 'kiwi',
        mode: 'lexical',
        budget,
        min_sequence: last,
        wait_ms: 5000,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.status).toBe('complete');
      return new Set(res.body.items.map((i: { memory: { id: string } }) => memoryIn.get(i.memory.id)));
    };
    expect(await namespacesFound([top], true)).toEqual(new Set([top, open]));
    expect(await namespacesFound([top], false)).toEqual(new Set([top]));
    expect(await namespacesFound([open, top], true)).toEqual(new Set([top, open]));
    const refused = await reader.post('/v1/recall', { namespace_ids: [closed], query: 'kiwi', budget });
    expect(refused.status).toBe(404);
    // The owner reads the whole subtree.
    const all = await api.post('/v1/recall', {
      namespace_ids: [top],
      query: 'kiwi',
      mode: 'lexical',
      budget,
      min_sequence: last,
      wait_ms: 5000,
    });
    expect(all.body.items).toHaveLength(3);
  });

  it('respects the context budget exactly and reports partial when it cuts', async () => {
    const { api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'n' })).body.namespace;
    let last = 0;
    for (const text of ['zebra one', 'zebra two two', 'zebra three three three']) {
      last = (await api.post('/v1/memories', { namespace_id: ns.id, kind: 'claim', text, valid_from: 0 })).body.commit
        .sequence;
    }
    const res = await api.post('/v1/recall', {
      namespace_ids: [ns.id],
      query: 'zebra',
      budget: { max_items: 10, max_context_chars: 22 },
      min_sequence: last,
      wait_ms: 5000,
    });
    expect(res.body.context_chars).toBeLessThanOrEqual(22);
    expect(res.body.items.reduce((n: number, i: { revision: { text: string } }) => n + i.revision.text.length, 0)).toBe(
      res.body.context_chars,
    );
    expect(res.body.status).toBe('partial');
  });
});

describe.each(DRIVERS)('recall never leaks what the ledger refuses (%s, indexer paused)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  it('drops purged, retracted and unreadable candidates although the index still holds them', async () => {
    const { api, owner } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'n' })).body.namespace;
    const keep = await api.post('/v1/memories', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'walrus keep',
      valid_from: 0,
    });
    const purge = await api.post('/v1/memories', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'walrus purge',
      valid_from: 0,
    });
    const retract = await api.post('/v1/memories', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'walrus retract',
      valid_from: 0,
    });
    const { Indexer } = await import('@tms/search');
    const { PostgresSearchProvider } = await import('@tms/search');
    const provider = new PostgresSearchProvider(h.gateway.ledger.handle.db);
    await provider.prepare();
    await new Indexer(h.gateway.ledger, provider).catchUp();
    const ws = api.workspace as string;
    expect(await provider.indexedRevisionIds(ws)).toHaveLength(3);

    // The indexer is not running now: the index keeps all three.
    await api.post(`/v1/memories/${purge.body.memory.id}/forget`, { mode: 'purge', expected_generation: 1 });
    await api.post(`/v1/memories/${retract.body.memory.id}/forget`, { mode: 'retract', expected_generation: 1 });
    expect(await provider.indexedRevisionIds(ws)).toHaveLength(3);

    const res = await api.post('/v1/recall', { namespace_ids: [ns.id], query: 'walrus', budget });
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: { memory: { id: string } }) => i.memory.id)).toEqual([keep.body.memory.id]);
    expect(res.text).not.toContain('walrus purge');

    // A member without read gets not_found for the namespace, as everywhere.
    const other = await h.human();
    await api.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: other.actorId, role: 'member' },
      ],
    });
    const stranger = await other.api(ws);
    const denied = await stranger.post('/v1/recall', { namespace_ids: [ns.id], query: 'walrus', budget });
    expect(denied.status).toBe(404);

    // One indexer cycle later the purged and retracted documents have left the index.
    await new Indexer(h.gateway.ledger, provider).catchUp();
    const left = await provider.indexedRevisionIds(ws);
    expect(left).not.toContain(purge.body.revision.id);
  });
});

describe('recall with Meilisearch unreachable', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      driver: 'pglite',
      env: { SEARCH_PROVIDER: 'meilisearch', MEILI_URL: `http://127.0.0.1:${await closedPort()}`, INDEXER: 'embedded' },
    });
  });
  afterAll(() => h?.close());

  it('answers degraded with what the ledger alone gives, and the indexer keeps retrying', async () => {
    const { api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'n' })).body.namespace;
    const created = await api.post('/v1/memories', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'Narwhal tusks',
      valid_from: 0,
    });
    const res = await api.post('/v1/recall', { namespace_ids: [ns.id], query: 'narwhal', budget });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('degraded');
    // Commits without memories need no documents; the memory's commit cannot be indexed.
    expect(res.body.indexed_sequence).toBeLessThan(created.body.commit.sequence);
    expect(res.body.items.map((i: { memory: { id: string } }) => i.memory.id)).toEqual([created.body.memory.id]);
    // The embedded indexer fails, backs off and tries again: its error counter keeps growing.
    const errorsNow = async () =>
      Number(/tms_indexer_errors_total (\d+)/.exec((await h.api.get('/metrics')).text)?.[1] ?? '0');
    const deadline = Date.now() + 20_000;
    while ((await errorsNow()) < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await errorsNow()).toBeGreaterThanOrEqual(3);
    const still = await api.post('/v1/recall', { namespace_ids: [ns.id], query: 'narwhal', budget });
    expect(still.body.indexed_sequence).toBeLessThan(created.body.commit.sequence);
    expect(h.logs.some((l) => l.includes('retrying with backoff'))).toBe(true);
  });
});
