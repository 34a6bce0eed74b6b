// biome-ignore-all lint/suspicious/noExplicitAny: answers are walked as plain JSON.
import { type ApiClient, type CallResult, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphqlClient } from './graphql-client';
import { DRIVERS, type Harness, type Human, startHarness } from './harness';

/**
 * The change feed (`GET /v1/changes`, decisions §10): what each caller sees, paging, the long
 * poll, the statements per page, and GraphQL's `changes` field.
 */

async function ok(res: Promise<CallResult>): Promise<CallResult> {
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

describe.each(DRIVERS)('changes.list (%s)', (driver) => {
  let h: Harness;
  let s: Scenario;
  beforeAll(async () => {
    h = await startHarness({ driver });
    s = await buildScenario(h);
  });
  afterAll(() => h?.close());

  it('an admin reads every sequence from 1 with no gap, workspace-level changes included', async () => {
    const { changes, pages } = await readAll(s.admin);
    const head = pages.at(-1).head_sequence;
    expect(changes.map((c) => c.sequence)).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    const types = new Set(changes.flatMap((c) => c.subjects.map((x: any) => x.type)));
    for (const type of ['workspace', 'member', 'namespace', 'grant', 'memory', 'revision', 'evidence']) {
      expect(types).toContain(type);
    }
    expect(types).toContain('verification');
    expect(types).toContain('installation');
    expect(changes[0]).toEqual({
      sequence: 1,
      recorded_at: expect.any(Number),
      operation: 'workspaces.create',
      actor_id: s.owner.actorId,
      subjects: [{ type: 'workspace', id: s.workspaceId, namespace_id: null }],
    });
    // Each subject is placed where the test put it; workspace-level ones have no namespace.
    for (const change of changes) {
      for (const subject of change.subjects) {
        const expected = s.placed.get(subject.id);
        if (subject.type === 'grant') expect(subject).toEqual({ type: 'grant', id: s.ns.a, namespace_id: null });
        else if (expected !== undefined) expect(subject.namespace_id).toBe(expected);
        else expect(['workspace', 'member']).toContain(subject.type);
      }
    }
    // Ids only: no memory text, excerpt or name.
    const text = JSON.stringify(pages);
    expect(text).not.toContain('zebra');
  });

  it('a reader sees only subjects it may read; next_after moves past the rest', async () => {
    const admin = await readAll(s.admin);
    const reader = await readAll(s.readerApi);
    const readable = new Set([s.ns.a, s.ns.a1]);
    const expected = admin.changes
      .map((c) => ({
        ...c,
        subjects: c.subjects.filter((x: any) => x.namespace_id !== null && readable.has(x.namespace_id)),
      }))
      .filter((c) => c.subjects.length > 0);
    expect(reader.changes).toEqual(expected);
    expect(reader.changes.length).toBeGreaterThan(0);
    expect(reader.changes.flatMap((c) => c.subjects).some((x: any) => x.namespace_id === null)).toBe(false);
    // The last page still moves to the head, though the last commits (B's writes, the installation) are hidden.
    const last = reader.pages.at(-1);
    expect(last.next_after).toBe(last.head_sequence);
    expect(JSON.stringify(reader.pages)).not.toContain('zebra');
  });

  it('namespace_id narrows to a subtree, or to the namespace alone', async () => {
    const subtree = await readAll(s.readerApi, { namespace_id: s.ns.a });
    const only = await readAll(s.readerApi, { namespace_id: s.ns.a, include_descendants: false });
    const namespaces = (r: { changes: any[] }) =>
      new Set(r.changes.flatMap((c) => c.subjects.map((x: any) => x.namespace_id)));
    expect(namespaces(subtree)).toEqual(new Set([s.ns.a, s.ns.a1]));
    expect(namespaces(only)).toEqual(new Set([s.ns.a]));
    // An admin filtering on a namespace sees no workspace-level subject either.
    const adminSubtree = await readAll(s.admin, { namespace_id: s.ns.b });
    expect(namespaces(adminSubtree)).toEqual(new Set([s.ns.b]));
  });

  it('an unreadable namespace_id answers exactly like an absent one', async () => {
    const hidden = await s.readerApi.get('/v1/changes', { query: { namespace_id: s.ns.b } });
    const absent = await s.readerApi.get('/v1/changes', { query: { namespace_id: 'ns_doesnotexist' } });
    expect(hidden.status).toBe(404);
    expect(absent.status).toBe(404);
    const strip = (body: any) => ({ ...body, error: { ...body.error, request_id: null } });
    expect(strip(hidden.body)).toEqual(strip(absent.body));
    expect(hidden.body.error.code).toBe('not_found');
  });

  it('refuses bad input with invalid_input', async () => {
    for (const query of [
      { limit: 0 },
      { limit: 101 },
      { after: -1 },
      { wait_ms: 10001 },
      { include_descendants: 'yes' },
      { since: 3 },
    ]) {
      const res = await s.readerApi.get('/v1/changes', { query: query as any });
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.error.code).toBe('invalid_input');
    }
  });

  it('wait_ms waits for the next commit after `after`, or answers empty when none comes', async () => {
    const head = (await ok(s.admin.get('/v1/changes', { query: { after: 0, limit: 1 } }))).body.head_sequence;
    const empty = (await ok(s.readerApi.get('/v1/changes', { query: { after: head, wait_ms: 300 } }))).body;
    expect(empty).toEqual({ changes: [], next_after: head, head_sequence: head });

    const waiting = s.readerApi.get('/v1/changes', { query: { after: head, wait_ms: 8000 } });
    // Written once the poll is (very likely) waiting; either way the answer must carry it.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const created = (await memoryIn(s.admin, s.ns.a, 'later')).body;
    const page = (await ok(waiting)).body;
    expect(page.changes).toEqual([
      {
        sequence: created.commit.sequence,
        recorded_at: created.commit.recorded_at,
        operation: 'memories.create',
        actor_id: s.owner.actorId,
        subjects: [
          { type: 'memory', id: created.memory.id, namespace_id: s.ns.a },
          { type: 'revision', id: created.revision.id, namespace_id: s.ns.a },
        ],
      },
    ]);
    expect(page.next_after).toBe(created.commit.sequence);
  });

  it('costs the same statements for a page of 1 and a page of 100', async () => {
    const counts: number[] = [];
    for (const limit of [1, 100]) {
      h.queries.reset();
      await ok(s.readerApi.get('/v1/changes', { query: { limit, namespace_id: s.ns.a } }));
      counts.push(h.queries.count);
    }
    expect(counts[0]).toBe(counts[1]);
    // The caller's standing (with the named namespace), then the page.
    expect(counts[0]).toBe(2);
  });

  it('GraphQL `changes` answers the same page as /v1', async () => {
    const gql = new GraphqlClient(h.url, await s.reader.token(), s.workspaceId);
    const data = await gql.data(
      `query($after: SafeInt, $first: Int, $ns: ID) {
        changes(after: $after, first: $first, namespaceId: $ns) {
          nextAfter headSequence changes { sequence recordedAt operation actorId subjects { type id namespaceId } }
        }
      }`,
      { after: 2, first: 20, ns: s.ns.a },
    );
    const rest = (await ok(s.readerApi.get('/v1/changes', { query: { after: 2, limit: 20, namespace_id: s.ns.a } })))
      .body;
    expect(data.changes).toEqual({
      nextAfter: rest.next_after,
      headSequence: rest.head_sequence,
      changes: rest.changes.map((c: any) => ({
        sequence: c.sequence,
        recordedAt: c.recorded_at,
        operation: c.operation,
        actorId: c.actor_id,
        subjects: c.subjects.map((x: any) => ({ type: x.type, id: x.id, namespaceId: x.namespace_id })),
      })),
    });
  });
});
