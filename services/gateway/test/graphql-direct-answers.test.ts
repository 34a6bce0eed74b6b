import { freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../src/gateway';
import { exchange, metricValue } from './graphql-client';
import { type Harness, startHarness, startPeerGateway } from './harness';

/*
 * Plain POSTed GraphQL queries are answered without Yoga's Fetch API layer (`direct-answers.ts`).
 * The answers must not change by a byte: every request here goes to two gateways over one
 * database, one answering directly where it can and one answering everything through Yoga,
 * and the status, the headers (names, values, order) and the body must be the same. Each case
 * also says which path the direct gateway takes (`tms_graphql_answers_total`), and a request
 * the direct path executed but left to Yoga to answer (errors) costs no more statements than on
 * the Yoga-only gateway: nothing runs twice.
 *
 * Postgres only: two gateway processes share one database, and PGlite's data directory opens in
 * one process only.
 */

const VIEW = `query View($id: ID!, $asOf: Float, $knownAt: Float) {
  memory(id: $id, asOf: $asOf, knownAt: $knownAt) { asOf knownAt view {
    memory { id kind generation namespaceId }
    revision { id memoryId text status validFrom validTo recordedAt recordedUntil evidenceIds }
    evidence { id } verifications { id } stale } } }`;

const CREATE = `mutation($input: CreateMemoryInput!, $key: String!) {
  createMemory(input: $input, idempotencyKey: $key) { memory { id generation } revision { text validFrom } commit { sequence } }
}`;

describe('GraphQL direct answers (postgres)', () => {
  let h: Harness;
  let viaYoga: RunningGateway;
  let yogaStatements: { count: number };
  let token: string;
  let ws: string;
  let namespaceId: string;
  let memoryId: string;
  let knownAt: number;

  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
    const peer = await startPeerGateway(h, { graphqlDirectAnswers: false });
    viaYoga = peer.gateway;
    yogaStatements = peer.statements;
    const workspace = await h.workspace();
    ws = workspace.id;
    token = await workspace.owner.token();
    namespaceId = (await workspace.api.post('/v1/namespaces', { parent_id: null, name: 'direct' })).body.namespace.id;
    const created = await workspace.api.post(
      '/v1/memories',
      { namespace_id: namespaceId, kind: 'claim', text: 'Direct answers keep every byte', valid_from: 0 },
      { headers: { 'idempotency-key': freshKey() } },
    );
    expect(created.status, created.text).toBe(200);
    memoryId = created.body.memory.id;
    knownAt = Date.now() / 1000;
  });
  afterAll(async () => {
    await viaYoga?.close();
    await h?.close();
  });

  // Through Yoga's operation pipeline or, for a document already run on compiled code, the known path.
  const answeredDirectly = async () =>
    (await metricValue(h.url, 'tms_graphql_answers_total{path="direct"}')) +
    (await metricValue(h.url, 'tms_graphql_answers_total{path="known"}'));

  interface Case {
    name: string;
    /** The path the direct gateway takes: its own answer, or Yoga's. */
    direct: boolean;
    body: () => string;
    headers?: Record<string, string | null>;
    method?: string;
    path?: string;
    /** Compare statement counts (not for a mutation, which the second gateway replays). */
    statements?: boolean;
  }

  const view = (variables: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ query: VIEW, variables, ...extra });
  const viewOf = () => view({ id: memoryId, asOf: knownAt, knownAt });

  const cases: Case[] = [
    { name: 'a view, no Accept', direct: true, body: viewOf, headers: { accept: null } },
    { name: 'a view, Accept */*', direct: true, body: viewOf, headers: { accept: '*/*' } },
    { name: 'a view, an empty Accept', direct: true, body: viewOf, headers: { accept: '' } },
    { name: 'a view, Accept application/json', direct: true, body: viewOf, headers: { accept: 'application/json' } },
    { name: 'a view, Accept graphql-response+json', direct: true, body: viewOf },
    {
      name: 'a view with its operation named',
      direct: true,
      body: () => view({ id: memoryId, asOf: knownAt, knownAt }, { operationName: 'View' }),
    },
    {
      name: 'a view, charset in the content type',
      direct: true,
      body: viewOf,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    },
    {
      name: 'a view with null extensions',
      direct: true,
      body: () => view({ id: memoryId, asOf: knownAt, knownAt }, { extensions: null }),
    },
    {
      name: 'a view, Accept with a parameter',
      direct: false,
      body: viewOf,
      headers: { accept: 'application/json; q=0.9' },
    },
    {
      name: 'a view, Accept of two types',
      direct: false,
      body: viewOf,
      headers: { accept: 'application/graphql-response+json, application/json' },
    },
    { name: 'a view, Accept text/html', direct: false, body: viewOf, headers: { accept: 'text/html' } },
    {
      name: 'a view by GET',
      direct: false,
      method: 'GET',
      path: `/graphql?query=${encodeURIComponent(VIEW)}`,
      body: () => '',
      headers: { 'content-type': null },
    },
    {
      name: 'a memory that does not exist',
      direct: false,
      body: () => view({ id: 'mem_00000000000000000000000000', asOf: knownAt, knownAt }),
    },
    { name: 'a variable of the wrong type', direct: false, body: () => view({ id: 5 }) },
    { name: 'a missing variable', direct: false, body: () => view({}) },
    { name: 'an unknown field', direct: false, body: () => JSON.stringify({ query: '{ memory(id: "x") { nope } }' }) },
    { name: 'a syntax error', direct: false, body: () => JSON.stringify({ query: '{ memory(id: ' }) },
    {
      name: 'an unknown operation name',
      direct: false,
      body: () => view({ id: memoryId }, { operationName: 'Other' }),
    },
    {
      name: 'an introspection query (the owner may introspect)',
      direct: true,
      body: () => JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
    },
    {
      name: 'a page over the cost limit',
      direct: false,
      body: () =>
        JSON.stringify({
          query: `{ memories(namespaceId: "${namespaceId}", first: 100) { edges { node { revision {
            evidence { id verifications { edges { node { id evidence { id } } } } } } } } } }`,
        }),
    },
    { name: 'an unexpected parameter', direct: false, body: () => view({ id: memoryId }, { surprise: 1 }) },
    { name: 'variables as an array', direct: false, body: () => JSON.stringify({ query: VIEW, variables: [] }) },
    { name: 'no query', direct: false, body: () => JSON.stringify({ variables: {} }) },
    { name: 'a query that is not a string', direct: false, body: () => JSON.stringify({ query: 7 }) },
    { name: 'params that are an array', direct: false, body: () => JSON.stringify([{ query: VIEW }]) },
    // Bodies that are JSON but no object of parameters (the fuzz test once met `null` here).
    { name: 'params that are null', direct: false, body: () => 'null' },
    { name: 'params that are a string', direct: false, body: () => JSON.stringify(VIEW) },
    { name: 'params that are a number', direct: false, body: () => '7' },
    { name: 'a body that is not JSON', direct: false, body: () => '{"query": ' },
    { name: 'a duplicate key', direct: false, body: () => `{"query": "{ __typename }", "query": "{ __typename }"}` },
    { name: 'an escaped lone surrogate', direct: false, body: () => `{"query": "{ __typename } # \\ud800"}` },
    {
      name: 'a document nested too deep',
      direct: false,
      body: () => JSON.stringify({ query: `${'{ a '.repeat(200)}${'}'.repeat(200)}` }),
    },
    { name: 'a text/plain body', direct: false, body: viewOf, headers: { 'content-type': 'text/plain' } },
    { name: 'no content type', direct: false, body: viewOf, headers: { 'content-type': null } },
    {
      name: 'a charset other than utf-8',
      direct: false,
      body: viewOf,
      headers: { 'content-type': 'application/json; charset=latin1' },
    },
    {
      name: 'a create with input the domain refuses',
      direct: false,
      body: () =>
        JSON.stringify({
          query: CREATE,
          variables: { key: freshKey(), input: { namespaceId, kind: 'claim', text: '', validFrom: 0 } },
        }),
    },
    {
      name: 'a subscription asked as JSON',
      direct: false,
      body: () => JSON.stringify({ query: 'subscription { changes { nextAfter } }' }),
      statements: false,
    },
  ];

  it.each(cases)('$name: the same answer on both paths', async (c) => {
    const headers: Record<string, string> = {};
    const given: Record<string, string | null> = {
      authorization: `Bearer ${token}`,
      'x-service-workspace': ws,
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...(c.headers ?? {}),
    };
    for (const [name, value] of Object.entries(given)) if (value !== null) headers[name] = value;
    const body = c.body();
    const send = (baseUrl: string, requestId: string) =>
      exchange(
        baseUrl,
        c.method ?? 'POST',
        c.path ?? '/graphql',
        { ...headers, 'x-request-id': requestId },
        body || undefined,
      );

    // Warm both (the actor and claims caches add statements to a process's first request).
    await send(h.url, 'warm');
    await send(viaYoga.url, 'warm');

    const requestId = `direct-${freshKey().slice(0, 12)}`;
    const before = await answeredDirectly();
    h.queries.reset();
    const direct = await send(h.url, requestId);
    const directStatements = h.queries.count;
    expect((await answeredDirectly()) - before, 'answered by the direct path').toBe(c.direct ? 1 : 0);

    yogaStatements.count = 0;
    const yoga = await send(viaYoga.url, requestId);
    expect(direct).toEqual(yoga);
    if (c.statements !== false) expect(directStatements, 'statements: nothing runs twice').toBe(yogaStatements.count);
  });

  it('answers a create directly, and its replay through Yoga is the same answer', async () => {
    const key = freshKey();
    const body = JSON.stringify({
      query: CREATE,
      variables: { key, input: { namespaceId, kind: 'claim', text: 'created on the direct path', validFrom: 0 } },
    });
    const headers = {
      authorization: `Bearer ${token}`,
      'x-service-workspace': ws,
      'content-type': 'application/json',
      'x-request-id': 'direct-create',
    };
    const before = await answeredDirectly();
    const first = await exchange(h.url, 'POST', '/graphql', headers, body);
    expect(first.status, first.body).toBe(200);
    expect(JSON.parse(first.body).data.createMemory.revision.text).toBe('created on the direct path');
    expect((await answeredDirectly()) - before).toBe(1);
    // The same key and input on the Yoga-only gateway: the replay, byte for byte.
    expect(await exchange(viaYoga.url, 'POST', '/graphql', headers, body)).toEqual(first);
  });
});
