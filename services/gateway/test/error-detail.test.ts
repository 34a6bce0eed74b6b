import { errorObject } from '@tms/catalog';
import { type ApiClient, type CallResult, freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphqlClient, type GraphqlResult } from './graphql-client';
import { type Harness, type Human, startHarness } from './harness';
import { expectError, HEADER_SAFE_DETAIL } from './shapes';

/*
 * `X-Error-Detail` (decisions §7): every `invalid_input` names what was wrong, in a header-safe
 * detail, with the exact error body; no other code carries one, and an unreadable id answers
 * byte for byte like an absent one. The details come from transport-independent code, so one
 * driver (PGlite) suffices.
 */

const claim = (namespaceId: string, extra: Record<string, unknown> = {}) => ({
  namespace_id: namespaceId,
  kind: 'claim',
  text: 'The sky is blue.',
  valid_from: 0,
  ...extra,
});

const CREATE = `mutation($input: CreateMemoryInput!, $key: String!) {
  createMemory(input: $input, idempotencyKey: $key) { memory { id } }
}`;
const READ = 'query($id: ID!) { memory(id: $id) { view { memory { id } } } }';

/** The response as bytes on the wire, its per-request id and date blanked. */
function wire(res: { status: number; headers: Headers; text: string }, requestId: string) {
  const headers = [...res.headers.entries()]
    .filter(([name]) => name !== 'date')
    .map(([name, value]) => [name, value.replaceAll(requestId, 'REQ')]);
  return { status: res.status, headers, text: res.text.replaceAll(requestId, 'REQ') };
}

/** The debug log lines about an invalid_input, as objects. */
function detailLogs(h: Harness): { level: number; request_id: string; detail: string; msg: string }[] {
  return h.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'invalid_input');
}

