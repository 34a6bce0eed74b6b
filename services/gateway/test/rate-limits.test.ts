import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorObject } from '@tms/catalog';
import type { ApiClient } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnv } from '../src/env';
import { GraphqlClient } from './graphql-client';
import { type Harness, startHarness } from './harness';
import { expectError, expectShape } from './shapes';

/*
 * RATE_LIMITS: a token bucket per principal and per operation, spent once per operation a
 * request executes, whatever the transport.
 */

const LIMIT = 3;
const RATE_LIMITS = `*=1000/60,memories.get=${LIMIT}/60`;

let h: Harness;
const clients: Client[] = [];

beforeAll(async () => {
  h = await startHarness({ driver: 'pglite', env: { RATE_LIMITS } });
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await h?.close();
});

/** A fresh principal (the owner of a fresh workspace) and one memory of theirs. */
async function principalWithMemory(): Promise<{ api: ApiClient; workspace: string; token: string; memory: string }> {
  const created = await h.workspace();
  const ns = (await created.api.post('/v1/namespaces', { parent_id: null, name: 'limits' })).body.namespace;
  const res = await created.api.post('/v1/memories', {
    namespace_id: ns.id,
    kind: 'claim',
    text: 'Rate limits are per principal.',
    valid_from: 0,
  });
  expect(res.status, res.text).toBe(200);
  return { api: created.api, workspace: created.id, token: await created.owner.token(), memory: res.body.memory.id };
}

/** The seconds a rate_limited error asks to wait: a whole number within the window. */
function expectRetryAfter(seconds: unknown): number {
  expect(typeof seconds).toBe('number');
  expect(Number.isInteger(seconds)).toBe(true);
  expect(seconds as number).toBeGreaterThanOrEqual(1);
  expect(seconds as number).toBeLessThanOrEqual(60 / LIMIT);
  return seconds as number;
}

describe('REST', () => {
  it('answers 429 rate_limited with Retry-After once a principal spends the limit of one operation', async () => {
    const alice = await principalWithMemory();
    const bob = await principalWithMemory();
    for (let i = 0; i < LIMIT; i += 1) expectShape(await alice.api.get(`/v1/memories/${alice.memory}`), 'memories.get');

    const limited = await alice.api.get(`/v1/memories/${alice.memory}`);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      error: {
        code: 'rate_limited',
        message: 'Too many requests. Retry later.',
        status: 429,
        retryable: true,
        request_id: limited.headers.get('x-request-id'),
        retry_after_seconds: expect.any(Number),
      },
    });
    const seconds = expectRetryAfter(limited.body.error.retry_after_seconds);
    expect(limited.headers.get('retry-after')).toBe(String(seconds));
    expectError(limited, 'rate_limited', { retryAfterSeconds: seconds });

    // Still limited, whatever the call asks for; refused calls do not extend the wait.
    const again = await alice.api.get(`/v1/memories/${alice.memory}`, { query: { include_evidence: 'true' } });
    expect(again.status).toBe(429);
    expect(again.body.error.code).toBe('rate_limited');
    expect(again.body.error.retry_after_seconds).toBeLessThanOrEqual(seconds);
    // Another operation of the same principal and the same operation of another principal are served.
    expectShape(
      await alice.api.get('/v1/memories', { query: { namespace_id: (await firstNamespace(alice.api)).id } }),
      'memories.list',
    );
    expectShape(await alice.api.get('/v1/me'), 'me.get');
    for (let i = 0; i < LIMIT; i += 1) expectShape(await bob.api.get(`/v1/memories/${bob.memory}`), 'memories.get');
    expect((await bob.api.get(`/v1/memories/${bob.memory}`)).status).toBe(429);
  });

  it('counts a call the domain refuses as invalid: the limit is checked before validation', async () => {
    const grace = await principalWithMemory();
    for (let i = 0; i < LIMIT; i += 1) {
      // An unknown parameter passes the query parser and is refused by the operation's strict schema.
      const bad = await grace.api.get(`/v1/memories/${grace.memory}`, { query: { nope: '1' } });
      expect(bad.status, bad.text).toBe(400);
      expect(bad.body.error.code).toBe('invalid_input');
    }
    expect((await grace.api.get(`/v1/memories/${grace.memory}`)).status).toBe(429);
  });
});

