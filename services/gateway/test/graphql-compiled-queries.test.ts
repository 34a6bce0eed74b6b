import { freshKey, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../src/gateway';
import { COMPILE_ON_EXECUTION, MAX_COMPILED_DOCUMENT_LENGTH } from '../src/graphql/compiled-queries';
import { exchange, metricValue } from './graphql-client';
import { type Harness, startHarness, startPeerGateway } from './harness';

/*
 * Repeated queries run on code compiled for their document (`compiled-queries.ts`), not on
 * graphql-js's executor. The answers must not change by a byte: every request here goes to two
 * gateways over one database, one compiling and one executing everything with graphql-js,
 * four times each (the first execution of a document is graphql-js's, the second compiles it,
 * the third and fourth run on the known path, answered on Yoga's `onParams` by the compiled code),
 * and each answer (status, headers in order, body) and its statement count must be the same on
 * both. The executions metric says which executor answered: the test cannot pass vacuously.
 *
 * Postgres only: two gateway processes share one database.
 */

type Executor = 'compiled' | 'standard' | 'none';

describe('GraphQL compiled queries (postgres)', () => {
  let h: Harness;
  let standard: RunningGateway;
  let standardStatements: { count: number };
  let ws: string;
  let ownerToken: string;
  let readerToken: string;
  const ids: Record<string, string> = {};
  let recordedAt = 0;
  let now = 0;

  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
    const peer = await startPeerGateway(h, { graphqlCompiledQueries: false });
    standard = peer.gateway;
    standardStatements = peer.statements;

    const { id, api, owner } = await h.workspace();
    ws = id;
    ownerToken = await owner.token();
    const root = (await api.post('/v1/namespaces', { parent_id: null, name: 'root' })).body.namespace;
    const shared = (await api.post('/v1/namespaces', { parent_id: root.id, name: 'shared' })).body.namespace;
    const secret = (await api.post('/v1/namespaces', { parent_id: null, name: 'secret' })).body.namespace;
    const reader = await h.human({ enroll: false });
    readerToken = await reader.token();
    await api.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: reader.actorId, role: 'member' },
      ],
    });
    await api.put(`/v1/namespaces/${shared.id}/grants`, {
      grants: [{ target: { kind: 'actor', actor_id: reader.actorId }, capabilities: ['read'], inherit: false }],
    });
    const evidence = (
      await api.post('/v1/evidence', {
        namespace_id: shared.id,
        source_locator: 'x://compiled',
        content_root_sha256: sha256Hex('an excerpt'),
        excerpt: 'an excerpt',
      })
    ).body.evidence;
    await api.post(`/v1/evidence/${evidence.id}/verifications`, {
      expected_content_root_sha256: evidence.excerpt_sha256,
      expected_excerpt_sha256: evidence.excerpt_sha256,
      verdict: 'verified',
    });
    const hidden = (
      await api.post('/v1/memories', { namespace_id: secret.id, kind: 'claim', text: 'hidden', valid_from: 0 })
    ).body;
    const created = (
      await api.post('/v1/memories', {
        namespace_id: shared.id,
        kind: 'claim',
        text: 'first',
        valid_from: 0,
        evidence_ids: [evidence.id],
        support_revision_ids: [hidden.revision.id],
      })
    ).body;
    recordedAt = created.commit.recorded_at;
    await api.post(`/v1/memories/${created.memory.id}/corrections`, { expected_generation: 1, text: 'second' });
    now = Date.now() / 1000;
    Object.assign(ids, {
      root: root.id,
      shared: shared.id,
      secret: secret.id,
      evidence: evidence.id,
      memory: created.memory.id,
      hidden: hidden.memory.id,
    });
  });
  afterAll(async () => {
    await standard?.close();
    await h?.close();
  });

  // Every read names its time: an answer at "now" differs from one a moment later.
  const VIEW = `query View($id: ID!, $asOf: Float!, $knownAt: Float!) {
    memory(id: $id, asOf: $asOf, knownAt: $knownAt) { asOf knownAt view {
      memory { id kind generation namespaceId }
      revision { id memoryId text status validFrom validTo recordedAt recordedUntil evidenceIds supportRevisionIds
        evidence { id excerpt verifications { edges { node { id verdict } cursor } pageInfo { hasNextPage endCursor } } }
        supportRevisions { id text }
        namespace { id name parent { id name } grants { capabilities } } }
      evidence { id } verifications { id } stale } } }`;

  interface Case {
    name: string;
    query: () => string;
    variables?: () => Record<string, unknown>;
    operationName?: string;
    /** The reader (grants on one namespace only) instead of the owner. */
    asReader?: boolean;
    /** Which executor answers once the document is compiled ('none': refused before execution). */
    executor: Executor;
    /** Compare statement counts (not for a mutation: the second gateway replays its key). */
    statements?: boolean;
  }

  const cases: Case[] = [
    {
      name: 'the memory view',
      query: () => VIEW,
      variables: () => ({ id: ids.memory, asOf: now, knownAt: now }),
      executor: 'compiled',
    },
    {
      name: 'the memory view as known before the correction',
      query: () => VIEW,
      variables: () => ({ id: ids.memory, asOf: now, knownAt: recordedAt }),
      executor: 'compiled',
    },
    {
      name: 'the view as a reader: unreadable parts left out, admin-only grants a field error',
      query: () => VIEW,
      variables: () => ({ id: ids.memory, asOf: now, knownAt: now }),
      asReader: true,
      executor: 'compiled',
    },
    {
      name: 'a memory the reader may not read',
      query: () => VIEW,
      variables: () => ({ id: ids.hidden, asOf: now, knownAt: now }),
      asReader: true,
      executor: 'compiled',
    },
    {
      name: 'a memory that does not exist, beside one that does',
      query:
        () => `query($a: ID!, $b: ID!, $at: Float!) { first: memory(id: $a, knownAt: $at) { view { revision { text } } }
        __typename
        second: memory(id: $b, asOf: $at, knownAt: $at) { knownAt view { memory { id } } } }`,
      variables: () => ({ a: 'mem_00000000000000000000000000', b: ids.memory, at: now }),
      executor: 'compiled',
    },
    {
      name: 'fragments, inline fragments, aliases, __typename, @skip and @include',
      query: () => `query($id: ID!, $at: Float!, $withText: Boolean!, $skipKind: Boolean!) {
        memory(id: $id, asOf: $at, knownAt: $at) { ...Read }
        again: memory(id: $id, asOf: $at, knownAt: $at) { view { revision { ... on MemoryRevision { t: text } } } } }
        fragment Read on MemoryRead { __typename view { __typename memory { id kind @skip(if: $skipKind) }
          revision { text @include(if: $withText) generation } } }`,
      variables: () => ({ id: ids.memory, at: now, withText: true, skipKind: true }),
      executor: 'compiled',
    },
    {
      name: 'lists and connections: memories, history, namespaces, evidence',
      query: () => `query($ns: ID!, $id: ID!, $ev: ID!, $at: Float!) {
        memories(namespaceId: $ns, first: 10, asOf: $at, knownAt: $at) { edges { cursor node { memory { id generation } revision { text } } }
          pageInfo { hasNextPage hasPreviousPage startCursor endCursor } }
        memoryHistory(id: $id, first: 1, knownAt: $at) { edges { node { generation text } } pageInfo { hasNextPage endCursor } }
        namespaces(first: 10) { edges { node { id name parent { id } } } }
        namespace(id: $ns) { id name }
        evidence(id: $ev) { id excerpt verifications { edges { node { id verdict } } } }
        me { actor { id } } }`,
      variables: () => ({ ns: ids.shared, id: ids.memory, ev: ids.evidence, at: now }),
      executor: 'compiled',
    },
    {
      name: 'the second of two operations, by name',
      query: () => `query One { me { actor { id } } }
        query Two($id: ID!, $at: Float!) { memory(id: $id, asOf: $at, knownAt: $at) { view { stale } } }`,
      variables: () => ({ id: ids.memory, at: now }),
      operationName: 'Two',
      executor: 'compiled',
    },
    {
      name: 'a page size the domain refuses',
      query: () => `query($ns: ID!) { memories(namespaceId: $ns, first: 0) { edges { cursor } } }`,
      variables: () => ({ ns: ids.shared }),
      executor: 'compiled',
    },
    {
      name: 'an introspection query',
      query: () =>
        `{ __schema { queryType { name fields { name } } } __type(name: "MemoryKind") { enumValues { name } } }`,
      executor: 'compiled',
    },
    // Variables are refused by the cost check (`limits.ts`) before any executor sees them.
    {
      name: 'a variable of the wrong type',
      query: () => VIEW,
      variables: () => ({ id: true, asOf: now, knownAt: now }),
      executor: 'none',
    },
    { name: 'a missing variable', query: () => VIEW, variables: () => ({ id: ids.memory }), executor: 'none' },
    {
      name: 'a null for a non-null variable',
      query: () => VIEW,
      variables: () => ({ id: null, asOf: now, knownAt: now }),
      executor: 'none',
    },
    {
      name: 'an enum variable out of its values',
      query: () =>
        `query($ns: ID!, $kind: MemoryKind) { memories(namespaceId: $ns, kind: $kind) { edges { cursor } } }`,
      variables: () => ({ ns: ids.shared, kind: 'rumour' }),
      executor: 'none',
    },
    {
      name: 'a mutation (graphql-js executes every mutation)',
      query: () => `mutation($input: CreateMemoryInput!, $key: String!) {
        createMemory(input: $input, idempotencyKey: $key) { memory { id generation } revision { text } } }`,
      variables: () => ({ key: freshKey(), input: { namespaceId: ids.shared, kind: 'claim', text: '', validFrom: 0 } }),
      executor: 'standard',
      statements: false,
    },
    { name: 'an unknown field', query: () => '{ memory(id: "x") { nope } }', executor: 'none' },
    {
      name: 'a document too long to compile (graphql-js executes it every time)',
      query: () => VIEW.replace('{ asOf', `{ # ${'padding '.repeat(MAX_COMPILED_DOCUMENT_LENGTH / 8)}\n asOf`),
      variables: () => ({ id: ids.memory, asOf: now, knownAt: now }),
      executor: 'standard',
    },
  ];

  const answeredByKnownPath = () => metricValue(h.url, 'tms_graphql_answers_total{path="known"}');
  const executions = async (): Promise<Record<Executor, number>> => ({
    compiled: await metricValue(h.url, 'tms_graphql_executions_total{executor="compiled"}'),
    standard: await metricValue(h.url, 'tms_graphql_executions_total{executor="standard"}'),
    none: 0,
  });

  it.each(cases)('$name: the same answer from both executors, every time', async (c) => {
    const variables = c.variables?.() ?? {};
    // A document of its own per case (the comment), so that each case's first execution is its document's first.
    const body = JSON.stringify({
      query: `${c.query()}\n# ${c.name}`,
      variables,
      ...(c.operationName ? { operationName: c.operationName } : {}),
    });
    const headers = {
      authorization: `Bearer ${c.asReader ? readerToken : ownerToken}`,
      'x-service-workspace': ws,
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
    };
    // One request of each before counting: a process's first request adds statements (actor, claims).
    await exchange(
      standard.url,
      'POST',
      '/graphql',
      { ...headers, 'x-request-id': 'warm' },
      '{"query":"{ me { actor { id } } }"}',
    );
    await exchange(
      h.url,
      'POST',
      '/graphql',
      { ...headers, 'x-request-id': 'warm' },
      '{"query":"{ me { actor { id } } }"}',
    );

    for (let execution = 1; execution <= COMPILE_ON_EXECUTION + 2; execution += 1) {
      const requestId = `compiled-${freshKey().slice(0, 12)}`;
      const before = await executions();
      const knownBefore = await answeredByKnownPath();
      h.queries.reset();
      const compiled = await exchange(h.url, 'POST', '/graphql', { ...headers, 'x-request-id': requestId }, body);
      const compiledStatements = h.queries.count;
      const after = await executions();
      // After its compiled execution in Yoga's pipeline, a query runs on the known path, field
      // errors or not.
      expect((await answeredByKnownPath()) - knownBefore, `execution ${execution}: the known path`).toBe(
        execution > COMPILE_ON_EXECUTION && c.executor === 'compiled' ? 1 : 0,
      );

      const expected: Executor =
        execution < COMPILE_ON_EXECUTION ? (c.executor === 'none' ? 'none' : 'standard') : c.executor;
      expect(
        { compiled: after.compiled - before.compiled, standard: after.standard - before.standard },
        `execution ${execution}: the executor`,
      ).toEqual({ compiled: expected === 'compiled' ? 1 : 0, standard: expected === 'standard' ? 1 : 0 });

      standardStatements.count = 0;
      const reference = await exchange(
        standard.url,
        'POST',
        '/graphql',
        { ...headers, 'x-request-id': requestId },
        body,
      );
      expect(compiled, `execution ${execution}`).toEqual(reference);
      if (c.statements !== false) {
        expect(compiledStatements, `execution ${execution}: statements`).toBe(standardStatements.count);
      }
    }
  });

  it('runs a known query again only after the checks that depend on the request', async () => {
    // One document, made known by the owner (its second execution compiles it).
    const query = `query($id: ID!, $at: Float!) { memory(id: $id, asOf: $at, knownAt: $at) { view { revision { text } } }
      __schema { queryType { name } } }`;
    const send = async (token: string, params: Record<string, unknown>) => {
      const headers = {
        authorization: `Bearer ${token}`,
        'x-service-workspace': ws,
        'content-type': 'application/json',
        'x-request-id': `known-${freshKey().slice(0, 12)}`,
      };
      const body = JSON.stringify({ query, ...params });
      // A caller's first request adds statements (actor, claims): one before counting.
      for (const url of [h.url, standard.url]) {
        await exchange(
          url,
          'POST',
          '/graphql',
          { ...headers, 'x-request-id': 'warm' },
          '{"query":"{ me { actor { id } } }"}',
        );
      }
      const knownBefore = await answeredByKnownPath();
      h.queries.reset();
      const answer = await exchange(h.url, 'POST', '/graphql', headers, body);
      const statements = h.queries.count;
      const known = (await answeredByKnownPath()) - knownBefore;
      standardStatements.count = 0;
      expect(answer, body).toEqual(await exchange(standard.url, 'POST', '/graphql', headers, body));
      expect(statements, `${body}: statements`).toBe(standardStatements.count);
      return {
        known,
        body: JSON.parse(answer.body) as { data?: unknown; errors?: { extensions?: { code?: string } }[] },
      };
    };
    const view = { variables: { id: ids.memory, at: now } };
    for (let execution = 1; execution <= COMPILE_ON_EXECUTION; execution += 1) {
      expect((await send(ownerToken, view)).known).toBe(0);
    }
    const known = await send(ownerToken, view);
    expect(known.known, 'the owner, on the known path').toBe(1);
    expect(JSON.stringify(known.body.data)).toContain('"text":"second"');

    // A caller without svc:admin may not introspect: refused, though the text is known.
    const agent = await h.human();
    const scoped = await send(await h.issuer.accessToken(agent.subject, 'svc:read svc:observe'), view);
    expect(scoped.known).toBe(0);
    expect(scoped.body.errors?.map((e) => e.extensions?.code)).toEqual(['forbidden']);
    // Variables the cost check refuses; parameters the known path leaves to Yoga.
    expect((await send(ownerToken, { variables: { id: 7, at: now } })).body.errors).toHaveLength(1);
    expect((await send(ownerToken, { ...view, extensions: {} })).known).toBe(0);
    expect((await send(ownerToken, { ...view, operationName: null })).known).toBe(0);
    // A field error on the known path: answered like any other result.
    const missing = await send(ownerToken, { variables: { id: 'mem_00000000000000000000000000', at: now } });
    expect(missing.body.errors?.map((e) => e.extensions?.code)).toEqual(['not_found']);
    expect(missing.known).toBe(1);
    // And the known path still answers the owner.
    expect((await send(ownerToken, view)).known).toBe(1);
  });

  it('keeps the answers of the cases above meaningful: data, field errors and request errors all occur', async () => {
    const answer = async (c: Case | undefined) => {
      const res = await exchange(
        h.url,
        'POST',
        '/graphql',
        {
          authorization: `Bearer ${c?.asReader ? readerToken : ownerToken}`,
          'x-service-workspace': ws,
          'content-type': 'application/json',
        },
        JSON.stringify({ query: c?.query(), variables: c?.variables?.() ?? {} }),
      );
      return JSON.parse(res.body) as { data?: Record<string, unknown> | null; errors?: { path?: unknown[] }[] };
    };
    const byName = (prefix: string) => cases.find((c) => c.name.startsWith(prefix));
    const view = await answer(byName('the memory view'));
    expect(JSON.stringify(view.data)).toContain('"text":"second"');
    expect(view.errors).toBeUndefined();
    const asReader = await answer(byName('the view as a reader'));
    expect(asReader.errors?.map((e) => e.path)).toEqual([['memory', 'view', 'revision', 'namespace', 'grants']]);
    const missing = await answer(byName('a memory that does not exist'));
    expect(missing.errors?.map((e) => e.path)).toEqual([['first']]);
    const wrongType = await answer(byName('a variable of the wrong type'));
    expect(wrongType.data).toBeUndefined();
    expect(wrongType.errors).toHaveLength(1);
    const refused = await answer(byName('a page size the domain refuses'));
    expect(refused.errors?.map((e) => e.path)).toEqual([['memories']]);
  });
});
