// biome-ignore-all lint/suspicious/noExplicitAny: answers are walked as plain JSON.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildScenario, memoryIn, ok, readAll, type Scenario } from './changes-scenario';
import { GraphqlClient } from './graphql-client';
import { DRIVERS, type Harness, startHarness } from './harness';

/**
 * The change feed (`GET /v1/changes`, decisions §10): what each caller sees, paging, the long
 * poll, the statements per page, and GraphQL's `changes` field.
 */

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
    const beyond = (await ok(s.readerApi.get('/v1/changes', { query: { after: head + 5 } }))).body;
    expect(beyond).toEqual({ changes: [], next_after: head + 5, head_sequence: head });

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
