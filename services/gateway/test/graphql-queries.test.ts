import { type ApiClient, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphqlClient } from './graphql-client';
import { type Harness, startHarness } from './harness';

/**
 * Nested fields are batched per request: the number of SQL statements a GraphQL request costs
 * does not grow with the number of items it shows.
 */

async function evidenceItems(
  api: ApiClient,
  namespaceId: string,
  count: number,
  verificationsEach: number,
  tag: string,
) {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const excerpt = `excerpt ${tag} #${i}`;
    const sha = sha256Hex(excerpt);
    const res = await api.post('/v1/evidence', {
      namespace_id: namespaceId,
      source_locator: `doc://${i}`,
      content_root_sha256: sha,
      excerpt,
    });
    expect(res.status, res.text).toBe(200);
    for (let v = 0; v < verificationsEach; v += 1) {
      const verified = await api.post(`/v1/evidence/${res.body.evidence.id}/verifications`, {
        expected_content_root_sha256: sha,
        expected_excerpt_sha256: sha,
        verdict: 'verified',
      });
      expect(verified.status, verified.text).toBe(200);
    }
    ids.push(res.body.evidence.id);
  }
  return ids;
}

const VIEW_QUERY = `query($id: ID!) {
  memory(id: $id) {
    view {
      memory { id generation namespace { id displayPath } }
      revision {
        id text evidenceIds
        evidence { id excerpt namespace { id } }
        attestation { id verifications { id verdict } }
      }
      evidence {
        id excerpt
        namespace { id name parent { id } }
        verifications { edges { node { id verdict evidence { id } } } pageInfo { hasNextPage endCursor } }
      }
      verifications { id evidence { id } }
    }
  }
}`;

const LIST_QUERY = `query($ns: ID!) {
  memories(namespaceId: $ns, first: 100) {
    edges {
      node {
        memory { id generation namespace { id } }
        revision { id text evidence { id excerpt namespace { id } } memory { id generation } }
        stale
      }
    }
    pageInfo { hasNextPage }
  }
}`;

describe('GraphQL query counts (postgres)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
  });
  afterAll(() => h?.close());

  /** SQL statements one GraphQL request costs. */
  async function cost(client: GraphqlClient, query: string, variables: Record<string, unknown>) {
    h.queries.reset();
    const result = await client.request(query, variables);
    const count = h.queries.count;
    expect(result.body.errors, result.text).toBeUndefined();
    return { count, data: result.body.data };
  }

  it('reads a memory view with 32 evidence items, each with verifications, in as many statements as with 1', async () => {
    const { id: ws, api, owner } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'views' })).body.namespace;
    const client = new GraphqlClient(h.url, await owner.token(), ws);

    const one = await evidenceItems(api, ns.id, 1, 2, 'one');
    const many = await evidenceItems(api, ns.id, 32, 2, 'many');
    const small = await api.post('/v1/memories', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'one',
      valid_from: 0,
      evidence_ids: one,
    });
    const large = await api.post('/v1/memories', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'thirty-two',
      valid_from: 0,
      evidence_ids: many,
    });
    expect(large.body.revision.status).toBe('asserted');

    // Warm the process-wide caches (cursor key) so that both requests start alike.
    await cost(client, VIEW_QUERY, { id: small.body.memory.id });
    const a = await cost(client, VIEW_QUERY, { id: small.body.memory.id });
    const b = await cost(client, VIEW_QUERY, { id: large.body.memory.id });

    const view = b.data.memory.view;
    expect(view.evidence).toHaveLength(32);
    expect(view.revision.evidence).toHaveLength(32);
    expect(view.revision.attestation.verifications).toHaveLength(32);
    for (const e of view.evidence) expect(e.verifications.edges).toHaveLength(2);
    expect(view.verifications).toHaveLength(32);
    expect(b.count).toBe(a.count);
    expect(b.count).toBeLessThanOrEqual(20);
  });

  it('reads a page of 100 memories with their evidence in as many statements as a page of 3', async () => {
    const { id: ws, api, owner } = await h.workspace();
    const client = new GraphqlClient(h.url, await owner.token(), ws);
    const big = (await api.post('/v1/namespaces', { parent_id: null, name: 'big' })).body.namespace;
    const small = (await api.post('/v1/namespaces', { parent_id: null, name: 'small' })).body.namespace;
    const pool = await evidenceItems(api, big.id, 8, 0, 'big');
    const smallPool = await evidenceItems(api, small.id, 2, 0, 'small');
    for (let i = 0; i < 100; i += 1) {
      const res = await api.post('/v1/memories', {
        namespace_id: big.id,
        kind: 'claim',
        text: `memory ${i}`,
        valid_from: 0,
        evidence_ids: [pool[i % pool.length], pool[(i + 3) % pool.length]],
      });
      expect(res.status, res.text).toBe(200);
    }
    for (let i = 0; i < 3; i += 1) {
      await api.post('/v1/memories', {
        namespace_id: small.id,
        kind: 'claim',
        text: `small ${i}`,
        valid_from: 0,
        evidence_ids: [smallPool[i % 2]],
      });
    }

    await cost(client, LIST_QUERY, { ns: small.id });
    const a = await cost(client, LIST_QUERY, { ns: small.id });
    const b = await cost(client, LIST_QUERY, { ns: big.id });
    expect(a.data.memories.edges).toHaveLength(3);
    expect(b.data.memories.edges).toHaveLength(100);
    for (const edge of b.data.memories.edges) expect(edge.node.revision.evidence).toHaveLength(2);
    expect(b.count).toBe(a.count);
    expect(b.count).toBeLessThanOrEqual(20);
  });
});
