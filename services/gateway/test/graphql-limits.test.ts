import { errorObject } from '@tms/catalog';
import { freshKey, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAPHQL_LIMITS } from '../src/graphql/limits';
import { GraphqlClient, gql } from './graphql-client';
import { type Harness, startHarness } from './harness';

/**
 * Hardening of /graphql: every limit refuses a query before anything executes (no data, no
 * SQL past authentication), errors carry the spec's error object, status codes follow
 * GraphQL over HTTP, and transport checks (size, token) answer like /v1.
 */

describe('GraphQL limits and errors (postgres)', () => {
  let h: Harness;
  let client: GraphqlClient;
  let ws: string;
  let memoryId: string;
  let namespaceId: string;
  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
    const workspace = await h.workspace();
    ws = workspace.id;
    client = new GraphqlClient(h.url, await workspace.owner.token(), ws);
    namespaceId = (await workspace.api.post('/v1/namespaces', { parent_id: null, name: 'n' })).body.namespace.id;
    memoryId = (
      await workspace.api.post('/v1/memories', { namespace_id: namespaceId, kind: 'claim', text: 't', valid_from: 0 })
    ).body.memory.id;
  });
  afterAll(() => h?.close());

  /** Send a query that must be refused with `code` before execution. */
  async function refused(query: string, code = 'budget_exceeded', variables: Record<string, unknown> = {}) {
    await client.request('{ me { callerKind } }'); // the caller's actor exists: authentication costs one statement
    h.queries.reset();
    const result = await client.request(query, variables, { headers: { 'x-request-id': 'limit-check-1' } });
    expect(result.status, result.text).toBe(code === 'forbidden' ? 403 : 400);
    expect(result.body.data, 'refused before execution: no data').toBeUndefined();
    expect(result.body.errors).toHaveLength(1);
    expect(result.body.errors?.[0]?.extensions).toEqual(errorObject(code as never, 'limit-check-1'));
    // Only authentication touched the database.
    expect(h.queries.texts.filter((q) => !q.includes('"actors"'))).toEqual([]);
    return result;
  }

  it('refuses a query deeper than the depth limit', async () => {
    // namespace { parent { ... { id } } }: depth = 2 + the number of parents.
    const query = (parents: number) => {
      let selection = 'id';
      for (let i = 0; i < parents; i += 1) selection = `parent { ${selection} }`;
      return `query($id: ID!) { namespace(id: $id) { ${selection} } }`;
    };
    const result = await refused(query(GRAPHQL_LIMITS.maxDepth - 1), 'budget_exceeded', { id: namespaceId });
    expect(result.body.errors?.[0]?.message).toMatch(/depth/i);
    const ok = await client.request(query(GRAPHQL_LIMITS.maxDepth - 2), { id: namespaceId });
    expect(ok.body.errors, ok.text).toBeUndefined();
  });

  it('refuses a query with more aliases than allowed', async () => {
    const aliases = Array.from({ length: GRAPHQL_LIMITS.maxAliases + 1 }, (_, i) => `a${i}: me { callerKind }`).join(
      ' ',
    );
    const result = await refused(`{ ${aliases} }`);
    expect(result.body.errors?.[0]?.message).toMatch(/alias/i);
  });

  it('refuses a document with more tokens than allowed', async () => {
    const fields = Array.from({ length: GRAPHQL_LIMITS.maxTokens }, () => '__typename').join(' ');
    const result = await refused(`{ ${fields} }`);
    expect(result.body.errors?.[0]?.message).toMatch(/token/i);
  });

  it('refuses a query whose estimated cost passes the complexity limit', async () => {
    const result = await refused(
      gql(`query($ns: ID!) { memories(namespaceId: $ns, first: 100) { edges { node { revision {
        evidence { id verifications { edges { node { id evidence { id } } } } }
      } } } } }`),
      'budget_exceeded',
      { ns: namespaceId },
    );
    expect(result.body.errors?.[0]?.message).toMatch(/complexity/i);
    // Complexity follows `first`: a page of 2 of the same shape is answered.
    const ok = await client.request(
      `query($ns: ID!) { memories(namespaceId: $ns, first: 2) { edges { node { revision {
        evidence { id verifications { edges { node { id evidence { id } } } } }
      } } } } }`,
      { ns: namespaceId },
    );
    expect(ok.body.errors, ok.text).toBeUndefined();
  });

  it('checks the cost of one document per page size: a remembered pass never lets a larger page through', async () => {
    const query = `query($ns: ID!, $n: Int) { memories(namespaceId: $ns, first: $n) { edges { node { revision {
        evidence { id verifications { edges { node { id evidence { id } } } } }
      } } } } }`;
    for (let round = 0; round < 2; round += 1) {
      const small = await client.request(query, { ns: namespaceId, n: 2 });
      expect(small.body.errors, small.text).toBeUndefined();
      // Another id (a string for an ID variable) is the same cost: still answered.
      const other = await client.request(query, { ns: `${namespaceId.slice(0, -1)}x`, n: 2 });
      expect(other.status, other.text).toBe(200);
      const large = await refused(query, 'budget_exceeded', { ns: namespaceId, n: 100 });
      expect(large.body.errors?.[0]?.message).toMatch(/complexity/i);
      // Absent is the default page (50): refused too.
      await refused(query, 'budget_exceeded', { ns: namespaceId });
    }
  });

  it('refuses introspection to callers without svc:admin, and allows it to admins', async () => {
    const introspection = '{ __schema { queryType { name } } }';
    const admin = await client.request(introspection);
    expect(admin.body.data?.__schema.queryType.name).toBe('Query');
    const agent = await h.human();
    const oauth = new GraphqlClient(h.url, await h.issuer.accessToken(agent.subject, 'svc:read svc:observe'), ws);
    await oauth.request('{ me { callerKind } }');
    h.queries.reset();
    const denied = await oauth.request(
      '{ __type(name: "Memory") { name } }',
      {},
      { headers: { 'x-request-id': 'intro-1' } },
    );
    expect(denied.status).toBe(403);
    expect(denied.body.data).toBeUndefined();
    expect(denied.body.errors?.[0]?.extensions).toEqual(errorObject('forbidden', 'intro-1'));
    // __typename is not introspection.
    expect((await oauth.request('{ __typename }')).body.data).toEqual({ __typename: 'Query' });
  });

  it('refuses a body over 262144 bytes with 413 and the /v1 error body, before authentication', async () => {
    const res = await fetch(`${h.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'big-1' },
      body: JSON.stringify({ query: '{ me { callerKind } }', variables: { pad: 'x'.repeat(262144) } }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: errorObject('budget_exceeded', 'big-1') });
  });

  it('refuses an answer over 1048576 bytes like /v1, also when it is made of many small fields', async () => {
    const workspace = await h.workspace();
    const big = new GraphqlClient(h.url, await workspace.owner.token(), workspace.id);
    const ns = (await workspace.api.post('/v1/namespaces', { parent_id: null, name: 'big' })).body.namespace;
    const ids: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      const excerpt = `${i}:${'x'.repeat(40_000)}`;
      const res = await workspace.api.post('/v1/evidence', {
        namespace_id: ns.id,
        source_locator: 'big://',
        content_root_sha256: sha256Hex(excerpt),
        excerpt,
      });
      ids.push(res.body.evidence.id);
    }
    const memory = (
      await workspace.api.post('/v1/memories', {
        namespace_id: ns.id,
        kind: 'claim',
        text: 'big',
        valid_from: 0,
        evidence_ids: ids,
      })
    ).body.memory;
    // /v1 refuses the view with its evidence; GraphQL refuses the answer that gathers them.
    expect((await workspace.api.get(`/v1/memories/${memory.id}`, { query: { include_evidence: true } })).status).toBe(
      413,
    );
    const res = await big.request(
      'query($id: ID!) { memory(id: $id) { view { revision { evidence { excerpt } } } } }',
      { id: memory.id },
      { headers: { 'x-request-id': 'big-answer' } },
    );
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: errorObject('budget_exceeded', 'big-answer') });
    // Half of it is answered.
    const half = await big.request(
      `query { ${ids
        .slice(0, 15)
        .map((id, i) => `e${i}: evidence(id: "${id}") { excerpt }`)
        .join(' ')} }`,
    );
    expect(half.status).toBe(200);
  });

  it('answers 401 with the /v1 error body and WWW-Authenticate: Bearer without a valid token', async () => {
    const challenges = {
      none: 'Bearer',
      malformed: 'Bearer error="invalid_token", error_description="the token is malformed"',
    };
    for (const authorization of [undefined, 'Bearer not-a-jwt']) {
      const res = await fetch(`${h.url}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-request-id': 'auth-1',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ query: '{ me { callerKind } }' }),
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(authorization ? challenges.malformed : challenges.none);
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      expect(await res.json()).toEqual({ error: errorObject('unauthenticated', 'auth-1') });
    }
  });

  it('answers a GET query with the bearer header alone (no CSRF header), and nothing without it', async () => {
    const url = `${h.url}/graphql?query=${encodeURIComponent('{ me { callerKind } }')}`;
    const token = client.token as string;
    const bare = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/graphql-response+json' },
    });
    expect(bare.status).toBe(200);
    expect((await bare.json()).data.me.callerKind).toBe('session');
    // What a cross-site request can send (no Authorization header) runs nothing.
    const crossSite = await fetch(url, { headers: { accept: 'application/graphql-response+json' } });
    expect(crossSite.status).toBe(401);
    expect((await crossSite.json()).error.code).toBe('unauthenticated');
    // A mutation is never run over GET.
    const mutation = await fetch(
      `${h.url}/graphql?query=${encodeURIComponent('mutation { createWorkspace(input: {name: "x"}, idempotencyKey: "k") { workspace { id } } }')}`,
      {
        headers: { authorization: `Bearer ${token}`, accept: 'application/graphql-response+json' },
      },
    );
    expect(mutation.status).toBe(405);
  });

  it('gives field errors the spec error object, leaves the other fields, and answers 200', async () => {
    const result = await client.request(
      'query($id: ID!) { memory(id: $id) { view { revision { text } } } namespace(id: "ns_absent") { id } }',
      { id: memoryId },
      { headers: { 'x-request-id': 'field-1' } },
    );
    expect(result.status).toBe(200);
    expect(result.body.data?.memory.view.revision.text).toBe('t');
    expect(result.body.data?.namespace).toBeNull();
    expect(result.body.errors).toEqual([
      {
        message: 'The resource was not found.',
        locations: [{ line: 1, column: 66 }],
        path: ['namespace'],
        extensions: errorObject('not_found', 'field-1'),
      },
    ]);
    expect(result.headers.get('x-request-id')).toBe('field-1');
    expect(result.headers.get('cache-control')).toBe('private, no-store');
  });

  it('answers request errors as invalid_input: 400 for graphql-response+json, 200 for application/json', async () => {
    const strict = await client.request('{ nope }');
    expect(strict.status).toBe(400);
    expect(strict.body.errors?.[0]?.extensions.code).toBe('invalid_input');
    const legacy = await client.request('{ nope }', {}, { accept: 'application/json' });
    expect(legacy.status).toBe(200);
    expect(legacy.body.errors?.[0]?.extensions.code).toBe('invalid_input');
    const syntax = await client.request('{ me { ');
    expect(syntax.status).toBe(400);
    expect(syntax.body.errors?.[0]?.extensions.code).toBe('invalid_input');
    // Catalog validation happens in the domain, exactly as /v1: a bad id is invalid_input.
    const bad = await client.request('{ namespace(id: "not an id!") { id } }');
    expect(bad.status).toBe(200);
    expect(bad.body.errors?.[0]?.extensions.code).toBe('invalid_input');
  });

  it('honours idempotency keys exactly as /v1: replay, conflict, and replay across transports', async () => {
    const mutation = gql(`mutation($input: CreateNamespaceInput!, $key: String!) {
      createNamespace(input: $input, idempotencyKey: $key) { namespace { ...N } commit { ...C } }
    }`);
    const key = freshKey();
    const first = await client.request(mutation, { input: { parentId: null, name: 'once' }, key });
    const again = await client.request(mutation, { input: { parentId: null, name: 'once' }, key });
    expect(again.body).toEqual(first.body);
    const changed = await client.request(mutation, { input: { parentId: null, name: 'twice' }, key });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toEqual({ createNamespace: null });
    expect(changed.body.errors?.[0]?.extensions.code).toBe('idempotency_conflict');
    // The same key on /v1 replays the GraphQL write.
    const owner = (await h.workspace()).owner; // another principal: its keys are its own
    const otherKey = freshKey();
    const rest = await (await owner.api()).post('/v1/workspaces', { name: 'shared-key' }, { idem: otherKey });
    const graphql = await new GraphqlClient(h.url, await owner.token()).request(
      'mutation($key: String!) { createWorkspace(input: { name: "shared-key" }, idempotencyKey: $key) { workspace { id } } }',
      { key: otherKey },
    );
    expect(graphql.body.data?.createWorkspace.workspace.id).toBe(rest.body.workspace.id);
    // A malformed key is invalid_input, as on /v1.
    const malformed = await client.request(mutation, { input: { parentId: null, name: 'x' }, key: 'bad key!' });
    expect(malformed.body.errors?.[0]?.extensions.code).toBe('invalid_input');
  });

  it('applies scopes and capabilities from the domain: a read-only token cannot write', async () => {
    const agent = await h.human();
    const readOnly = new GraphqlClient(h.url, await h.issuer.accessToken(agent.subject, 'svc:read'), ws);
    const result = await readOnly.request(
      'mutation($ns: ID!) { createMemory(input: { namespaceId: $ns, kind: claim, text: "x", validFrom: 0 }, idempotencyKey: "k1") { memory { id } } }',
      { ns: namespaceId },
    );
    expect(result.body.errors?.[0]?.extensions.code).toBe('forbidden');
  });
});

