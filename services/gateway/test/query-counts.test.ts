import { Indexer, PostgresSearchProvider } from '@tms/search';
import { type ApiClient, type CallResult, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';

/**
 * Reads cost a fixed number of SQL statements however many items they show (no N+1). The
 * counts come from Drizzle's logger; `reset()` runs right before the measured request.
 */

/**
 * An upper bound on the statements of one read, authentication and membership included (issue
 * 12: a get is one statement, a list two; a credential's row, checked on every request, counts).
 */
const MAX_STATEMENTS_PER_READ = 2;

type Evidence = { id: string; content_root_sha256: string; excerpt_sha256: string };

async function ok(res: Promise<CallResult>): Promise<CallResult> {
  const done = await res;
  expect(done.status, done.text).toBe(200);
  return done;
}

async function createEvidence(api: ApiClient, namespaceId: string, excerpt: string): Promise<Evidence> {
  const res = await ok(
    api.post('/v1/evidence', {
      namespace_id: namespaceId,
      source_locator: 'doc://x',
      content_root_sha256: sha256Hex(excerpt),
      excerpt,
    }),
  );
  return res.body.evidence;
}

async function verifyTimes(api: ApiClient, evidence: Evidence, times: number): Promise<void> {
  for (let i = 0; i < times; i += 1) {
    await ok(
      api.post(`/v1/evidence/${evidence.id}/verifications`, {
        expected_content_root_sha256: evidence.content_root_sha256,
        expected_excerpt_sha256: evidence.excerpt_sha256,
        verdict: 'verified',
      }),
    );
  }
}

describe.each(DRIVERS)('statements per read (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  /** Statements issued by one request; the request must succeed. */
  async function measure(request: () => Promise<CallResult>): Promise<{ count: number; res: CallResult }> {
    h.queries.reset();
    const res = await request();
    const count = h.queries.count;
    expect(res.status, res.text).toBe(200);
    return { count, res };
  }

  it('credentials: 30 grants and a namespace ceiling cost what 1 does; listing 30 credentials what 1 costs', async () => {
    const { api } = await h.workspace();
    const root = (await ok(api.post('/v1/namespaces', { parent_id: null, name: 'root' }))).body.namespace;
    const installation = (await ok(api.post('/v1/installations', { name: 'crm' }))).body.installation;
    const grantInstallation = (namespaceId: string) =>
      ok(
        api.put(`/v1/namespaces/${namespaceId}/grants`, {
          grants: [
            {
              target: { kind: 'installation', product_installation_id: installation.id },
              capabilities: ['read'],
              inherit: true,
            },
          ],
        }),
      );
    const children: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      const child = (await ok(api.post('/v1/namespaces', { parent_id: root.id, name: `c${i}` }))).body.namespace;
      children.push(child.id);
    }
    const issue = async (namespaceIds: string[] | null) =>
      (
        await ok(
          api.post('/v1/credentials', {
            kind: 'installation',
            product_installation_id: installation.id,
            name: 'reader',
            capabilities: ['read'],
            namespace_ids: namespaceIds,
          }),
        )
      ).body.secret as string;
    const [first] = children as [string];
    await grantInstallation(first);
    const narrow = api.as(await issue([first]), null);
    const read = (client: ApiClient) => () => client.get(`/v1/namespaces/${first}`);
    await read(narrow)();
    const oneGrant = await measure(read(narrow));
    for (const id of children.slice(1)) await grantInstallation(id);
    await grantInstallation(root.id);
    const manyGrants = await measure(read(narrow));
    expect(manyGrants.count).toBe(oneGrant.count);
    expect(manyGrants.count).toBeLessThanOrEqual(MAX_STATEMENTS_PER_READ);

    const list = () => api.get('/v1/credentials', { query: { limit: 100 } });
    await list();
    const fewCost = await measure(list);
    for (let i = 0; i < 29; i += 1) await issue(null);
    const manyCost = await measure(list);
    expect(fewCost.res.body.credentials).toHaveLength(1);
    expect(manyCost.res.body.credentials).toHaveLength(30);
    expect(manyCost.count).toBe(fewCost.count);
  });

  it('memories.get with include_evidence: 32 evidence items with 3 verifications each cost what 1 item costs', async () => {
    const { id: ws, api, owner } = await h.workspace();
    const ns = (await ok(api.post('/v1/namespaces', { parent_id: null, name: 'facts' }))).body.namespace;
    const many: Evidence[] = [];
    for (let i = 0; i < 32; i += 1) {
      const ev = await createEvidence(api, ns.id, `excerpt ${i}`);
      await verifyTimes(api, ev, 3);
      many.push(ev);
    }
    const one = await createEvidence(api, ns.id, 'the only excerpt');
    await verifyTimes(api, one, 3);
    const big = await ok(
      api.post('/v1/memories', {
        namespace_id: ns.id,
        kind: 'claim',
        text: 'cites 32',
        valid_from: 0,
        evidence_ids: many.map((e) => e.id),
      }),
    );
    const small = await ok(
      api.post('/v1/memories', {
        namespace_id: ns.id,
        kind: 'claim',
        text: 'cites 1',
        valid_from: 0,
        evidence_ids: [one.id],
      }),
    );
    const read = (api: ApiClient, id: string) => () =>
      api.get(`/v1/memories/${id}`, { query: { include_evidence: true } });

    await read(api, small.body.memory.id)(); // warm-up: process-wide secrets are loaded once
    const smallCost = await measure(read(api, small.body.memory.id));
    const bigCost = await measure(read(api, big.body.memory.id));
    expect(smallCost.res.body.view.evidence).toHaveLength(1);
    expect(smallCost.res.body.view.verifications).toHaveLength(3);
    expect(bigCost.res.body.view.evidence).toHaveLength(32);
    expect(bigCost.res.body.view.verifications).toHaveLength(32);
    expect(bigCost.count).toBe(smallCost.count);
    expect(bigCost.count).toBeLessThanOrEqual(MAX_STATEMENTS_PER_READ);

    // The same for a member whose read comes from an inherited grant.
    const bob = await h.human({ enroll: false });
    await ok(
      api.put(`/v1/workspaces/${ws}/members`, {
        members: [
          { actor_id: owner.actorId, role: 'admin' },
          { actor_id: bob.actorId, role: 'member' },
        ],
      }),
    );
    await ok(
      api.put(`/v1/namespaces/${ns.id}/grants`, {
        grants: [{ target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read'], inherit: true }],
      }),
    );
    const bobApi = await bob.api(ws);
    await read(bobApi, small.body.memory.id)();
    const bobSmall = await measure(read(bobApi, small.body.memory.id));
    const bobBig = await measure(read(bobApi, big.body.memory.id));
    expect(bobBig.res.body.view.evidence).toHaveLength(32);
    expect(bobBig.count).toBe(bobSmall.count);
    expect(bobBig.count).toBeLessThanOrEqual(MAX_STATEMENTS_PER_READ);
  });

  it('namespaces.list of 100 namespaces costs what a list of 2 costs', async () => {
    const small = await h.workspace();
    const big = await h.workspace();
    for (let i = 0; i < 2; i += 1) await ok(small.api.post('/v1/namespaces', { parent_id: null, name: `n${i}` }));
    // 10 roots with 9 children each: 100 namespaces at two depths.
    for (let r = 0; r < 10; r += 1) {
      const root = (await ok(big.api.post('/v1/namespaces', { parent_id: null, name: `root${r}` }))).body.namespace;
      for (let c = 0; c < 9; c += 1)
        await ok(big.api.post('/v1/namespaces', { parent_id: root.id, name: `child${c}` }));
    }
    const list = (api: ApiClient) => () => api.get('/v1/namespaces', { query: { limit: 100 } });
    await list(small.api)();
    const smallCost = await measure(list(small.api));
    const bigCost = await measure(list(big.api));
    expect(smallCost.res.body.namespaces).toHaveLength(2);
    expect(bigCost.res.body.namespaces).toHaveLength(100);
    expect(bigCost.res.body.next_cursor).toBeNull();
    expect(bigCost.count).toBe(smallCost.count);
    expect(bigCost.count).toBeLessThanOrEqual(MAX_STATEMENTS_PER_READ);
  });

  it('evidence.get with 32 verifications costs what it costs with 1', async () => {
    const { api } = await h.workspace();
    const ns = (await ok(api.post('/v1/namespaces', { parent_id: null, name: 'facts' }))).body.namespace;
    const one = await createEvidence(api, ns.id, 'verified once');
    await verifyTimes(api, one, 1);
    const many = await createEvidence(api, ns.id, 'verified 32 times');
    await verifyTimes(api, many, 32);
    const get = (id: string) => () => api.get(`/v1/evidence/${id}`);
    await get(one.id)();
    const smallCost = await measure(get(one.id));
    const bigCost = await measure(get(many.id));
    expect(smallCost.res.body.verifications).toHaveLength(1);
    expect(bigCost.res.body.verifications).toHaveLength(32);
    expect(bigCost.res.body.next_cursor).toBeNull();
    expect(bigCost.count).toBe(smallCost.count);
    expect(bigCost.count).toBeLessThanOrEqual(MAX_STATEMENTS_PER_READ);
  });

  it('recall: 20 items cost what 1 costs, and the items chosen are presented from the ledger read that approved them', async () => {
    const { api } = await h.workspace();
    const ns = (await ok(api.post('/v1/namespaces', { parent_id: null, name: 'notes' }))).body.namespace;
    // The memories sit one level below the namespace recalled: its subtree is the scope.
    const inner = (await ok(api.post('/v1/namespaces', { parent_id: ns.id, name: 'inner' }))).body.namespace;
    for (let i = 0; i < 20; i += 1) {
      await ok(
        api.post('/v1/memories', { namespace_id: inner.id, kind: 'claim', text: `tea note ${i}`, valid_from: 0 }),
      );
    }
    await new Indexer(h.gateway.ledger, new PostgresSearchProvider(h.gateway.ledger.handle.db)).catchUp();
    const recall = (items: number) => () =>
      api.post('/v1/recall', {
        namespace_ids: [ns.id],
        query: 'tea',
        mode: 'lexical',
        budget: { max_items: items, max_context_chars: 10_000 },
      });
    await recall(1)();
    const smallCost = await measure(recall(1));
    const bigCost = await measure(recall(20));
    expect(smallCost.res.body.items).toHaveLength(1);
    expect(bigCost.res.body.items).toHaveLength(20);
    expect(bigCost.count).toBe(smallCost.count);
    expect(
      new Set(bigCost.res.body.items.map((item: { memory: { namespace_id: string } }) => item.memory.namespace_id)),
    ).toEqual(new Set([inner.id]));
    // The caller's standing in the workspace with the addressed namespace and its subtree (one
    // statement), the arm's cursor, the lexical statistics and the search, and the ledger's
    // decision on the candidates, which also gives each chosen item's generation and key (no
    // read of its own after the ranking).
    const texts = h.queries.texts.join('\n');
    expect(bigCost.count, texts).toBeLessThanOrEqual(5);
    expect(
      h.queries.texts.filter((text) => /from "?namespaces"?\s/i.test(text)),
      texts,
    ).toHaveLength(1);
  });
});