describe('invalid_input details', () => {
  let h: Harness;
  let ws: string;
  let admin: ApiClient;
  let ns: string;
  let graphql: GraphqlClient;

  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite' });
    const created = await h.workspace();
    ws = created.id;
    admin = created.api;
    ns = (await admin.post('/v1/namespaces', { parent_id: null, name: 'details' })).body.namespace.id;
    graphql = new GraphqlClient(h.url, await created.owner.token(), ws);
  });
  afterAll(() => h?.close());

  it('REST: a bad enum names the field and its allowed values, with the exact body, and is logged at debug', async () => {
    const requestId = `detail-${freshKey()}`;
    const res = await admin.post('/v1/memories', claim(ns, { kind: 'fact' }), {
      headers: { 'x-request-id': requestId },
    });
    expectError(res, 'invalid_input', {
      requestId,
      detail: /^body\.kind: expected one of claim, episode, procedure$/,
    });
    expect(res.body).toEqual({ error: errorObject('invalid_input', requestId) });
    const logged = detailLogs(h).filter((line) => line.request_id === requestId);
    expect(logged).toEqual([
      expect.objectContaining({
        level: 20,
        request_id: requestId,
        detail: 'body.kind: expected one of claim, episode, procedure',
      }),
    ]);
  });

  it('REST: names unknown fields, out-of-range numbers, missing fields, params and headers', async () => {
    const cases: [Promise<CallResult>, string][] = [
      [admin.post('/v1/namespaces', { parent_id: null, name: 'x', foo: 1 }), 'body: unknown field "foo"'],
      [
        admin.post('/v1/namespaces', { parent_id: null, name: 'x', foo: 1, bar: 2 }),
        'body: unknown fields "foo", "bar"',
      ],
      [admin.get('/v1/memories', { query: { namespace_id: ns, limit: 500 } }), 'query.limit: must be at most 100'],
      [admin.get('/v1/memories', { query: { namespace_id: ns, limit: 0 } }), 'query.limit: must be at least 1'],
      [admin.get('/v1/memories', { query: { namespace_id: ns, limit: 'ten' } }), 'query.limit: expected a number'],
      [admin.get('/v1/memories', { query: { namespace_id: ns, color: 'blue' } }), 'query: unknown parameter "color"'],
      [admin.post('/v1/memories', { namespace_id: ns, kind: 'claim', valid_from: 0 }), 'body.text: is required'],
      // Every missing field is named, not the first alone.
      [
        admin.post('/v1/memories', {}),
        'body.namespace_id: is required; body.kind: is required; body.text: is required; body.valid_from: is required',
      ],
      [admin.post('/v1/memories', claim(ns, { valid_from: 'now' })), 'body.valid_from: expected number, got string'],
      [admin.post('/v1/memories', claim(ns, { text: '' })), 'body.text: length must be 1-32768 characters'],
      [admin.get('/v1/memories/a%20b'), 'params.id: has the wrong format'],
      [admin.get('/v1/memories', { query: { namespace_id: ns, cursor: 'garbage' } }), 'query.cursor: malformed'],
      [admin.in('nope').get('/v1/namespaces'), 'X-Service-Workspace: is not a workspace id'],
      [admin.in(null).get('/v1/namespaces'), 'X-Service-Workspace: is required'],
      [
        admin.post('/v1/namespaces', { parent_id: null, name: 'x' }, { idem: 'bad key!' }),
        'Idempotency-Key: must be 1-200 characters of A-Z, a-z, 0-9, ".", "_", ":", "-"',
      ],
      [
        admin.call('POST', '/v1/namespaces', { raw: '{"parent_id":null,"name":"a","name":"b"}' }),
        'body: duplicate key "name" at body',
      ],
      [admin.call('POST', '/v1/namespaces', { raw: '{"parent_id":null,' }), 'body: not JSON'],
    ];
    for (const [pending, detail] of cases) {
      const res = await pending;
      expectError(res, 'invalid_input', { detail });
    }
  });

  it('REST: a client name in a detail is cut short and escaped, never a CR, LF or non-ASCII byte', async () => {
    const long = 'f'.repeat(10_000);
    const longField = await admin.post('/v1/namespaces', { parent_id: null, name: 'x', [long]: 1 });
    expectError(longField, 'invalid_input', { detail: /^body: unknown field "f{64}\.\.\."$/ });
    const odd = await admin.post('/v1/namespaces', { parent_id: null, name: 'x', 'é\r\nX-Evil: 1': 1 });
    expectError(odd, 'invalid_input', { detail: 'body: unknown field "\\u00e9\\r\\nX-Evil: 1"' });
    expect(odd.headers.get('x-evil')).toBeNull();
  });

  it('GraphQL: the detail is the error message and the header; extensions stay the error object', async () => {
    const bad = {
      input: { namespaceId: ns, kind: 'fact', text: 'x', validFrom: 0 },
      key: freshKey(),
    };
    const res = await graphql.request(CREATE, bad, { headers: { 'x-request-id': 'gql-detail-1' } });
    expect(res.status, res.text).toBe(400);
    const detail = res.headers.get('x-error-detail');
    expect(detail).toMatch(HEADER_SAFE_DETAIL);
    expect(detail).toMatch(/\bkind\b/);
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors?.[0]?.message).toBe(detail);
    expect(res.body.errors?.[0]?.extensions).toMatchObject(errorObject('invalid_input', 'gql-detail-1'));

    // Past GraphQL's own checks the domain's detail is the message (here a literal Infinity).
    const literal = await graphql.request(
      `mutation { createMemory(input: {namespaceId: "${ns}", kind: claim, text: "x", validFrom: 1e309}, idempotencyKey: "${freshKey()}") { memory { id } } }`,
      {},
      { headers: { 'x-request-id': 'gql-detail-2' } },
    );
    expect(literal.body.errors?.[0]?.message, literal.text).toBe('body.valid_from: expected number, got Infinity');
    expect(literal.headers.get('x-error-detail')).toBe('body.valid_from: expected number, got Infinity');
    expect(literal.body.errors?.[0]?.extensions).toEqual(errorObject('invalid_input', 'gql-detail-2'));
    const logged = detailLogs(h).find((line) => line.request_id === 'gql-detail-2');
    expect(logged?.detail).toBe('body.valid_from: expected number, got Infinity');
  });

  it('a 413 states the limit it passed, on /v1, /graphql and /mcp', async () => {
    const big = JSON.stringify({ parent_id: null, name: 'x'.repeat(300_000) });
    const rest = await admin.call('POST', '/v1/namespaces', { raw: big });
    expectError(rest, 'budget_exceeded', { detail: 'request: the body is over the limit of 262144 bytes' });
    const gql = await graphql.request(`query { me { actor { id } } } # ${'x'.repeat(300_000)}`, {});
    expect(gql.status).toBe(413);
    expect(gql.headers.get('x-error-detail')).toBe('request: the body is over the limit of 262144 bytes');
    const mcp = await fetch(`${h.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await (await h.human()).token()}`, 'content-type': 'application/json' },
      body: big,
    });
    expect(mcp.status).toBe(413);
    expect(mcp.headers.get('x-error-detail')).toBe('request: the body is over the limit of 262144 bytes');
  });

  describe('no other code carries a detail', () => {
    let reader: Human;
    let readerApi: ApiClient;
    let readerGraphql: GraphqlClient;
    let hidden: string;

    beforeAll(async () => {
      // A member who may read `ns` only: a memory elsewhere is unreadable to them.
      reader = await h.human({ enroll: false });
      const owner = (await admin.get('/v1/me', { workspace: null })).body.actor.id;
      const members = await admin.put(`/v1/workspaces/${ws}/members`, {
        members: [
          { actor_id: owner, role: 'admin' },
          { actor_id: reader.actorId, role: 'member' },
        ],
      });
      expect(members.status, members.text).toBe(200);
      const grants = await admin.put(`/v1/namespaces/${ns}/grants`, {
        grants: [{ target: { kind: 'actor', actor_id: reader.actorId }, capabilities: ['read'], inherit: false }],
      });
      expect(grants.status, grants.text).toBe(200);
      const other = (await admin.post('/v1/namespaces', { parent_id: null, name: 'hidden' })).body.namespace.id;
      hidden = (await admin.post('/v1/memories', claim(other))).body.memory.id;
      readerApi = await reader.api(ws);
      readerGraphql = new GraphqlClient(h.url, await reader.token(), ws);
    });

    it('REST: an unreadable and an absent id answer the same bytes; forbidden has no detail', async () => {
      const unreadable = await readerApi.get(`/v1/memories/${hidden}`, { headers: { 'x-request-id': 'nf-1' } });
      const absent = await readerApi.get('/v1/memories/mem_absent0000000000000000', {
        headers: { 'x-request-id': 'nf-2' },
      });
      expectError(unreadable, 'not_found');
      expectError(absent, 'not_found');
      expect(wire(unreadable, 'nf-1')).toEqual(wire(absent, 'nf-2'));

      const forbidden = await readerApi.post('/v1/memories', claim(ns));
      expectError(forbidden, 'forbidden');
    });

    it('GraphQL: an unreadable and an absent id answer the same bytes; forbidden has no detail', async () => {
      const read = (id: string, requestId: string): Promise<GraphqlResult> =>
        readerGraphql.request(READ, { id }, { headers: { 'x-request-id': requestId } });
      const unreadable = await read(hidden, 'nf-3');
      const absent = await read('mem_absent0000000000000000', 'nf-4');
      expect(unreadable.body.errors?.[0]?.extensions?.code, unreadable.text).toBe('not_found');
      expect(unreadable.body.errors?.[0]?.message).toBe('The resource was not found.');
      expect(unreadable.headers.get('x-error-detail')).toBeNull();
      expect(wire(unreadable, 'nf-3')).toEqual(wire(absent, 'nf-4'));

      const forbidden = await readerGraphql.request(CREATE, {
        input: { namespaceId: ns, kind: 'claim', text: 'x', validFrom: 0 },
        key: freshKey(),
      });
      expect(forbidden.body.errors?.[0]?.extensions?.code, forbidden.text).toBe('forbidden');
      expect(forbidden.body.errors?.[0]?.message).toBe('This operation is not permitted.');
      expect(forbidden.headers.get('x-error-detail')).toBeNull();
    });
  });
});
