// biome-ignore-all lint/suspicious/noExplicitAny: recall answers are walked as plain JSON in tests.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApiClient } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONCEPT_DIMENSIONS, EmbeddingServer } from './embedding-server';
import { GraphqlClient, gql, snakeKeys } from './graphql-client';
import { DRIVERS, type Harness, type Human, startHarness } from './harness';
import { expectError } from './shapes';

const RECALL_FIELDS = gql(`query($input: RecallInput!) {
  recall(input: $input) {
    status indexedSequence contextChars retrieval { mode lexical semantic }
    items { memory { ...M } revision { ...R } score stale ranks { lexical semantic } }
  }
}`);

/** REST body -> GraphQL input (camelCase keys). */
function camelKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()), camelKeys(v)]),
    );
  }
  return value;
}

/** One recall on the three transports: REST, GraphQL and the MCP tool, each answer as /v1 JSON. */
async function recallEverywhere(h: Harness, api: ApiClient, token: string, body: Record<string, unknown>) {
  const rest = await api.post('/v1/recall', body);
  expect(rest.status, rest.text).toBe(200);
  const graphql = new GraphqlClient(h.url, token, api.workspace);
  const viaGraphql = snakeKeys((await graphql.data(RECALL_FIELDS, { input: camelKeys(body) })).recall);
  const client = new Client({ name: 'hybrid-recall-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', h.url), {
      requestInit: { headers: { authorization: `Bearer ${token}`, 'x-service-workspace': api.workspace as string } },
    }),
  );
  try {
    const result = (await client.callTool({ name: 'svc_recall', arguments: body })) as CallToolResult;
    expect(result.isError ?? false, JSON.stringify(result.structuredContent)).toBe(false);
    return { rest: rest.body as any, graphql: viaGraphql as any, mcp: result.structuredContent as any };
  } finally {
    await client.close();
  }
}

const ids = (answer: { items: { memory: { id: string } }[] }) => answer.items.map((i) => i.memory.id);

