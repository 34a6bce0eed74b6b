// biome-ignore-all lint/suspicious/noExplicitAny: answers are walked as plain JSON.
import { type ApiClient, type CallResult, sha256Hex } from '@tms/testkit';
import { expect } from 'vitest';
import type { Harness, Human } from './harness';

/** A workspace for the change-feed tests, and helpers to read the feed. */

export async function ok(res: Promise<CallResult>): Promise<CallResult> {
  const done = await res;
  expect(done.status, done.text).toBe(200);
  return done;
}

/** Texts written into the ledger that no change may ever carry. */
const SECRET_TEXT = 'zebra-secret-memory-text';
const SECRET_EXCERPT = 'zebra-secret-excerpt';
const SECRET_NAME = 'zebra-secret-name';

export interface Scenario {
  workspaceId: string;
  owner: Human;
  admin: ApiClient;
  reader: Human;
  readerApi: ApiClient;
  /** Namespaces: A (granted to the reader, inherited), A/A1 below it, B (not granted). */
  ns: { a: string; a1: string; b: string };
  /** Ledger ids the test created, with the namespace each lives in (null: workspace-level). */
  placed: Map<string, string | null>;
}

export async function memoryIn(api: ApiClient, namespaceId: string, text: string): Promise<CallResult> {
  return ok(api.post('/v1/memories', { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0 }));
}

/** A workspace with an admin, a reader granted A (and so A/A1), and writes in A, A1 and B. */
export async function buildScenario(h: Harness): Promise<Scenario> {
  const { id: workspaceId, owner, api: admin } = await h.workspace();
  const reader = await h.human();
  const placed = new Map<string, string | null>();
  await ok(
    admin.put(`/v1/workspaces/${workspaceId}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: reader.actorId, role: 'member' },
      ],
    }),
  );
  const namespace = async (parentId: string | null, name: string) => {
    const id = (await ok(admin.post('/v1/namespaces', { parent_id: parentId, name }))).body.namespace.id as string;
    placed.set(id, id);
    return id;
  };
  const a = await namespace(null, 'a');
  const a1 = await namespace(a, SECRET_NAME);
  const b = await namespace(null, 'b');
  await ok(
    admin.put(`/v1/namespaces/${a}/grants`, {
      grants: [{ target: { kind: 'actor', actor_id: reader.actorId }, capabilities: ['read'], inherit: true }],
    }),
  );
  for (const ns of [a, a1, b]) {
    const created = (await memoryIn(admin, ns, `${SECRET_TEXT} in ${ns}`)).body;
    placed.set(created.memory.id, ns);
    placed.set(created.revision.id, ns);
  }
  const evidence = (
    await ok(
      admin.post('/v1/evidence', {
        namespace_id: a1,
        source_locator: 'doc://zebra',
        content_root_sha256: sha256Hex(SECRET_EXCERPT),
        excerpt: SECRET_EXCERPT,
      }),
    )
  ).body.evidence;
  placed.set(evidence.id, a1);
  const verification = (
    await ok(
      admin.post(`/v1/evidence/${evidence.id}/verifications`, {
        expected_content_root_sha256: evidence.content_root_sha256,
        expected_excerpt_sha256: evidence.excerpt_sha256,
        verdict: 'verified',
      }),
    )
  ).body.verification;
  placed.set(verification.id, a1);
  const installation = (await ok(admin.post('/v1/installations', { name: SECRET_NAME }))).body.installation;
  placed.set(installation.id, null);
  return { workspaceId, owner, admin, reader, readerApi: await reader.api(workspaceId), ns: { a, a1, b }, placed };
}

/** Every page of the feed from `after`, `limit` at a time, until caught up. */
export async function readAll(
  api: ApiClient,
  query: Record<string, string | number | boolean> = {},
  limit = 7,
): Promise<{ changes: any[]; pages: any[] }> {
  const changes: any[] = [];
  const pages: any[] = [];
  let after = 0;
  for (;;) {
    const page = (await ok(api.get('/v1/changes', { query: { ...query, after, limit } }))).body;
    pages.push(page);
    changes.push(...page.changes);
    expect(page.next_after).toBeGreaterThanOrEqual(after);
    if (page.next_after === after) return { changes, pages };
    after = page.next_after;
  }
}
