import { schema } from '@tms/ledger';
import { type ApiClient, sha256Hex } from '@tms/testkit';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';

type Commit = { sequence: number; recorded_at: number };

/** The commits table of one workspace, by sequence. */
function commitsOf(h: Harness, workspaceId: string) {
  return h.gateway.ledger.handle.db
    .select()
    .from(schema.commits)
    .where(eq(schema.commits.workspaceId, workspaceId))
    .orderBy(asc(schema.commits.sequence));
}

async function headOf(h: Harness, workspaceId: string): Promise<number> {
  const head = await h.gateway.ledger.stores.commits.head(workspaceId);
  if (!head) throw new Error(`no head for ${workspaceId}`);
  return head.sequence;
}

function createMemory(api: ApiClient, namespaceId: string, text: string) {
  return api.post('/v1/memories', { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0 });
}

/** The commit log is 1..n without gaps, and recorded_at never decreases with sequence. */
function expectGapFreeLog(rows: { sequence: number; recordedAt: number }[]) {
  expect(rows.map((r) => r.sequence)).toEqual(rows.map((_, i) => i + 1));
  for (let i = 1; i < rows.length; i += 1) {
    expect(rows[i]?.recordedAt).toBeGreaterThanOrEqual(rows[i - 1]?.recordedAt as number);
  }
}