describe.each(DRIVERS)('recall modes, ranks and budget defaults without an embedder (%s)', (driver) => {
  let h: Harness;
  let api: ApiClient;
  let token: string;
  let namespaceId: string;
  let last = 0;
  const memories: Record<string, string> = {};

  beforeAll(async () => {
    h = await startHarness({ driver, env: { INDEXER: 'embedded', EMBEDDER: 'none' } });
    const ws = await h.workspace();
    api = ws.api;
    token = await ws.owner.token();
    namespaceId = (await api.post('/v1/namespaces', { parent_id: null, name: 'garden' })).body.namespace.id;
    for (const text of ['Basil wants sun and basil wants water', 'Basil seedlings in April', 'Tomatoes want sun']) {
      const created = await api.post('/v1/memories', { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0 });
      memories[text] = created.body.memory.id;
      last = created.body.commit.sequence;
    }
  });
  afterAll(() => h?.close());

  it('takes a recall without any budget: at most 20 items and 65536 characters', async () => {
    // 22 short matches, then three of 32000 characters: 20 items at most, and two long ones fit 65536, not three.
    let sequence = 0;
    for (let n = 0; n < 22; n += 1) {
      const text = `zucchini note ${n}`;
      sequence = (await api.post('/v1/memories', { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0 }))
        .body.commit.sequence;
    }
    for (const letter of ['a', 'b', 'c']) {
      const text = `pumpkin ${letter.repeat(32000 - 8)}`;
      sequence = (await api.post('/v1/memories', { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0 }))
        .body.commit.sequence;
    }
    const many = await api.post('/v1/recall', {
      namespace_ids: [namespaceId],
      query: 'zucchini',
      min_sequence: sequence,
      wait_ms: 5000,
    });
    expect(many.status, many.text).toBe(200);
    expect(many.body.status).toBe('complete');
    expect(many.body.items).toHaveLength(20);
    expect(many.body.items.map((i: any) => i.ranks.lexical)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const long = await api.post('/v1/recall', { namespace_ids: [namespaceId], query: 'pumpkin' });
    expect(long.body.items).toHaveLength(2);
    expect(long.body.context_chars).toBe(64000);
    expect(long.body.status).toBe('partial');
    // An empty budget and a budget of one field take the other defaults.
    expect(
      (await api.post('/v1/recall', { namespace_ids: [namespaceId], query: 'zucchini', budget: {} })).body.items,
    ).toHaveLength(20);
    const wider = await api.post('/v1/recall', {
      namespace_ids: [namespaceId],
      query: 'pumpkin',
      budget: { max_context_chars: 96000 },
    });
    expect(wider.body.items).toHaveLength(3);
    const one = await api.post('/v1/recall', {
      namespace_ids: [namespaceId],
      query: 'basil',
      budget: { max_items: 1 },
    });
    expect(one.body.items).toHaveLength(1);
    // The ranking is the lexical arm's: the text naming basil twice first.
    expect(ids(one.body)).toEqual([memories['Basil wants sun and basil wants water']]);
  });

  it('refuses a mode or budget outside the catalog, naming the field', async () => {
    expectError(
      await api.post('/v1/recall', { namespace_ids: [namespaceId], query: 'x', mode: 'vector' }),
      'invalid_input',
      {
        detail: /mode/,
      },
    );
    expectError(
      await api.post('/v1/recall', {
        namespace_ids: [namespaceId],
        query: 'x',
        budget: { max_context_chars: 1048577 },
      }),
      'invalid_input',
      { detail: /max_context_chars/ },
    );
    expectError(
      await api.post('/v1/recall', { namespace_ids: [namespaceId], query: 'x', budget: { max_items: 0 } }),
      'invalid_input',
      { detail: /max_items/ },
    );
  });

  it.each(['hybrid', 'lexical', 'semantic', undefined] as const)(
    'mode %s: the lexical arm answers, the semantic arm is off, on REST, GraphQL and MCP alike',
    async (mode) => {
      const body = {
        namespace_ids: [namespaceId],
        query: 'sun',
        min_sequence: last,
        wait_ms: 5000,
        ...(mode ? { mode } : {}),
      };
      const { rest, graphql, mcp } = await recallEverywhere(h, api, token, body);
      expect(graphql).toEqual(rest);
      expect(mcp).toEqual(rest);
      // Off by configuration is not degraded; `semantic` alone falls back to the lexical arm.
      expect(rest.status).toBe('complete');
      expect(rest.retrieval).toEqual({ mode: mode ?? 'hybrid', lexical: 'ok', semantic: 'off' });
      expect(new Set(ids(rest))).toEqual(
        new Set([memories['Basil wants sun and basil wants water'], memories['Tomatoes want sun']]),
      );
      expect(rest.items.map((i: any) => i.ranks)).toEqual([
        { lexical: 1, semantic: null },
        { lexical: 2, semantic: null },
      ]);
      // The fused score keeps the arm's order.
      expect(rest.items[0].score).toBeGreaterThan(rest.items[1].score);
    },
  );
});

const capabilityGrant = (actorId: string, capabilities: string[], inherit: boolean) => ({
  target: { kind: 'actor' as const, actor_id: actorId },
  capabilities,
  inherit,
});

describe.each(DRIVERS)('hybrid recall with an OpenAI-compatible embedder on loopback (%s)', (driver) => {
  let h: Harness;
  let embeddings: EmbeddingServer;
  let api: ApiClient;
  let token: string;
  let ws: string;
  let owner: Human;

  beforeAll(async () => {
    embeddings = await EmbeddingServer.start();
    h = await startHarness({
      driver,
      env: {
        INDEXER: 'embedded',
        EMBEDDER: 'openai',
        EMBEDDINGS_URL: embeddings.url,
        EMBEDDINGS_MODEL: 'concepts',
        EMBEDDINGS_DIMENSIONS: String(CONCEPT_DIMENSIONS),
      },
    });
    const created = await h.workspace();
    api = created.api;
    ws = created.id;
    owner = created.owner;
    token = await owner.token();
  });
  afterAll(async () => {
    await h?.close();
    await embeddings?.stop();
  });

  const write = async (namespaceId: string, text: string) => {
    const res = await api.post('/v1/memories', { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0 });
    expect(res.status, res.text).toBe(200);
    return res.body as {
      memory: { id: string };
      revision: { id: string; recorded_at: number };
      commit: { sequence: number };
    };
  };

  it('ranks with both arms: ranks match each arm alone, and an item found by one arm has null in the other', async () => {
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'cars' })).body.namespace.id;
    // Seven notes semantically close to "car" (1/√2), none with the word; one with the word, less close (1/√3).
    const notes = [];
    for (let n = 0; n < 7; n += 1) notes.push((await write(ns, `automobile note ${n}`)).memory.id);
    const park = await write(ns, 'car park by the tea shop');
    const body = { namespace_ids: [ns], query: 'car', min_sequence: park.commit.sequence, wait_ms: 10000 };

    const lexical = (await api.post('/v1/recall', { ...body, mode: 'lexical', budget: { max_items: 3 } })).body;
    expect(lexical.status).toBe('complete');
    expect(lexical.retrieval).toEqual({ mode: 'lexical', lexical: 'ok', semantic: 'off' });
    expect(ids(lexical)).toEqual([park.memory.id]);
    expect(lexical.items[0].ranks).toEqual({ lexical: 1, semantic: null });

    const semantic = (await api.post('/v1/recall', { ...body, mode: 'semantic', budget: { max_items: 3 } })).body;
    expect(semantic.status).toBe('complete');
    expect(semantic.retrieval).toEqual({ mode: 'semantic', lexical: 'off', semantic: 'ok' });
    // The equally close notes in revision id order (the arm's tie rule).
    expect(semantic.items.map((i: any) => i.ranks)).toEqual([1, 2, 3].map((r) => ({ lexical: null, semantic: r })));
    const closest = semantic.items.map((i: any) => i.revision.id);
    expect(closest).toEqual([...closest].sort());
    for (const id of ids(semantic)) expect(notes).toContain(id);

    // Hybrid, three items: each arm looks six deep, so the park (semantic rank 8) is lexical only.
    const { rest, graphql, mcp } = await recallEverywhere(h, api, token, { ...body, budget: { max_items: 3 } });
    expect(graphql).toEqual(rest);
    expect(mcp).toEqual(rest);
    expect(rest.status).toBe('complete');
    expect(rest.retrieval).toEqual({ mode: 'hybrid', lexical: 'ok', semantic: 'ok' });
    const parkItem = rest.items.find((i: any) => i.memory.id === park.memory.id);
    expect(parkItem.ranks).toEqual({ lexical: 1, semantic: null });
    for (const item of rest.items.filter((i: any) => i !== parkItem)) {
      expect(item.ranks.lexical).toBeNull();
      expect(item.ranks.semantic).toBe(semantic.items.findIndex((s: any) => s.memory.id === item.memory.id) + 1);
    }
    // The weighted fusion: each arm's score over its best, times 0.5, for every candidate: an arm
    // that did not rank a candidate is asked its score. The park: lexical 1 (the only match),
    // semantic (1/√3)/(1/√2); the notes: semantic 1, lexical 0 (no query word).
    const [first, ...others] = rest.items.map((i: any) => i.score);
    expect(first).toBeCloseTo(0.5 + 0.5 * Math.sqrt(2 / 3), 6);
    expect(others).toEqual([0.5, 0.5]);
    expect(rest.items[0].memory.id).toBe(park.memory.id);

    // Asked deeper, the park is found by both arms and rises above notes only one arm found.
    const deep = (await api.post('/v1/recall', { ...body, budget: { max_items: 8 } })).body;
    expect(deep.items[0].memory.id).toBe(park.memory.id);
    expect(deep.items[0].ranks).toEqual({ lexical: 1, semantic: 8 });
    expect(deep.items[0].score).toBeGreaterThanOrEqual(0.5);
  });

  it('filters inside both arms: a correction by its known_at, never a purged memory, never an unreadable namespace', async () => {
    const bob = await h.human({ enroll: false });
    expect(
      (
        await api.put(`/v1/workspaces/${ws}/members`, {
          members: [
            { actor_id: owner.actorId, role: 'admin' },
            { actor_id: bob.actorId, role: 'member' },
          ],
        })
      ).status,
    ).toBe(200);
    const top = (await api.post('/v1/namespaces', { parent_id: null, name: 'shared' })).body.namespace.id;
    const secret = (await api.post('/v1/namespaces', { parent_id: top, name: 'secret' })).body.namespace.id;
    expect(
      (await api.put(`/v1/namespaces/${top}/grants`, { grants: [capabilityGrant(bob.actorId, ['read'], false)] }))
        .status,
    ).toBe(200);

    const corrected = await write(top, 'The vehicle is blue');
    const purged = await write(top, 'purple automobile secret');
    const hidden = await write(secret, 'hidden automobile in the vault');
    const beforeChanges = purged.revision.recorded_at;
    const fixed = await api.post(`/v1/memories/${corrected.memory.id}/corrections`, {
      expected_generation: 1,
      text: 'The kettle is blue',
    });
    expect(fixed.status, fixed.text).toBe(200);
    const forgot = await api.post(`/v1/memories/${purged.memory.id}/forget`, { mode: 'purge', expected_generation: 1 });
    expect(forgot.status, forgot.text).toBe(200);
    const last = forgot.body.commit.sequence;

    const bobApi = await bob.api(ws);
    for (const mode of ['hybrid', 'lexical', 'semantic']) {
      for (const [reader, label] of [
        [api, 'owner'],
        [bobApi, 'bob'],
      ] as const) {
        const recall = async (query: string, knownAt?: number) => {
          const res = await reader.post('/v1/recall', {
            namespace_ids: [top],
            query,
            mode,
            min_sequence: last,
            wait_ms: 10000,
            ...(knownAt === undefined ? {} : { known_at: knownAt }),
          });
          expect(res.status, `${label} ${mode}: ${res.text}`).toBe(200);
          expect(res.body.status, `${label} ${mode}`).toBe('complete');
          expect(res.text).not.toContain('purple automobile secret');
          expect(ids(res.body)).not.toContain(purged.memory.id);
          if (label === 'bob') expect(ids(res.body)).not.toContain(hidden.memory.id);
          return res.body;
        };
        // Known before the correction: the vehicle text, found by either arm.
        const then = await recall('vehicle', beforeChanges);
        const thenItem = then.items.find((i: any) => i.memory.id === corrected.memory.id);
        expect(thenItem?.revision.text, `${label} ${mode}`).toBe('The vehicle is blue');
        // Known now: the vehicle text is gone from both arms; the corrected one is found by its own words.
        const now = await recall('vehicle');
        for (const item of now.items) expect(item.revision.text).not.toBe('The vehicle is blue');
        // The semantic arm proposes every memory in scope, however far; the lexical one needs the word.
        if (mode === 'lexical') expect(ids(now)).not.toContain(corrected.memory.id);
        if (mode !== 'semantic') {
          const kettle = await recall('kettle');
          expect(kettle.items[0]?.revision.text).toBe('The kettle is blue');
        }
        await recall('purple automobile secret', beforeChanges);
      }
    }
    // The owner reads the subtree: the hidden memory is found there.
    const ownerView = await api.post('/v1/recall', { namespace_ids: [top], query: 'hidden vault', mode: 'lexical' });
    expect(ids(ownerView.body)).toContain(hidden.memory.id);
  });

  it('min_sequence covers the semantic arm: pending until its vectors exist, complete after', async () => {
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'slow' })).body.namespace.id;
    embeddings.hold('slowpoke');
    const slow = await write(ns, 'slowpoke automobile');
    // The query is not held: only the document's embedding waits.
    const body = { namespace_ids: [ns], query: 'automobile', min_sequence: slow.commit.sequence };
    // The lexical arm alone catches up; both arms together wait for the held vectors.
    const lexical = (await api.post('/v1/recall', { ...body, mode: 'lexical', wait_ms: 10000 })).body;
    expect(lexical.status).toBe('complete');
    expect(ids(lexical)).toEqual([slow.memory.id]);
    const pending = (await api.post('/v1/recall', { ...body, wait_ms: 300 })).body;
    expect(pending.status).toBe('pending');
    expect(pending.indexed_sequence).toBeLessThan(slow.commit.sequence);
    embeddings.release();
    const done = (await api.post('/v1/recall', { ...body, wait_ms: 10000 })).body;
    expect(done.status).toBe('complete');
    expect(done.indexed_sequence).toBeGreaterThanOrEqual(slow.commit.sequence);
    expect(done.items[0]).toMatchObject({ memory: { id: slow.memory.id }, ranks: { lexical: 1, semantic: 1 } });
  });

  it('answers degraded with the embedder down: writes commit, the lexical arm answers', async () => {
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'down' })).body.namespace.id;
    const before = await write(ns, 'zeppelin hangar');
    const ready = await api.post('/v1/recall', {
      namespace_ids: [ns],
      query: 'zeppelin',
      min_sequence: before.commit.sequence,
      wait_ms: 10000,
    });
    expect(ready.body.status).toBe('complete');
    await embeddings.stop();
    const after = await write(ns, 'zeppelin mooring mast');
    const hybrid = (await api.post('/v1/recall', { namespace_ids: [ns], query: 'zeppelin mast' })).body;
    expect(hybrid.status).toBe('degraded');
    expect(hybrid.retrieval).toEqual({ mode: 'hybrid', lexical: 'ok', semantic: 'unavailable' });
    expect(hybrid.items.length).toBeGreaterThan(0);
    for (const item of hybrid.items) expect(item.ranks.semantic).toBeNull();
    // A query embedded before is cached (its vector still works): a new text meets the stopped embedder.
    const semantic = (await api.post('/v1/recall', { namespace_ids: [ns], query: 'Zeppelin', mode: 'semantic' })).body;
    expect(semantic.status).toBe('degraded');
    expect(semantic.retrieval).toEqual({ mode: 'semantic', lexical: 'off', semantic: 'unavailable' });
    // No asked arm answered: the ledger's own scan, both ranks null.
    expect(new Set(ids(semantic))).toEqual(new Set([before.memory.id, after.memory.id]));
    for (const item of semantic.items)
      expect(item).toMatchObject({ score: 0, ranks: { lexical: null, semantic: null } });
    const lexical = (await api.post('/v1/recall', { namespace_ids: [ns], query: 'zeppelin', mode: 'lexical' })).body;
    expect(lexical.retrieval).toEqual({ mode: 'lexical', lexical: 'ok', semantic: 'off' });
    expect(lexical.status).not.toBe('degraded');
  });
});