async function firstNamespace(api: ApiClient): Promise<{ id: string }> {
  const res = await api.get('/v1/namespaces');
  expect(res.status, res.text).toBe(200);
  return res.body.namespaces[0];
}

describe('GraphQL', () => {
  const ONE = 'query($id: ID!) { memory(id: $id) { view { memory { id } } } }';
  const TWO =
    'query($id: ID!) { a: memory(id: $id) { view { memory { id } } } b: memory(id: $id) { view { memory { id } } } }';

  it('spends one token per operation a request executes, not per request', async () => {
    const carol = await principalWithMemory();
    const gql = new GraphqlClient(h.url, carol.token, carol.workspace);

    // One request, two aliased memory fields: two tokens.
    const both = await gql.data(TWO, { id: carol.memory });
    expect(both.a.view.memory.id).toBe(carol.memory);
    expect(both.b.view.memory.id).toBe(carol.memory);
    // The third token.
    expect((await gql.data(ONE, { id: carol.memory })).memory.view.memory.id).toBe(carol.memory);

    const limited = await gql.request(ONE, { id: carol.memory });
    expect(limited.status).toBe(200);
    expect(limited.body.data).toEqual({ memory: null });
    expect(limited.body.errors).toHaveLength(1);
    const error = limited.body.errors?.[0];
    expect(error?.path).toEqual(['memory']);
    expect(error?.message).toBe('Too many requests. Retry later.');
    const seconds = expectRetryAfter(error?.extensions.retry_after_seconds);
    expect(error?.extensions).toEqual(errorObject('rate_limited', error?.extensions.request_id as string, seconds));

    // The REST route spends the same bucket; another operation is still served.
    expect((await carol.api.get(`/v1/memories/${carol.memory}`)).status).toBe(429);
    expect((await gql.data('{ me { actor { id } } }')).me.actor.id).toEqual(expect.any(String));
  });

  it('refuses only the fields past the limit of a request', async () => {
    const dave = await principalWithMemory();
    const gql = new GraphqlClient(h.url, dave.token, dave.workspace);
    await gql.data(TWO, { id: dave.memory });
    const partial = await gql.request(TWO, { id: dave.memory });
    expect(partial.status).toBe(200);
    const data = partial.body.data as Record<string, unknown>;
    // Exactly one of the two fields got the last token.
    expect(Object.values(data).filter((value) => value === null)).toHaveLength(1);
    expect(partial.body.errors?.map((e) => e.extensions.code)).toEqual(['rate_limited']);
  });
});

describe('MCP', () => {
  async function connect(token: string, workspace: string): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', h.url), {
      requestInit: { headers: { authorization: `Bearer ${token}`, 'x-service-workspace': workspace } },
    });
    const client = new Client({ name: 'rate-limit-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  it('spends one token per tool call', async () => {
    const erin = await principalWithMemory();
    const client = await connect(erin.token, erin.workspace);
    for (let i = 0; i < LIMIT; i += 1) {
      const result = (await client.callTool({
        name: 'svc_memories_get',
        arguments: { id: erin.memory },
      })) as CallToolResult;
      expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    }
    const limited = (await client.callTool({
      name: 'svc_memories_get',
      arguments: { id: erin.memory },
    })) as CallToolResult;
    expect(limited.isError).toBe(true);
    const error = (limited.structuredContent as { error: ReturnType<typeof errorObject> }).error;
    const seconds = expectRetryAfter(error.retry_after_seconds);
    expect(error).toEqual(errorObject('rate_limited', error.request_id, seconds));
    expect(limited.content).toEqual([{ type: 'text', text: JSON.stringify(limited.structuredContent) }]);

    // Another tool is served; so is the same tool for another principal.
    const me = (await client.callTool({ name: 'svc_me_get', arguments: {} })) as CallToolResult;
    expect(me.isError).toBeFalsy();
    const frank = await principalWithMemory();
    const other = await connect(frank.token, frank.workspace);
    const read = (await other.callTool({
      name: 'svc_memories_get',
      arguments: { id: frank.memory },
    })) as CallToolResult;
    expect(read.isError).toBeFalsy();
  });
});

