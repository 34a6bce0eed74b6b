import { sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphqlClient } from './graphql-client';
import { type Harness, startHarness } from './harness';

/**
 * Nested fields (batch loaded) apply the services' read rules and the known_at of the read
 * they hang from: unreadable is absent, later records are not shown, admin-only is forbidden.
 */
describe('GraphQL nested fields (pglite)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite' });
  });
  afterAll(() => h?.close());

  it('masks what the reader may not see and what was recorded after known_at', async () => {
    const { id: ws, api, owner } = await h.workspace();
    const a = (await api.post('/v1/namespaces', { parent_id: null, name: 'a' })).body.namespace;
    const b = (await api.post('/v1/namespaces', { parent_id: a.id, name: 'b' })).body.namespace;
    const secret = (await api.post('/v1/namespaces', { parent_id: null, name: 'secret' })).body.namespace;
    const bob = await h.human({ enroll: false });
    await api.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: bob.actorId, role: 'member' },
      ],
    });
    await api.put(`/v1/namespaces/${b.id}/grants`, {
      grants: [{ target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read'], inherit: false }],
    });

    const evidence = async (namespaceId: string, excerpt: string) =>
      (
        await api.post('/v1/evidence', {
          namespace_id: namespaceId,
          source_locator: 'x://1',
          content_root_sha256: sha256Hex(excerpt),
          excerpt,
        })
      ).body.evidence;
    const verify = async (e: { id: string; excerpt_sha256: string }) =>
      (
        await api.post(`/v1/evidence/${e.id}/verifications`, {
          expected_content_root_sha256: e.excerpt_sha256,
          expected_excerpt_sha256: e.excerpt_sha256,
          verdict: 'verified',
        })
      ).body.verification;
    const visible = await evidence(b.id, 'visible excerpt');
    const hidden = await evidence(secret.id, 'hidden excerpt');
    const v1 = await verify(visible);
    const hiddenMemory = (
      await api.post('/v1/memories', { namespace_id: secret.id, kind: 'claim', text: 'hidden', valid_from: 0 })
    ).body;
    const created = (
      await api.post('/v1/memories', {
        namespace_id: b.id,
        kind: 'claim',
        text: 'first',
        valid_from: 0,
        evidence_ids: [visible.id, hidden.id],
        support_revision_ids: [hiddenMemory.revision.id],
      })
    ).body;
    const t2 = created.commit.recorded_at as number;
    await verify(visible);
    await api.post(`/v1/memories/${created.memory.id}/corrections`, { expected_generation: 1, text: 'second' });

    const query = `query($id: ID!, $knownAt: Float) {
      memory(id: $id, knownAt: $knownAt) {
        view {
          memory { generation }
          evidence { id verifications { edges { node { id } } } }
          revision {
            text recordedUntil evidenceIds supportRevisionIds
            evidence { id verifications { edges { node { id } } } }
            supportRevisions { id }
            memory { generation }
            namespace { id parent { id } grants { capabilities } }
          }
        }
      }
    }`;
    const asBob = new GraphqlClient(h.url, await bob.token(), ws);
    const then = await asBob.request(query, { id: created.memory.id, knownAt: t2 });
    const view = then.body.data?.memory.view;
    expect(view.revision.text).toBe('first');
    expect(view.revision.recordedUntil).toBeNull();
    expect(view.memory.generation).toBe(1);
    expect(view.revision.memory.generation).toBe(1);
    // The hidden evidence and the hidden support are listed by id but not shown.
    expect(view.revision.evidenceIds).toEqual([visible.id, hidden.id]);
    expect(view.revision.evidence.map((e: { id: string }) => e.id)).toEqual([visible.id]);
    expect(view.evidence.map((e: { id: string }) => e.id)).toEqual([visible.id]);
    expect(view.revision.supportRevisionIds).toEqual([hiddenMemory.revision.id]);
    expect(view.revision.supportRevisions).toEqual([]);
    // Only the verification recorded by known_at.
    expect(view.evidence[0].verifications.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([v1.id]);
    expect(view.revision.evidence[0].verifications.edges).toHaveLength(1);
    // The parent namespace is not readable to bob; its grants are for admins.
    expect(view.revision.namespace.id).toBe(b.id);
    expect(view.revision.namespace.parent).toBeNull();
    expect(view.revision.namespace.grants).toBeNull();
    expect(then.body.errors?.map((e) => [e.path?.join('.'), e.extensions.code])).toEqual([
      ['memory.view.revision.namespace.grants', 'forbidden'],
    ]);

    const now = await new GraphqlClient(h.url, await owner.token(), ws).data(query, { id: created.memory.id });
    expect(now.memory.view.revision.text).toBe('second');
    expect(now.memory.view.memory.generation).toBe(2);
    expect(now.memory.view.revision.evidence).toHaveLength(2);
    expect(now.memory.view.revision.supportRevisions).toEqual([{ id: hiddenMemory.revision.id }]);
    expect(now.memory.view.evidence[0].verifications.edges).toHaveLength(2);
    expect(now.memory.view.revision.namespace.parent).toEqual({ id: a.id });
    expect(now.memory.view.revision.namespace.grants).toEqual([{ capabilities: ['read'] }]);

    // Namespace children, memories and history, through their operations.
    const tree = await new GraphqlClient(h.url, await owner.token(), ws).data(
      `query($a: ID!) { namespace(id: $a) {
        children(first: 5) { edges { node { id displayPath memories(first: 5) { edges { node { memory { id history(first: 5) { edges { node { text } } } } } } } } } }
      } }`,
      { a: a.id },
    );
    const childNode = tree.namespace.children.edges[0].node;
    expect(childNode.displayPath).toEqual(['a', 'b']);
    expect(
      childNode.memories.edges[0].node.memory.history.edges.map((e: { node: { text: string } }) => e.node.text),
    ).toEqual(['second', 'first']);
  });
});
