// biome-ignore-all lint/suspicious/noExplicitAny: recall answers are walked as plain JSON in tests.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApiClient } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphqlClient, gql, snakeKeys } from './graphql-client';
import { DRIVERS, type Harness, startHarness } from './harness';
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
