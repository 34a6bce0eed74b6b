import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorObject, MIN_TIMESTAMP, TIMESTAMP_LIMIT } from '@tms/catalog';
import { type ApiClient, type CallResult, freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphqlClient } from './graphql-client';
import { type Harness, startHarness } from './harness';
import { expectError } from './shapes';

/*
 * Every time a client sends lies in the years 0001-9999 (decisions §1): a millisecond value such
 * as `Date.now()` is `invalid_input` on REST, GraphQL and MCP alike, and the detail says that
 * seconds are expected. The bound comes from the catalog's one time schema, so one driver suffices.
 */

const SECONDS = 'must be Unix seconds between year 0001 and 9999';
const MILLISECONDS = `${SECONDS} (got a value in milliseconds?)`;

describe('times are Unix seconds in the years 0001-9999', () => {
  let h: Harness;
  let ws: string;
  let api: ApiClient;
  let ns: string;
  let memoryId: string;
  let graphql: GraphqlClient;
  let mcp: Client;

  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite' });
    const created = await h.workspace();
    ws = created.id;
    api = created.api;
    ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'times' })).body.namespace.id;
    const memory = await api.post('/v1/memories', { namespace_id: ns, kind: 'claim', text: 'x', valid_from: 0 });
    memoryId = memory.body.memory.id;
    const token = await created.owner.token();
    graphql = new GraphqlClient(h.url, token, ws);
    mcp = new Client({ name: 'time-range-test', version: '1.0.0' });
    const headers = { authorization: `Bearer ${token}`, 'x-service-workspace': ws };
    await mcp.connect(new StreamableHTTPClientTransport(new URL('/mcp', h.url), { requestInit: { headers } }));
  });
  afterAll(async () => {
    await mcp?.close().catch(() => {});
    await h?.close();
  });

  const claim = (extra: Record<string, unknown>) => ({ namespace_id: ns, kind: 'claim', text: 'x', ...extra });

  it('REST: Date.now() and other out-of-range times in bodies and queries are refused, naming the field', async () => {
    const now = Date.now();
    const cases: [Promise<CallResult>, string][] = [
      [api.post('/v1/memories', claim({ valid_from: now })), `body.valid_from: ${MILLISECONDS}`],
      [api.post('/v1/memories', claim({ valid_from: 0, valid_to: now })), `body.valid_to: ${MILLISECONDS}`],
      [api.post('/v1/memories', claim({ valid_from: MIN_TIMESTAMP - 1 })), `body.valid_from: ${MILLISECONDS}`],
      [api.post('/v1/memories', claim({ valid_from: 1e300 })), `body.valid_from: ${SECONDS}`],
      [api.post('/v1/memories', claim({ valid_from: TIMESTAMP_LIMIT })), `body.valid_from: ${MILLISECONDS}`],
      [
        api.post('/v1/credentials', { kind: 'service_key', name: 'k', capabilities: ['read'], expires_at: now }),
        `body.expires_at: ${MILLISECONDS}`,
      ],
      [api.get(`/v1/memories/${memoryId}`, { query: { as_of: now } }), `query.as_of: ${MILLISECONDS}`],
      [api.get(`/v1/memories/${memoryId}`, { query: { known_at: -1e15 } }), `query.known_at: ${SECONDS}`],
      [api.get(`/v1/memories/${memoryId}/history`, { query: { known_at: now } }), `query.known_at: ${MILLISECONDS}`],
      [api.get('/v1/memories', { query: { namespace_id: ns, as_of: now } }), `query.as_of: ${MILLISECONDS}`],
    ];
    for (const [pending, detail] of cases) expectError(await pending, 'invalid_input', { detail });
  });

  it('REST: the bounds themselves: the first second of year 0001 and the last instant of 9999 are times', async () => {
    const first = await api.post('/v1/memories', claim({ valid_from: MIN_TIMESTAMP, valid_to: TIMESTAMP_LIMIT - 1 }));
    expect(first.status, first.text).toBe(200);
    expect(first.body.revision.valid_from).toBe(MIN_TIMESTAMP);
    const read = await api.get(`/v1/memories/${first.body.memory.id}`, {
      query: { as_of: MIN_TIMESTAMP, known_at: TIMESTAMP_LIMIT - 2 ** -15 },
    });
    expect(read.status, read.text).toBe(200);
    expect(read.body.known_at).toBe(TIMESTAMP_LIMIT - 2 ** -15);
  });

  it('GraphQL: validFrom: Date.now() is refused with the same detail as message and header', async () => {
    const mutation = `mutation($input: CreateMemoryInput!, $key: String!) {
      createMemory(input: $input, idempotencyKey: $key) { memory { id } }
    }`;
    const input = { namespaceId: ns, kind: 'claim', text: 'x', validFrom: Date.now() };
    const res = await graphql.request(mutation, { input, key: freshKey() }, { headers: { 'x-request-id': 'gql-ms' } });
    expect(res.headers.get('x-error-detail')).toBe(`body.valid_from: ${MILLISECONDS}`);
    expect(res.body.errors?.[0]?.message).toBe(`body.valid_from: ${MILLISECONDS}`);
    expect(res.body.errors?.[0]?.extensions).toEqual(errorObject('invalid_input', 'gql-ms'));

    const read = await graphql.request('query($id: ID!, $at: Float) { memory(id: $id, asOf: $at) { asOf } }', {
      id: memoryId,
      at: Date.now(),
    });
    expect(read.headers.get('x-error-detail')).toBe(`query.as_of: ${MILLISECONDS}`);
  });

  it('MCP: valid_from: Date.now() is a tool error whose text says seconds are expected', async () => {
    const result = (await mcp.callTool({
      name: 'svc_memories_create',
      arguments: { ...claim({ valid_from: Date.now() }), idempotency_key: freshKey() },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect((result.structuredContent as { error: { code: string } }).error.code).toBe('invalid_input');
    expect(result.content?.[1]).toEqual({ type: 'text', text: `invalid_input: body.valid_from: ${MILLISECONDS}` });

    const read = (await mcp.callTool({
      name: 'svc_memories_get',
      arguments: { id: memoryId, known_at: Date.now() },
    })) as CallToolResult;
    expect(read.isError).toBe(true);
    expect(read.content?.[1]).toEqual({ type: 'text', text: `invalid_input: query.known_at: ${MILLISECONDS}` });
  });
});