describe('GraphQL in production with GRAPHIQL=0 (pglite)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite', env: { GRAPHIQL: '0', NODE_ENV: 'production' } });
  });
  afterAll(() => h?.close());

  it('serves no GraphiQL, refuses introspection even to admins, and suggests no field names', async () => {
    const owner = await h.human();
    const client = new GraphqlClient(h.url, await owner.token());
    const page = await fetch(`${h.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(401);
    expect(page.headers.get('content-type')).toContain('application/json');
    const intro = await client.request('{ __schema { types { name } } }');
    expect(intro.status).toBe(403);
    expect(intro.body.errors?.[0]?.extensions.code).toBe('forbidden');
    const typo = await client.request('{ mee { callerKind } }');
    expect(typo.body.errors?.[0]?.extensions.code).toBe('invalid_input');
    expect(typo.text).not.toMatch(/Did you mean/);
    expect((await client.request('{ me { callerKind } }')).body.data).toEqual({ me: { callerKind: 'session' } });
  });
});

describe('GraphiQL (pglite)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite' });
  });
  afterAll(() => h?.close());

  it('is served to browsers by default, its assets from the same origin, and suggestions stay on outside production', async () => {
    const page = await fetch(`${h.url}/graphql?workspace=ws_example`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('YogaGraphiQL');
    expect(html).not.toMatch(/<script[^>]+src="https?:/);
    expect(html).toMatch(/<script src="\/graphql\/assets\/graphiql\.[0-9a-f]{20}\.js"><\/script>/);
    expect(html).toContain('X-Service-Workspace');
    const owner = await h.human();
    const typo = await new GraphqlClient(h.url, await owner.token()).request('{ mee { callerKind } }');
    expect(typo.text).toMatch(/Did you mean/);
  });
});