describe.each(DRIVERS)('commit sequences (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  it('workspace creation is commit 1 and each write takes the next sequence', async () => {
    const { id: ws, api } = await h.workspace();
    expect(await headOf(h, ws)).toBe(1);
    const ns = await api.post('/v1/namespaces', { parent_id: null, name: 'facts' });
    expect(ns.status).toBe(200);
    expect(ns.body.commit.sequence).toBe(2);
    const log = await commitsOf(h, ws);
    expect(log.map((r) => [r.sequence, r.operation])).toEqual([
      [1, 'workspaces.create'],
      [2, 'namespaces.create'],
    ]);
    expect(log[1]?.recordedAt).toBe(ns.body.commit.recorded_at);
    expect(log[1]?.subjectIds).toEqual([ns.body.namespace.id]);
  });

  it('20 parallel creates in one workspace take 20 consecutive sequences after the head, in commit order', async () => {
    const { id: ws, api, owner } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'facts' })).body.namespace;
    const before = await headOf(h, ws);

    // While the writes run, every snapshot of the log must be a gap-free prefix: a reader tailing
    // `sequence > last` never sees a sequence before all lower ones have committed.
    // (PGlite answers without leaving the microtask queue: yield to the event loop between polls.)
    let writing = true;
    const snapshots: number[][] = [];
    const tail = (async () => {
      while (writing) {
        snapshots.push((await commitsOf(h, ws)).map((r) => r.sequence));
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    let results: Awaited<ReturnType<typeof createMemory>>[];
    try {
      results = await Promise.all(Array.from({ length: 20 }, (_, i) => createMemory(api, ns.id, `fact ${i}`)));
    } finally {
      writing = false;
      await tail;
    }
    for (const res of results) expect(res.status).toBe(200);
    expect(snapshots.length).toBeGreaterThan(0);
    for (const seen of snapshots) expect(seen).toEqual(seen.map((_, i) => i + 1));
    const commits = results.map((r) => r.body.commit as Commit);
    const sequences = commits.map((c) => c.sequence).sort((a, b) => a - b);
    expect(sequences).toEqual(Array.from({ length: 20 }, (_, i) => before + 1 + i));
    expect(await headOf(h, ws)).toBe(before + 20);

    const log = await commitsOf(h, ws);
    expectGapFreeLog(log);
    expect(log).toHaveLength(before + 20);
    // Every acknowledged write is the commit row with its sequence, time and written ids.
    for (const res of results) {
      const row = log.find((r) => r.sequence === res.body.commit.sequence);
      expect(row).toEqual({
        workspaceId: ws,
        sequence: res.body.commit.sequence,
        recordedAt: res.body.commit.recorded_at,
        operation: 'memories.create',
        actorId: owner.actorId,
        subjectIds: [res.body.memory.id, res.body.revision.id],
        chainHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      // The revision's recorded_at is its commit's (decisions §2).
      expect(res.body.revision.recorded_at).toBe(res.body.commit.recorded_at);
    }
    // Ordered by sequence, the acknowledged recorded_at never decreases.
    const bySequence = [...commits].sort((a, b) => a.sequence - b.sequence);
    for (let i = 1; i < bySequence.length; i += 1) {
      expect(bySequence[i]?.recorded_at).toBeGreaterThanOrEqual(bySequence[i - 1]?.recorded_at as number);
    }
  });

  it('concurrent writes in two workspaces keep each log gap-free and independent', async () => {
    const a = await h.workspace();
    const b = await h.workspace();
    const nsA = (await a.api.post('/v1/namespaces', { parent_id: null, name: 'a' })).body.namespace;
    const nsB = (await b.api.post('/v1/namespaces', { parent_id: null, name: 'b' })).body.namespace;
    const headA = await headOf(h, a.id);
    const headB = await headOf(h, b.id);

    const writes: Promise<{ ws: string; res: Awaited<ReturnType<typeof createMemory>> }>[] = [];
    for (let i = 0; i < 12; i += 1) {
      writes.push(createMemory(a.api, nsA.id, `a${i}`).then((res) => ({ ws: a.id, res })));
      writes.push(createMemory(b.api, nsB.id, `b${i}`).then((res) => ({ ws: b.id, res })));
      if (i % 3 === 0) {
        writes.push(
          a.api.post('/v1/namespaces', { parent_id: nsA.id, name: `child${i}` }).then((res) => ({ ws: a.id, res })),
        );
      }
    }
    const done = await Promise.all(writes);
    for (const { res } of done) expect(res.status).toBe(200);
    const seqA = done.filter((d) => d.ws === a.id).map((d) => d.res.body.commit.sequence as number);
    const seqB = done.filter((d) => d.ws === b.id).map((d) => d.res.body.commit.sequence as number);
    expect(seqA.sort((x, y) => x - y)).toEqual(Array.from({ length: 16 }, (_, i) => headA + 1 + i));
    expect(seqB.sort((x, y) => x - y)).toEqual(Array.from({ length: 12 }, (_, i) => headB + 1 + i));
    const logA = await commitsOf(h, a.id);
    const logB = await commitsOf(h, b.id);
    expectGapFreeLog(logA);
    expectGapFreeLog(logB);
    expect(logA).toHaveLength(headA + 16);
    expect(logB).toHaveLength(headB + 12);
  });

  it('a refused write leaves no commit and does not move the head', async () => {
    const { id: ws, api, owner } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'facts' })).body.namespace;
    const bob = await h.human({ enroll: false });
    expect(
      (
        await api.put(`/v1/workspaces/${ws}/members`, {
          members: [
            { actor_id: owner.actorId, role: 'admin' },
            { actor_id: bob.actorId, role: 'member' },
          ],
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await api.put(`/v1/namespaces/${ns.id}/grants`, {
          grants: [{ target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read'], inherit: false }],
        })
      ).status,
    ).toBe(200);
    const bobApi = await bob.api(ws);
    const head = await headOf(h, ws);
    const logBefore = await commitsOf(h, ws);
    expect(logBefore).toHaveLength(head);

    const refused = [
      // 400: an empty validity interval.
      await api.post('/v1/memories', { namespace_id: ns.id, kind: 'claim', text: 'x', valid_from: 5, valid_to: 5 }),
      // 400: no Idempotency-Key.
      await api.post('/v1/memories', { namespace_id: ns.id, kind: 'claim', text: 'x', valid_from: 0 }, { idem: null }),
      // 403: read does not allow observe.
      await createMemory(bobApi, ns.id, 'x'),
      // 403: a member who is not admin cannot create a root namespace.
      await bobApi.post('/v1/namespaces', { parent_id: null, name: 'mine' }),
      // 404: an absent namespace.
      await createMemory(api, 'ns_absent', 'x'),
      // 409: a verification with the wrong expected hashes.
      await (async () => {
        const text = 'quoted';
        const ev = await api.post('/v1/evidence', {
          namespace_id: ns.id,
          source_locator: 'file://q',
          content_root_sha256: sha256Hex(text),
          excerpt: text,
        });
        expect(ev.status).toBe(200);
        return api.post(`/v1/evidence/${ev.body.evidence.id}/verifications`, {
          expected_content_root_sha256: '0'.repeat(64),
          expected_excerpt_sha256: '0'.repeat(64),
          verdict: 'verified',
        });
      })(),
    ];
    expect(refused.map((r) => r.status)).toEqual([400, 400, 403, 403, 404, 409]);
    // Only the evidence write made a commit.
    expect(await headOf(h, ws)).toBe(head + 1);
    const logAfter = await commitsOf(h, ws);
    expect(logAfter).toHaveLength(head + 1);
    expect(logAfter.at(-1)?.operation).toBe('evidence.create');
    expectGapFreeLog(logAfter);

    // The next acknowledged write follows directly.
    const next = await createMemory(api, ns.id, 'accepted');
    expect(next.body.commit.sequence).toBe(head + 2);
  });
});
