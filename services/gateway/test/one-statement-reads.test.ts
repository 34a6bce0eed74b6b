import { TokenVerifier } from '@tms/auth';
import { Domain } from '@tms/domain';
import { type ApiClient, type CallResult, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';

/**
 * Issue 12: `memories.get`, `evidence.get` and `namespaces.get` send exactly one SQL statement
 * per request once the process knows the caller's actor: the standing (membership or grants),
 * the workspace head and the resource come back together. Nothing on that path writes. A
 * credential caller's secret is checked against its row on every request (never cached), so it
 * costs one statement more.
 */

const WRITES = /^\s*(insert|update|delete)\b/i;

async function ok(res: Promise<CallResult>): Promise<CallResult> {
  const done = await res;
  expect(done.status, done.text).toBe(200);
  return done;
}

describe.each(DRIVERS)('one statement per get (%s)', (driver) => {
  let h: Harness;
  let ws: string;
  let owner: ApiClient;
  let reader: ApiClient;
  let stranger: ApiClient;
  let outsider: ApiClient;
  let credential: ApiClient;
  let namespaceId: string;
  let evidenceId: string;
  let memoryId: string;

  beforeAll(async () => {
    h = await startHarness({ driver });
    const created = await h.workspace();
    ws = created.id;
    owner = created.api;
    const ns = (await ok(owner.post('/v1/namespaces', { parent_id: null, name: 'facts' }))).body.namespace;
    const child = (await ok(owner.post('/v1/namespaces', { parent_id: ns.id, name: 'inner' }))).body.namespace;
    namespaceId = child.id;
    const excerpt = 'the sky is blue';
    const evidence = (
      await ok(
        owner.post('/v1/evidence', {
          namespace_id: child.id,
          source_locator: 'doc://sky',
          content_root_sha256: sha256Hex(excerpt),
          excerpt,
        }),
      )
    ).body.evidence;
    evidenceId = evidence.id;
    await ok(
      owner.post(`/v1/evidence/${evidence.id}/verifications`, {
        expected_content_root_sha256: evidence.content_root_sha256,
        expected_excerpt_sha256: evidence.excerpt_sha256,
        verdict: 'verified',
      }),
    );
    const memory = (
      await ok(
        owner.post('/v1/memories', {
          namespace_id: child.id,
          kind: 'claim',
          text: 'blue sky',
          valid_from: 0,
          evidence_ids: [evidence.id],
        }),
      )
    ).body.memory;
    memoryId = memory.id;

    // A member reading through a grant inherited from the parent, a member without grants, a
    // human who is no member, and an installation credential holding an inherited read grant.
    const bob = await h.human({ enroll: false });
    const carol = await h.human({ enroll: false });
    const dave = await h.human({ enroll: false });
    const ownerActor = created.owner.actorId;
    await ok(
      owner.put(`/v1/workspaces/${ws}/members`, {
        members: [
          { actor_id: ownerActor, role: 'admin' },
          { actor_id: bob.actorId, role: 'member' },
          { actor_id: carol.actorId, role: 'member' },
        ],
      }),
    );
    const installation = (await ok(owner.post('/v1/installations', { name: 'crm' }))).body.installation;
    await ok(
      owner.put(`/v1/namespaces/${ns.id}/grants`, {
        grants: [
          { target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read'], inherit: true },
          {
            target: { kind: 'installation', product_installation_id: installation.id },
            capabilities: ['read'],
            inherit: true,
          },
        ],
      }),
    );
    const secret = (
      await ok(
        owner.post('/v1/credentials', {
          kind: 'installation',
          product_installation_id: installation.id,
          name: 'reader',
          capabilities: ['read'],
          namespace_ids: [child.id],
        }),
      )
    ).body.secret as string;
    reader = await bob.api(ws);
    stranger = await carol.api(ws);
    outsider = await dave.api(ws);
    credential = owner.as(secret, null);
  });
  afterAll(() => h?.close());

  /** The statements one request sent (after a warm-up request of the same caller). */
  async function statementsOf(request: () => Promise<CallResult>, status = 200) {
    await request();
    h.queries.reset();
    const res = await request();
    expect(res.status, res.text).toBe(status);
    return { count: h.queries.count, texts: [...h.queries.texts], res };
  }

  const gets = () => [
    { name: 'memories.get', path: `/v1/memories/${memoryId}` },
    { name: 'evidence.get', path: `/v1/evidence/${evidenceId}` },
    { name: 'namespaces.get', path: `/v1/namespaces/${namespaceId}` },
  ];

  it('a workspace admin and a member reading through an inherited grant: one statement, no write', async () => {
    for (const client of [owner, reader]) {
      for (const { name, path } of gets()) {
        const { count, texts } = await statementsOf(() => client.get(path));
        expect({ name, count }).toEqual({ name, count: 1 });
        expect(texts.filter((t) => WRITES.test(t))).toEqual([]);
      }
    }
  });

  it('memories.get at an explicit as_of and known_at is one statement too', async () => {
    const { count, res } = await statementsOf(() =>
      reader.get(`/v1/memories/${memoryId}`, { query: { as_of: 1, known_at: 9e9 } }),
    );
    expect(res.body.view.revision.text).toBe('blue sky');
    expect(count).toBe(1);
  });

  it('a member without a grant, a non-member and an absent id: one statement for the same not_found', async () => {
    const absent = {
      'memories.get': '/v1/memories/mem_00000000000000000000000000',
      'evidence.get': '/v1/evidence/ev_00000000000000000000000000',
      'namespaces.get': '/v1/namespaces/ns_00000000000000000000000000',
    } as Record<string, string>;
    for (const { name, path } of gets()) {
      const answers: unknown[] = [];
      for (const request of [
        () => stranger.get(path),
        () => outsider.get(path),
        () => owner.get(absent[name] as string),
      ]) {
        const { count, res } = await statementsOf(request, 404);
        expect({ name, count }).toEqual({ name, count: 1 });
        const { request_id: _requestId, ...error } = res.body.error;
        answers.push(error);
      }
      expect(answers[1]).toEqual(answers[0]);
      expect(answers[2]).toEqual(answers[0]);
    }
  });

  it('an installation credential: its row (checked on every request) and one statement', async () => {
    for (const { name, path } of gets()) {
      const { count, texts } = await statementsOf(() => credential.get(path));
      expect({ name, count }).toEqual({ name, count: 2 });
      expect(texts.filter((t) => WRITES.test(t))).toEqual([]);
    }
  });

  it('lists and history: at most two statements, the same for 1 item as for 20', async () => {
    const { api } = await h.workspace();
    const ns = (await ok(api.post('/v1/namespaces', { parent_id: null, name: 'few' }))).body.namespace;
    const big = (await ok(api.post('/v1/namespaces', { parent_id: null, name: 'many' }))).body.namespace;
    const create = async (namespace: string, text: string) =>
      (await ok(api.post('/v1/memories', { namespace_id: namespace, kind: 'claim', text, valid_from: 0 }))).body.memory
        .id as string;
    const lone = await create(ns.id, 'lone');
    const corrected = await create(big.id, 'first');
    for (let i = 0; i < 19; i += 1) await create(big.id, `m${i}`);
    for (let generation = 1; generation <= 19; generation += 1) {
      await ok(
        api.post(`/v1/memories/${corrected}/corrections`, { expected_generation: generation, text: `g${generation}` }),
      );
    }
    await ok(api.post('/v1/installations', { name: 'one' }));
    const cases = [
      {
        name: 'memories.list',
        few: () => api.get('/v1/memories', { query: { namespace_id: ns.id } }),
        many: () => api.get('/v1/memories', { query: { namespace_id: big.id } }),
        items: (r: CallResult) => r.body.items.length,
      },
      {
        name: 'memories.history',
        few: () => api.get(`/v1/memories/${lone}/history`),
        many: () => api.get(`/v1/memories/${corrected}/history`, { query: { limit: 50 } }),
        items: (r: CallResult) => r.body.revisions.length,
      },
      {
        name: 'namespaces.list',
        few: () => api.get('/v1/namespaces', { query: { parent_id: ns.id } }),
        many: () => api.get('/v1/namespaces'),
        items: (r: CallResult) => r.body.namespaces.length,
      },
      {
        name: 'installations.list',
        few: () => api.get('/v1/installations'),
        many: () => api.get('/v1/installations'),
        items: (r: CallResult) => r.body.installations.length,
      },
    ];
    for (const { name, few, many, items } of cases) {
      const small = await statementsOf(few);
      const large = await statementsOf(many);
      if (name === 'memories.list' || name === 'memories.history') {
        expect({ name, few: items(small.res), many: items(large.res) }).toEqual({ name, few: 1, many: 20 });
      }
      expect({ name, count: large.count }).toEqual({ name, count: small.count });
      expect(large.count, name).toBeLessThanOrEqual(2);
      expect(
        large.texts.filter((t) => WRITES.test(t)),
        name,
      ).toEqual([]);
    }
  });

  it('a known actor new to a process is looked up, not inserted; then kept', async () => {
    const env = h.issuer.env();
    const verifier = new TokenVerifier({
      sessions: [
        {
          issuer: env.SESSION_ISSUER as string,
          jwksUri: env.SESSION_JWKS_URI,
          audience: env.SESSION_AUDIENCE as string,
        },
      ],
    });
    const fresh = new Domain(h.gateway.ledger, verifier);
    const bob = await h.human({ enroll: false });
    const token = await bob.token();
    h.queries.reset();
    const first = await fresh.authenticate(token);
    expect(first.actorId).toBe(bob.actorId);
    expect(h.queries.count).toBe(1);
    expect(h.queries.texts.filter((t) => WRITES.test(t))).toEqual([]);
    h.queries.reset();
    const again = await fresh.authenticate(await bob.token());
    expect(again.actorId).toBe(bob.actorId);
    expect(h.queries.count).toBe(0);
  });
});