describe.each(DRIVERS)('hybrid recall with the builtin embedder (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    // The default embedder of a deployment: the builtin model, in a child process of the gateway.
    h = await startHarness({ driver, env: { INDEXER: 'embedded', EMBEDDER: 'builtin' } });
  });
  afterAll(() => h?.close());

  it('finds a memory by meaning that shares no word with the query, and fuses it with the lexical arm', async () => {
    const { api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'mixed' })).body.namespace.id;
    let last = 0;
    const idOf: Record<string, string> = {};
    for (const text of [
      'The automobile needs new tyres',
      'Ana prefers green tea.',
      'The quokka lives on Rottnest Island.',
      'The meeting moved to Thursday',
    ]) {
      const res = await api.post('/v1/memories', { namespace_id: ns, kind: 'claim', text, valid_from: 0 });
      idOf[text] = res.body.memory.id;
      last = res.body.commit.sequence;
    }
    const body = { namespace_ids: [ns], query: 'car repair', min_sequence: last, wait_ms: 5000 };
    // The model loads at the first commit: ask again while the semantic arm catches up.
    let hybrid = (await api.post('/v1/recall', body)).body;
    for (let tries = 0; tries < 6 && hybrid.status !== 'complete'; tries += 1) {
      hybrid = (await api.post('/v1/recall', body)).body;
    }
    expect(hybrid.status).toBe('complete');
    expect(hybrid.retrieval).toEqual({ mode: 'hybrid', lexical: 'ok', semantic: 'ok' });
    expect(hybrid.items[0].memory.id).toBe(idOf['The automobile needs new tyres']);
    expect(hybrid.items[0].ranks).toEqual({ lexical: null, semantic: 1 });
    const lexical = (await api.post('/v1/recall', { ...body, mode: 'lexical' })).body;
    expect(lexical.items).toEqual([]);
    expect(lexical.status).toBe('complete');
    // A query with a word of one memory: both arms rank it first.
    const both = (await api.post('/v1/recall', { namespace_ids: [ns], query: 'green tea', mode: 'hybrid' })).body;
    expect(both.items[0].memory.id).toBe(idOf['Ana prefers green tea.']);
    expect(both.items[0].ranks).toEqual({ lexical: 1, semantic: 1 });
    expect(both.items[0].score).toBe(1);
  });
});
