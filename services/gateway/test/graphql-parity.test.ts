// biome-ignore-all lint/suspicious/noExplicitAny: GraphQL answers are walked as plain JSON in tests.
import { OPERATIONS } from '@tms/catalog';
import { type ApiClient, freshKey, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphqlClient, gql, page, snakeKeys } from './graphql-client';
import { DRIVERS, type Harness, startHarness } from './harness';

/**
 * Every catalog operation through /v1 and through GraphQL on the same data, answers compared
 * field by field (GraphQL's camelCase names mapped back to snake_case). Writes are compared
 * through idempotent replay across the two transports: the same key and input sent to the
 * other transport must answer exactly what the first one did.
 */

type Json = Record<string, any>;

/** GraphQL answers a merged payload for union answers: drop the members' fields /v1 did not send. */
function withoutAbsent(graphql: Json, rest: Json): Json {
  return Object.fromEntries(Object.entries(graphql).filter(([k, v]) => k in rest || v !== null));
}

describe.each(DRIVERS)('GraphQL parity with /v1 (%s)', (driver) => {
  let h: Harness;
  const covered = new Set<string>();
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  it('answers every operation exactly as /v1 does', async () => {
    const owner = await h.human();
    const ownerApi = await owner.api();
    const g = new GraphqlClient(h.url, await owner.token());

    /** A write sent to both transports under one key; `first` decides which goes first. */
    async function write(
      operation: string,
      rest: { method: 'post' | 'put' | 'patch' | 'delete'; path: string; body: Json; api: ApiClient },
      graphql: { field: string; input: Json; selection: string; client: GraphqlClient },
      first: 'rest' | 'graphql',
    ): Promise<Json> {
      const key = freshKey(operation.replace(/\./g, '-'));
      const viaRest = () =>
        rest.method === 'delete'
          ? rest.api.delete(rest.path, { idem: key })
          : rest.api[rest.method](rest.path, rest.body, { idem: key });
      const document = gql(
        `mutation($input: ${graphql.field.charAt(0).toUpperCase()}${graphql.field.slice(1)}Input!, $key: String!) {
          out: ${graphql.field}(input: $input, idempotencyKey: $key) ${graphql.selection}
        }`,
      );
      const viaGraphql = () => graphql.client.data<{ out: Json }>(document, { input: graphql.input, key });
      let restAnswer: Json;
      let graphqlAnswer: Json;
      if (first === 'rest') {
        const r = await viaRest();
        expect(r.status, r.text).toBe(200);
        restAnswer = r.body;
        graphqlAnswer = (await viaGraphql()).out;
      } else {
        graphqlAnswer = (await viaGraphql()).out;
        const r = await viaRest();
        expect(r.status, r.text).toBe(200);
        restAnswer = r.body;
      }
      expect(withoutAbsent(snakeKeys(graphqlAnswer) as Json, restAnswer)).toEqual(restAnswer);
      covered.add(operation);
      return restAnswer;
    }

    async function read(operation: string, restAnswer: Json, graphqlAnswer: unknown): Promise<void> {
      expect(snakeKeys(graphqlAnswer)).toEqual(restAnswer);
      covered.add(operation);
    }

    // ---- workspaces.create, me.get, workspaces.list ------------------------------------
    const created = await write(
      'workspaces.create',
      { method: 'post', path: '/v1/workspaces', body: { name: 'parity' }, api: ownerApi },
      { field: 'createWorkspace', input: { name: 'parity' }, selection: '{ workspace { ...W } }', client: g },
      'rest',
    );
    await ownerApi.post('/v1/workspaces', { name: 'second' });
    const ws = created.workspace.id as string;
    const api = ownerApi.in(ws);
    const gw = g.in(ws);

    await read(
      'me.get',
      (await api.get('/v1/me')).body,
      (await gw.data(gql('{ me { actor { id issuer subject } callerKind workspaceId scopes } }'))).me,
    );

    const wsPage1 = (await api.get('/v1/workspaces', { query: { limit: 1 } })).body;
    expect(wsPage1.next_cursor).not.toBeNull();
    const wsQuery = gql(`query($first: Int, $after: String) {
      workspaces(first: $first, after: $after) {
        edges { node { ...W } } pageInfo { endCursor hasNextPage } enrollment { canCreateWorkspace policy }
      }
    }`);
    const gWs1 = (await gw.data(wsQuery, { first: 1 })).workspaces;
    expect(gWs1.pageInfo.hasNextPage).toBe(true);
    await read('workspaces.list', wsPage1, { ...page(gWs1, 'workspaces'), enrollment: gWs1.enrollment });
    const wsPage2 = (await api.get('/v1/workspaces', { query: { limit: 1, cursor: wsPage1.next_cursor } })).body;
    const gWs2 = (await gw.data(wsQuery, { first: 1, after: wsPage1.next_cursor })).workspaces;
    await read('workspaces.list', wsPage2, { ...page(gWs2, 'workspaces'), enrollment: gWs2.enrollment });

    // ---- namespaces ----------------------------------------------------------------------
    const root = await write(
      'namespaces.create',
      { method: 'post', path: '/v1/namespaces', body: { parent_id: null, name: 'people' }, api },
      {
        field: 'createNamespace',
        input: { parentId: null, name: 'people' },
        selection: '{ namespace { ...N } commit { ...C } }',
        client: gw,
      },
      'graphql',
    );
    const child = (await api.post('/v1/namespaces', { parent_id: root.namespace.id, name: 'ana' })).body.namespace;
    await api.post('/v1/namespaces', { parent_id: null, name: 'places' });
    await write(
      'namespaces.update',
      { method: 'patch', path: `/v1/namespaces/${child.id}`, body: { name: 'ana maria' }, api },
      {
        field: 'updateNamespace',
        input: { id: child.id, name: 'ana maria' },
        selection: '{ namespace { ...N } commit { ...C } }',
        client: gw,
      },
      'rest',
    );
    await read('namespaces.get', (await api.get(`/v1/namespaces/${child.id}`)).body, {
      namespace: (await gw.data(gql('query($id: ID!) { namespace(id: $id) { ...N } }'), { id: child.id })).namespace,
    });
    const nsQuery = gql(`query($first: Int, $after: String, $parentId: ID) {
      namespaces(first: $first, after: $after, parentId: $parentId) { edges { node { ...N } } pageInfo { endCursor } }
    }`);
    const nsPage1 = (await api.get('/v1/namespaces', { query: { limit: 2 } })).body;
    await read('namespaces.list', nsPage1, page((await gw.data(nsQuery, { first: 2 })).namespaces, 'namespaces'));
    await read(
      'namespaces.list',
      (await api.get('/v1/namespaces', { query: { limit: 2, cursor: nsPage1.next_cursor } })).body,
      page((await gw.data(nsQuery, { first: 2, after: nsPage1.next_cursor })).namespaces, 'namespaces'),
    );
    await read(
      'namespaces.list',
      (await api.get('/v1/namespaces', { query: { parent_id: root.namespace.id } })).body,
      page((await gw.data(nsQuery, { parentId: root.namespace.id })).namespaces, 'namespaces'),
    );

    // ---- members and grants ------------------------------------------------------------
    const bob = await h.human({ enroll: false });
    const members = [
      { actor_id: owner.actorId, role: 'admin' },
      { actor_id: bob.actorId, role: 'member' },
    ];
    await write(
      'workspaces.members.put',
      { method: 'put', path: `/v1/workspaces/${ws}/members`, body: { members }, api },
      {
        field: 'putWorkspaceMembers',
        input: { id: ws, members: members.map((m) => ({ actorId: m.actor_id, role: m.role })) },
        selection: '{ workspaceId members { actorId role } commit { ...C } }',
        client: gw,
      },
      'graphql',
    );
    const grants = [
      { target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read', 'observe'], inherit: true },
    ];
    await write(
      'namespaces.grants.put',
      { method: 'put', path: `/v1/namespaces/${root.namespace.id}/grants`, body: { grants }, api },
      {
        field: 'putNamespaceGrants',
        input: {
          id: root.namespace.id,
          grants: [
            { target: { kind: 'actor', actorId: bob.actorId }, capabilities: ['read', 'observe'], inherit: true },
          ],
        },
        selection: '{ namespaceId grants { ...G } commit { ...C } }',
        client: gw,
      },
      'rest',
    );

    const listedGrants = (await api.get(`/v1/namespaces/${root.namespace.id}/grants`)).body;
    expect(listedGrants).toEqual({ namespace_id: root.namespace.id, grants });
    await read(
      'namespaces.grants.list',
      listedGrants,
      (
        await gw.data(
          gql(
            'query($input: NamespaceGrantsInput!) { namespaceGrants(input: $input) { namespaceId grants { ...G } } }',
          ),
          { input: { id: root.namespace.id } },
        )
      ).namespaceGrants,
    );

    // ---- evidence ------------------------------------------------------------------------
    const excerpt = 'Ana said she prefers tea over coffee.\u0000 (exact bytes)';
    const sha = sha256Hex(excerpt);
    const evidence = (
      await write(
        'evidence.create',
        {
          method: 'post',
          path: '/v1/evidence',
          body: { namespace_id: child.id, source_locator: 'chat://1', content_root_sha256: sha, excerpt },
          api,
        },
        {
          field: 'createEvidence',
          input: { namespaceId: child.id, sourceLocator: 'chat://1', contentRootSha256: sha, excerpt },
          selection: '{ evidence { ...E } commit { ...C } }',
          client: gw,
        },
        'graphql',
      )
    ).evidence;
    const verified = await write(
      'evidence.verify',
      {
        method: 'post',
        path: `/v1/evidence/${evidence.id}/verifications`,
        body: { expected_content_root_sha256: sha, expected_excerpt_sha256: sha, verdict: 'verified' },
        api,
      },
      {
        field: 'verifyEvidence',
        input: { id: evidence.id, expectedContentRootSha256: sha, expectedExcerptSha256: sha, verdict: 'verified' },
        selection: '{ verification { ...V } commit { ...C } }',
        client: gw,
      },
      'rest',
    );
    await read(
      'evidence.get',
      (await api.get(`/v1/evidence/${evidence.id}`)).body,
      await (async () => {
        const { evidence: e } = await gw.data(
          gql(
            'query($id: ID!) { evidence(id: $id) { ...E verifications { edges { node { ...V } } pageInfo { endCursor } } } }',
          ),
          { id: evidence.id },
        );
        const { verifications, ...fields } = e;
        return { evidence: fields, ...page(verifications, 'verifications') };
      })(),
    );

    // ---- memories ------------------------------------------------------------------------
    const asserted = await write(
      'memories.create',
      {
        method: 'post',
        path: '/v1/memories',
        body: {
          namespace_id: child.id,
          kind: 'claim',
          text: 'Ana prefers tea.',
          valid_from: 1.5e9,
          evidence_ids: [evidence.id],
          key: 'pref:ana/thé',
        },
        api,
      },
      {
        field: 'createMemory',
        input: {
          namespaceId: child.id,
          kind: 'claim',
          text: 'Ana prefers tea.',
          validFrom: 1.5e9,
          evidenceIds: [evidence.id],
          key: 'pref:ana/thé',
        },
        selection: '{ memory { ...M } revision { ...R } commit { ...C } }',
        client: gw,
      },
      'graphql',
    );
    expect(asserted.revision.status).toBe('asserted');
    expect(asserted.memory.key).toBe('pref:ana/thé');
    const candidate = (
      await api.post('/v1/memories', {
        namespace_id: child.id,
        kind: 'episode',
        text: 'Ana visited Porto.',
        valid_from: -12.25,
        valid_to: 253402300799,
        support_revision_ids: [asserted.revision.id],
      })
    ).body;
    await write(
      'memories.attest',
      {
        method: 'post',
        path: `/v1/memories/${candidate.memory.id}/attestations`,
        body: { expected_generation: 1, evidence_ids: [evidence.id], verification_ids: [verified.verification.id] },
        api,
      },
      {
        field: 'attestMemory',
        input: {
          id: candidate.memory.id,
          expectedGeneration: 1,
          evidenceIds: [evidence.id],
          verificationIds: [verified.verification.id],
        },
        selection: '{ memory { ...M } revision { ...R } commit { ...C } }',
        client: gw,
      },
      'rest',
    );
    const corrected = await write(
      'memories.correct',
      {
        method: 'post',
        path: `/v1/memories/${asserted.memory.id}/corrections`,
        body: { expected_generation: 1, text: 'Ana prefers green tea.' },
        api,
      },
      {
        field: 'correctMemory',
        input: { id: asserted.memory.id, expectedGeneration: 1, text: 'Ana prefers green tea.' },
        selection: '{ memory { ...M } revision { ...R } invalidatedRevisionIds commit { ...C } }',
        client: gw,
      },
      'graphql',
    );
    expect(corrected.invalidated_revision_ids).toHaveLength(1);

    // memories.get: now, with evidence, and at an earlier known_at (before the correction).
    const viewQuery = (withEvidence: boolean) =>
      gql(`query($id: ID!, $asOf: Float, $knownAt: Float) {
        memory(id: $id, asOf: $asOf, knownAt: $knownAt) {
          asOf knownAt
          view { memory { ...M } revision { ...R } stale ${withEvidence ? 'evidence { ...E } verifications { ...V }' : ''} }
        }
      }`);
    const memoryId = asserted.memory.id as string;
    for (const query of [
      {},
      { include_evidence: true },
      { known_at: asserted.commit.recorded_at, as_of: 1.6e9, include_evidence: true },
    ] as Json[]) {
      const rest = (await api.get(`/v1/memories/${memoryId}`, { query })).body;
      const graphql = (
        await gw.data(viewQuery(query.include_evidence === true), {
          id: memoryId,
          ...(query.known_at !== undefined ? { knownAt: query.known_at, asOf: query.as_of } : {}),
        })
      ).memory;
      if (!query.include_evidence) {
        expect(rest.view.evidence).toEqual([]);
        graphql.view = { ...graphql.view, evidence: [], verifications: [] };
      }
      if (query.known_at === undefined) {
        // "now" is the read's own clock: compare the rest exactly, the clocks as not earlier.
        expect(graphql.knownAt).toBeGreaterThanOrEqual(rest.known_at);
        graphql.knownAt = rest.known_at;
        graphql.asOf = rest.as_of;
      }
      await read('memories.get', rest, graphql);
    }
    // The dependent memory went stale with the correction.
    const stale = (
      await gw.data(gql('query($id: ID!) { memory(id: $id) { view { stale revision { ...R } } } }'), {
        id: candidate.memory.id,
      })
    ).memory.view;
    expect(stale.stale).toBe(true);
    expect(stale.revision.invalidation.reason).toBe('support_corrected');

    const historyQuery = gql(`query($id: ID!, $first: Int, $after: String, $knownAt: Float) {
      memoryHistory(id: $id, first: $first, after: $after, knownAt: $knownAt) { edges { node { ...R } } pageInfo { endCursor } }
    }`);
    // A first page's cursor carries its known_at: a fixed one makes both transports' cursors equal.
    const h1 = (await api.get(`/v1/memories/${memoryId}/history`, { query: { limit: 1, known_at: 4e9 } })).body;
    await read(
      'memories.history',
      h1,
      page((await gw.data(historyQuery, { id: memoryId, first: 1, knownAt: 4e9 })).memoryHistory, 'revisions'),
    );
    await read(
      'memories.history',
      (await api.get(`/v1/memories/${memoryId}/history`, { query: { limit: 1, cursor: h1.next_cursor } })).body,
      page((await gw.data(historyQuery, { id: memoryId, first: 1, after: h1.next_cursor })).memoryHistory, 'revisions'),
    );
    const hThen = { known_at: asserted.commit.recorded_at };
    await read(
      'memories.history',
      (await api.get(`/v1/memories/${memoryId}/history`, { query: hThen })).body,
      page((await gw.data(historyQuery, { id: memoryId, knownAt: hThen.known_at })).memoryHistory, 'revisions'),
    );

    const listQuery =
      gql(`query($ns: ID!, $first: Int, $after: String, $kind: MemoryKind, $key: String, $asOf: Float, $knownAt: Float) {
      memories(namespaceId: $ns, first: $first, after: $after, kind: $kind, key: $key, asOf: $asOf, knownAt: $knownAt) {
        edges { node { memory { ...M } revision { ...R } stale } } pageInfo { endCursor }
      }
    }`);
    const l1 = (
      await api.get('/v1/memories', { query: { namespace_id: child.id, limit: 1, as_of: 1.6e9, known_at: 4e9 } })
    ).body;
    await read(
      'memories.list',
      l1,
      page((await gw.data(listQuery, { ns: child.id, first: 1, asOf: 1.6e9, knownAt: 4e9 })).memories, 'items'),
    );
    await read(
      'memories.list',
      (await api.get('/v1/memories', { query: { namespace_id: child.id, limit: 1, cursor: l1.next_cursor } })).body,
      page((await gw.data(listQuery, { ns: child.id, first: 1, after: l1.next_cursor })).memories, 'items'),
    );
    await read(
      'memories.list',
      (await api.get('/v1/memories', { query: { namespace_id: child.id, kind: 'episode', as_of: 0, known_at: 4e9 } }))
        .body,
      page((await gw.data(listQuery, { ns: child.id, kind: 'episode', asOf: 0, knownAt: 4e9 })).memories, 'items'),
    );
    const byKey = (await api.get('/v1/memories', { query: { namespace_id: child.id, key: 'pref:ana/thé' } })).body;
    expect(byKey.items.map((item: Json) => item.memory.id)).toEqual([asserted.memory.id]);
    await read(
      'memories.list',
      byKey,
      page((await gw.data(listQuery, { ns: child.id, key: 'pref:ana/thé' })).memories, 'items'),
    );

    // ---- recall (read-only, POST) --------------------------------------------------------
    const recallBody = { namespace_ids: [root.namespace.id], query: 'tea', budget: { max_context_chars: 10000 } };
    const recallQuery = gql(`query($input: RecallInput!) {
      recall(input: $input) {
        status indexedSequence contextChars retrieval { mode lexical semantic }
        items { memory { ...M } revision { ...R } score stale ranks { lexical semantic } }
      }
    }`);
    const recallInput = { namespaceIds: [root.namespace.id], query: 'tea', budget: { maxContextChars: 10000 } };
    let matched = false;
    for (let attempt = 0; attempt < 20 && !matched; attempt += 1) {
      // The index catches up asynchronously: compare once two /v1 answers around the GraphQL one agree.
      const before = (await api.post('/v1/recall', recallBody)).body;
      const graphql = snakeKeys((await gw.data(recallQuery, { input: recallInput })).recall);
      const after = (await api.post('/v1/recall', recallBody)).body;
      if (JSON.stringify(before) === JSON.stringify(after)) {
        expect(graphql).toEqual(after);
        matched = true;
      } else {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    expect(matched).toBe(true);
    covered.add('recall');

    // ---- forgetting ------------------------------------------------------------------------
    await write(
      'memories.forget',
      {
        method: 'post',
        path: `/v1/memories/${candidate.memory.id}/forget`,
        body: { mode: 'retract', expected_generation: 2 },
        api,
      },
      {
        field: 'forgetMemory',
        input: { id: candidate.memory.id, mode: 'retract', expectedGeneration: 2 },
        selection: '{ memory { ...M } revision { ...R } receipt { ...MR } commit { ...C } }',
        client: gw,
      },
      'rest',
    );
    await write(
      'memories.forget',
      { method: 'post', path: `/v1/memories/${memoryId}/forget`, body: { mode: 'purge', expected_generation: 2 }, api },
      {
        field: 'forgetMemory',
        input: { id: memoryId, mode: 'purge', expectedGeneration: 2 },
        selection: '{ memory { ...M } revision { ...R } receipt { ...MR } commit { ...C } }',
        client: gw,
      },
      'graphql',
    );
    await write(
      'evidence.forget',
      { method: 'post', path: `/v1/evidence/${evidence.id}/forget`, body: {}, api },
      {
        field: 'forgetEvidence',
        input: { id: evidence.id },
        selection: '{ receipt { ...ER } commit { ...C } }',
        client: gw,
      },
      'rest',
    );
    // Gone on both transports alike.
    const goneRest = await api.get(`/v1/evidence/${evidence.id}`);
    const goneGraphql = await gw.request(gql('query($id: ID!) { evidence(id: $id) { id } }'), { id: evidence.id });
    expect(goneRest.body.error.code).toBe('not_found');
    expect(goneGraphql.body.errors?.[0]?.extensions.code).toBe('not_found');

    // ---- installations and credentials ----------------------------------------------------
    const INSTALLATION = '{ id workspaceId name createdAt revokedAt }';
    const CREDENTIAL = `{ id workspaceId kind productInstallationId name actorId capabilities namespaceIds
      expiresAt createdAt revokedAt }`;
    const installed = await write(
      'installations.create',
      { method: 'post', path: '/v1/installations', body: { name: 'crm' }, api },
      {
        field: 'createInstallation',
        input: { name: 'crm' },
        selection: `{ installation ${INSTALLATION} commit { ...C } }`,
        client: gw,
      },
      'graphql',
    );
    const installationId = installed.installation.id as string;
    await read(
      'installations.list',
      (await api.get('/v1/installations')).body,
      (await gw.data(gql(`{ installations { installations ${INSTALLATION} nextCursor } }`))).installations,
    );
    // The secret is shown once: the transport that answers second replays the stored answer, secret null.
    const credentialBody = {
      kind: 'installation',
      product_installation_id: installationId,
      name: 'crm-prod',
      capabilities: ['read', 'observe'],
      namespace_ids: [root.namespace.id],
      expires_at: 4e9,
    };
    const credentialKey = freshKey('credentials-create');
    const issuedRest = await api.post('/v1/credentials', credentialBody, { idem: credentialKey });
    expect(issuedRest.status, issuedRest.text).toBe(200);
    expect(issuedRest.body.secret).toMatch(/^tms_ic_/);
    const issuedGraphql = await gw.data<{ out: Json }>(
      gql(`mutation($input: CreateCredentialInput!, $key: String!) {
        out: createCredential(input: $input, idempotencyKey: $key) { credential ${CREDENTIAL} secret commit { ...C } }
      }`),
      {
        input: {
          kind: 'installation',
          productInstallationId: installationId,
          name: 'crm-prod',
          capabilities: ['read', 'observe'],
          namespaceIds: [root.namespace.id],
          expiresAt: 4e9,
        },
        key: credentialKey,
      },
    );
    expect(snakeKeys(issuedGraphql.out)).toEqual({ ...issuedRest.body, secret: null });
    covered.add('credentials.create');
    const credentialId = issuedRest.body.credential.id as string;
    await read(
      'credentials.list',
      (await api.get('/v1/credentials', { query: { product_installation_id: installationId } })).body,
      (
        await gw.data(
          gql(
            `query($id: ID) { credentials(input: { productInstallationId: $id }) { credentials ${CREDENTIAL} nextCursor } }`,
          ),
          {
            id: installationId,
          },
        )
      ).credentials,
    );
    await write(
      'credentials.revoke',
      { method: 'post', path: `/v1/credentials/${credentialId}/revoke`, body: {}, api },
      {
        field: 'revokeCredential',
        input: { id: credentialId },
        selection: `{ credential ${CREDENTIAL} commit { ...C } }`,
        client: gw,
      },
      'rest',
    );
    await write(
      'installations.revoke',
      { method: 'post', path: `/v1/installations/${installationId}/revoke`, body: {}, api },
      {
        field: 'revokeInstallation',
        input: { id: installationId },
        selection: `{ installation ${INSTALLATION} commit { ...C } }`,
        client: gw,
      },
      'graphql',
    );

    // ---- changes.list: the same page of the feed ----------------------------------------
    await read(
      'changes.list',
      (await api.get('/v1/changes', { query: { after: 1, limit: 30 } })).body,
      (
        await gw.data(
          gql(`query {
            changes(after: 1, first: 30) {
              changes { sequence recordedAt operation actorId subjects { type id namespaceId } } nextAfter headSequence
            }
          }`),
        )
      ).changes,
    );

    // ---- webhooks: the secret shown once, as for credentials ----------------------------
    const WEBHOOK = `{ id workspaceId url namespaceId description state disabledReason stateSince deliveredSequence
      lastDeliveredAt lastError lastErrorAt failingSince nextAttemptAt createdAt }`;
    const webhookKey = freshKey('webhooks-create');
    const webhookBody = { url: 'https://hooks.example.com/parity', namespace_id: root.namespace.id, description: 'd' };
    const hookRest = await api.post('/v1/webhooks', webhookBody, { idem: webhookKey });
    expect(hookRest.status, hookRest.text).toBe(200);
    expect(hookRest.body.secret).toMatch(/^whsec_/);
    const hookGraphql = await gw.data<{ out: Json }>(
      gql(`mutation($input: CreateWebhookInput!, $key: String!) {
        out: createWebhook(input: $input, idempotencyKey: $key) { webhook ${WEBHOOK} secret commit { ...C } }
      }`),
      {
        input: { url: webhookBody.url, namespaceId: root.namespace.id, description: 'd' },
        key: webhookKey,
      },
    );
    expect(snakeKeys(hookGraphql.out)).toEqual({ ...hookRest.body, secret: null });
    covered.add('webhooks.create');
    const webhookId = hookRest.body.webhook.id as string;
    await read(
      'webhooks.list',
      (await api.get('/v1/webhooks')).body,
      (await gw.data(gql(`query { webhooks { webhooks ${WEBHOOK} nextCursor } }`))).webhooks,
    );
    await write(
      'webhooks.delete',
      { method: 'delete', path: `/v1/webhooks/${webhookId}`, body: {}, api },
      {
        field: 'deleteWebhook',
        input: { id: webhookId },
        selection: `{ webhook ${WEBHOOK} commit { ...C } }`,
        client: gw,
      },
      'graphql',
    );

    // ---- ledger.head and ledger.proof: the same signed head and proof ---------------------
    const HEAD = '{ head { workspaceId sequence recordedAt chainHash } signature }';
    await read(
      'ledger.head',
      (await api.get('/v1/ledger/head')).body,
      (await gw.data(gql(`query { ledgerHead ${HEAD} }`))).ledgerHead,
    );
    await read(
      'ledger.proof',
      (await api.get(`/v1/ledger/proofs/${evidence.id}`)).body,
      (
        await gw.data(
          gql(`query($id: ID!) {
            ledgerProof(input: { id: $id }) { subjectId sequence previousChainHash digestInput links head ${HEAD} }
          }`),
          { id: evidence.id },
        )
      ).ledgerProof,
    );

    // Every operation of the catalog went through both transports.
    expect([...covered].sort()).toEqual(OPERATIONS.map((op) => op.name).sort());
  });
});