describe('configuration', () => {
  const boot = (env: Record<string, string>) => () => parseEnv({ DATA_DIR: '/tmp/unused', ...env });

  it('defaults to 1200 per minute per operation and accepts off', () => {
    expect(parseEnv({}).RATE_LIMITS).toEqual({ default: { count: 1200, windowSeconds: 60 }, operations: new Map() });
    expect(parseEnv({ RATE_LIMITS: 'off' }).RATE_LIMITS).toBeNull();
    expect(parseEnv({ RATE_LIMITS }).RATE_LIMITS?.operations.get('memories.get')).toEqual({
      count: LIMIT,
      windowSeconds: 60,
    });
  });

  it('lists a bad value among the boot errors', () => {
    expect(boot({ RATE_LIMITS: 'foo' })).toThrow(/RATE_LIMITS: "foo" is not name=count\/seconds/);
    expect(boot({ RATE_LIMITS: '*=10/60,memories.fetch=1/60' })).toThrow(
      /RATE_LIMITS: "memories.fetch" is not an operation name/,
    );
    expect(boot({ RATE_LIMITS: 'recall=0/60' })).toThrow(/RATE_LIMITS: "recall=0\/60": the count must be/);
    // Listed with the other problems, not instead of them.
    let message = '';
    try {
      parseEnv({ RATE_LIMITS: 'foo,recall=1/60,bar=2/60', PORT: 'x' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^invalid configuration:/);
    expect(message).toMatch(/PORT:/);
    expect(message).toMatch(/RATE_LIMITS: "foo" is not/);
    expect(message).toMatch(/RATE_LIMITS: "bar" is not an operation name/);
  });

  it('counts in process unless RATE_LIMIT_REDIS_URL names a Redis, and refuses another URL at boot', () => {
    expect(parseEnv({}).RATE_LIMIT_REDIS_URL).toBeUndefined();
    expect(parseEnv({}).RATE_LIMIT_REDIS_PREFIX).toBe('tms:rate:');
    expect(parseEnv({}).RATE_LIMIT_REDIS_TIMEOUT_MS).toBe(100);
    expect(parseEnv({ RATE_LIMIT_REDIS_TIMEOUT_MS: '250' }).RATE_LIMIT_REDIS_TIMEOUT_MS).toBe(250);
    expect(boot({ RATE_LIMIT_REDIS_TIMEOUT_MS: '5' })).toThrow(/RATE_LIMIT_REDIS_TIMEOUT_MS:/);
    const shared = parseEnv({
      RATE_LIMIT_REDIS_URL: 'rediss://u:p@cache.example.com:6380/2',
      RATE_LIMIT_REDIS_PREFIX: 'a:',
    });
    expect(shared.RATE_LIMIT_REDIS_URL).toBe('rediss://u:p@cache.example.com:6380/2');
    expect(shared.RATE_LIMIT_REDIS_PREFIX).toBe('a:');
    for (const url of ['http://cache:6379', 'cache:6379', 'redis://']) {
      expect(boot({ RATE_LIMIT_REDIS_URL: url })).toThrow(
        /RATE_LIMIT_REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/,
      );
    }
    // The problem is named without repeating the value, which may hold a password.
    expect(boot({ RATE_LIMIT_REDIS_URL: 'redis//:secret-pw@cache' })).toThrow(
      /^invalid configuration:\n {2}RATE_LIMIT_REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL \(redis:\/\/\[user:password@\]host:port\[\/db\]\)$/,
    );
    expect(boot({ RATE_LIMIT_REDIS_PREFIX: 'has space' })).toThrow(/RATE_LIMIT_REDIS_PREFIX: must be 1 to 100/);
  });
});
