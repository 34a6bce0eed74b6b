import crypto from 'node:crypto';
import { schema } from '@tms/ledger';
import { type ApiClient, type CallResult, freshKey, sha256Hex } from '@tms/testkit';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, type Human, startHarness } from './harness';

async function headOf(h: Harness, workspaceId: string): Promise<number> {
  const head = await h.gateway.ledger.stores.commits.head(workspaceId);
  if (!head) throw new Error(`no head for ${workspaceId}`);
  return head.sequence;
}

async function commitCount(h: Harness, workspaceId: string): Promise<number> {
  const rows = await h.gateway.ledger.handle.db
    .select({ sequence: schema.commits.sequence })
    .from(schema.commits)
    .where(eq(schema.commits.workspaceId, workspaceId));
  return rows.length;
}

async function storedRecords(h: Harness, key: string) {
  return h.gateway.ledger.handle.db
    .select()
    .from(schema.idempotencyRecords)
    .where(eq(schema.idempotencyRecords.key, key));
}

function evidenceBody(namespaceId: string, excerpt: string, locator = 'file://source') {
  return { namespace_id: namespaceId, source_locator: locator, content_root_sha256: sha256Hex(excerpt), excerpt };
}

function memoryBody(namespaceId: string, text: string, extra: object = {}) {
  return { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0, ...extra };
}

function expectError(res: CallResult, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body?.error?.code).toBe(code);
}

/** Admit `person` to the workspace with the given role, keeping the owner as admin. */
async function admit(api: ApiClient, ws: string, owner: Human, person: Human, role: 'admin' | 'member') {
  const res = await api.put(`/v1/workspaces/${ws}/members`, {
    members: [
      { actor_id: owner.actorId, role: 'admin' },
      { actor_id: person.actorId, role },
    ],
  });
  expect(res.status).toBe(200);
}

async function grant(api: ApiClient, namespaceId: string, actorId: string, capabilities: string[]) {
  const res = await api.put(`/v1/namespaces/${namespaceId}/grants`, {
    grants: [{ target: { kind: 'actor', actor_id: actorId }, capabilities, inherit: false }],
  });
  expect(res.status).toBe(200);
}

describe.each(DRIVERS)('idempotency (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  it('replays every write operation byte for byte and executes nothing new', async () => {
    const { id: ws, api, owner } = await h.workspace();
    const bob = await h.human({ enroll: false });
    const base = (await api.post('/v1/namespaces', { parent_id: null, name: 'base' })).body.namespace;
    const excerpt = `excerpt ${crypto.randomBytes(4).toString('hex')}`;
    const ev = (await api.post('/v1/evidence', evidenceBody(base.id, `${excerpt} (verified)`))).body.evidence;

    const writes: { name: string; call: (key: string) => Promise<CallResult> }[] = [
      {
        name: 'namespaces.create',
        call: (idem) => api.post('/v1/namespaces', { parent_id: base.id, name: 'child' }, { idem }),
      },
      {
        name: 'namespaces.update',
        call: (idem) => api.patch(`/v1/namespaces/${base.id}`, { name: 'renamed' }, { idem }),
      },
      {
        name: 'workspaces.members.put',
        call: (idem) =>
          api.put(
            `/v1/workspaces/${ws}/members`,
            {
              members: [
                { actor_id: owner.actorId, role: 'admin' },
                { actor_id: bob.actorId, role: 'member' },
              ],
            },
            { idem },
          ),
      },
      {
        name: 'namespaces.grants.put',
        call: (idem) =>
          api.put(
            `/v1/namespaces/${base.id}/grants`,
            { grants: [{ target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read'], inherit: true }] },
            { idem },
          ),
      },
      { name: 'evidence.create', call: (idem) => api.post('/v1/evidence', evidenceBody(base.id, excerpt), { idem }) },
      {
        name: 'evidence.verify',
        call: (idem) =>
          api.post(
            `/v1/evidence/${ev.id}/verifications`,
            {
              expected_content_root_sha256: ev.content_root_sha256,
              expected_excerpt_sha256: ev.excerpt_sha256,
              verdict: 'verified',
            },
            { idem },
          ),
      },
      {
        name: 'memories.create',
        call: (idem) =>
          api.post('/v1/memories', memoryBody(base.id, 'Ana lives in Lisbon.', { evidence_ids: [ev.id] }), { idem }),
      },
    ];

    for (const write of writes) {
      const key = freshKey(write.name);
      const head = await headOf(h, ws);
      const first = await write.call(key);
      expect(first.status, `${write.name}: ${first.text}`).toBe(200);
      expect(first.body.commit.sequence, write.name).toBe(head + 1);
      const replay = await write.call(key);
      expect(replay.status, write.name).toBe(200);
      expect(replay.text, write.name).toBe(first.text);
      expect(await headOf(h, ws), write.name).toBe(head + 1);
      expect(await commitCount(h, ws), write.name).toBe(head + 1);
      const records = await storedRecords(h, key);
      expect(
        records.map((r) => [r.operation, r.workspaceId, r.body]),
        write.name,
      ).toEqual([[write.name, ws, first.text]]);
    }

    // The replayed memory exists once.
    const revisions = await h.gateway.ledger.handle.db
      .select()
      .from(schema.revisions)
      .where(and(eq(schema.revisions.workspaceId, ws), eq(schema.revisions.namespaceId, base.id)));
    expect(revisions).toHaveLength(1);
  });

  it('replays workspaces.create without creating a second workspace', async () => {
    const owner = await h.human();
    const api = await owner.api();
    const key = freshKey();
    const first = await api.post('/v1/workspaces', { name: 'mine' }, { idem: key });
    expect(first.status).toBe(200);
    const replay = await api.post('/v1/workspaces', { name: 'mine' }, { idem: key });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    const owned = await h.gateway.ledger.handle.db
      .select()
      .from(schema.workspaces)
      .where(eq(schema.workspaces.createdBy, owner.actorId));
    expect(owned.map((w) => w.id)).toEqual([first.body.workspace.id]);
    expect(await headOf(h, first.body.workspace.id)).toBe(1);
    const listed = await api.get('/v1/workspaces');
    expect(listed.body.workspaces.map((w: { id: string }) => w.id)).toEqual([first.body.workspace.id]);
    // A changed name under the same key is a conflict, not a second workspace.
    expectError(await api.post('/v1/workspaces', { name: 'other' }, { idem: key }), 409, 'idempotency_conflict');
  });

  it('a changed body, another path id or another workspace under the same key is idempotency_conflict', async () => {
    const { id: ws, api, owner } = await h.workspace();
    const one = (await api.post('/v1/namespaces', { parent_id: null, name: 'one' })).body.namespace;
    const two = (await api.post('/v1/namespaces', { parent_id: null, name: 'two' })).body.namespace;

    // Changed body.
    const key = freshKey();
    expect((await api.post('/v1/memories', memoryBody(one.id, 'first'), { idem: key })).status).toBe(200);
    const head = await headOf(h, ws);
    expectError(
      await api.post('/v1/memories', memoryBody(one.id, 'second'), { idem: key }),
      409,
      'idempotency_conflict',
    );
    expectError(
      await api.post('/v1/memories', memoryBody(one.id, 'first', { valid_to: 10 }), { idem: key }),
      409,
      'idempotency_conflict',
    );
    // Another operation under the same key.
    expectError(
      await api.post('/v1/namespaces', { parent_id: null, name: 'x' }, { idem: key }),
      409,
      'idempotency_conflict',
    );
    expect(await headOf(h, ws)).toBe(head);

    // Same body on another path id.
    const renameKey = freshKey();
    const renamed = await api.patch(`/v1/namespaces/${one.id}`, { name: 'renamed' }, { idem: renameKey });
    expect(renamed.status).toBe(200);
    expectError(
      await api.patch(`/v1/namespaces/${two.id}`, { name: 'renamed' }, { idem: renameKey }),
      409,
      'idempotency_conflict',
    );
    expect((await api.get(`/v1/namespaces/${two.id}`)).body.namespace.name).toBe('two');

    const ev1 = (await api.post('/v1/evidence', evidenceBody(one.id, 'same text'))).body.evidence;
    const ev2 = (await api.post('/v1/evidence', evidenceBody(two.id, 'same text'))).body.evidence;
    expect(ev2.id).not.toBe(ev1.id);
    const verifyKey = freshKey();
    const verdict = {
      expected_content_root_sha256: ev1.content_root_sha256,
      expected_excerpt_sha256: ev1.excerpt_sha256,
      verdict: 'verified',
    };
    expect((await api.post(`/v1/evidence/${ev1.id}/verifications`, verdict, { idem: verifyKey })).status).toBe(200);
    expectError(
      await api.post(`/v1/evidence/${ev2.id}/verifications`, verdict, { idem: verifyKey }),
      409,
      'idempotency_conflict',
    );
    expect((await api.get(`/v1/evidence/${ev2.id}`)).body.verifications).toEqual([]);

    // Same key and body under another selected workspace.
    const other = await (await owner.api()).post('/v1/workspaces', { name: 'second' });
    expect(other.status).toBe(200);
    const ws2 = other.body.workspace.id as string;
    const api2 = api.in(ws2);
    const nsKey = freshKey();
    expect((await api.post('/v1/namespaces', { parent_id: null, name: 'same' }, { idem: nsKey })).status).toBe(200);
    expectError(
      await api2.post('/v1/namespaces', { parent_id: null, name: 'same' }, { idem: nsKey }),
      409,
      'idempotency_conflict',
    );
    expect(await headOf(h, ws2)).toBe(1);
    expect((await api2.get('/v1/namespaces')).body.namespaces).toEqual([]);
    // The key still replays in its own workspace.
    expect((await api.post('/v1/namespaces', { parent_id: null, name: 'same' }, { idem: nsKey })).status).toBe(200);

    // A group-committed write (memories.create) under a key used in the other workspace.
    const there = (await api2.post('/v1/namespaces', { parent_id: null, name: 'there' })).body.namespace;
    const memoryKey = freshKey();
    expect((await api.post('/v1/memories', memoryBody(one.id, 'here'), { idem: memoryKey })).status).toBe(200);
    expectError(
      await api2.post('/v1/memories', memoryBody(there.id, 'here'), { idem: memoryKey }),
      409,
      'idempotency_conflict',
    );
    expect(await headOf(h, ws2)).toBe(2);

    // Writes outside any workspace share the principal's keys with writes in one, both ways.
    const me = await owner.api();
    expectError(await me.post('/v1/workspaces', { name: 'third' }, { idem: memoryKey }), 409, 'idempotency_conflict');
    const createKey = freshKey();
    expect((await me.post('/v1/workspaces', { name: 'third' }, { idem: createKey })).status).toBe(200);
    expectError(
      await api2.post('/v1/namespaces', { parent_id: null, name: 'x' }, { idem: createKey }),
      409,
      'idempotency_conflict',
    );
    expect(await headOf(h, ws2)).toBe(2);
  });

  it('keys are per principal: another actor with the same key executes its own request', async () => {
    const { id: ws, api, owner } = await h.workspace();
    const bob = await h.human({ enroll: false });
    await admit(api, ws, owner, bob, 'admin');
    const bobApi = await bob.api(ws);

    const key = freshKey();
    const mine = await api.post('/v1/namespaces', { parent_id: null, name: 'shared-name' }, { idem: key });
    expect(mine.status).toBe(200);
    const head = await headOf(h, ws);
    const his = await bobApi.post('/v1/namespaces', { parent_id: null, name: 'shared-name' }, { idem: key });
    expect(his.status).toBe(200);
    expect(his.body.namespace.id).not.toBe(mine.body.namespace.id);
    expect(his.body.commit.sequence).toBe(head + 1);
    // Each principal's key replays its own answer; a changed body stays a conflict for each.
    expect((await api.post('/v1/namespaces', { parent_id: null, name: 'shared-name' }, { idem: key })).text).toBe(
      mine.text,
    );
    expect((await bobApi.post('/v1/namespaces', { parent_id: null, name: 'shared-name' }, { idem: key })).text).toBe(
      his.text,
    );
    expectError(
      await bobApi.post('/v1/namespaces', { parent_id: null, name: 'changed' }, { idem: key }),
      409,
      'idempotency_conflict',
    );
    expect(await headOf(h, ws)).toBe(head + 1);
    expect((await storedRecords(h, key)).map((r) => r.principal).sort()).toEqual(
      [`actor:${owner.actorId}`, `actor:${bob.actorId}`].sort(),
    );
  });

  it('10 identical requests in parallel execute once and all answer the same bytes', async () => {
    const { id: ws, api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'facts' })).body.namespace;
    const head = await headOf(h, ws);
    const key = freshKey();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => api.post('/v1/memories', memoryBody(ns.id, 'once'), { idem: key })),
    );
    for (const res of results) expect(res.status, res.text).toBe(200);
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(results[0]?.body.commit.sequence).toBe(head + 1);
    expect(await headOf(h, ws)).toBe(head + 1);
    expect(await commitCount(h, ws)).toBe(head + 1);
    const memories = await h.gateway.ledger.handle.db
      .select()
      .from(schema.memories)
      .where(and(eq(schema.memories.workspaceId, ws), eq(schema.memories.namespaceId, ns.id)));
    expect(memories.map((m) => m.id)).toEqual([results[0]?.body.memory.id]);
    expect(await storedRecords(h, key)).toHaveLength(1);
  });

  it('10 parallel requests with one key and different bodies: one executes, the rest are 409', async () => {
    const { id: ws, api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'facts' })).body.namespace;
    const head = await headOf(h, ws);
    const key = freshKey();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => api.post('/v1/memories', memoryBody(ns.id, `variant ${i}`), { idem: key })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const res of results.filter((r) => r.status !== 200)) expectError(res, 409, 'idempotency_conflict');
    expect(await headOf(h, ws)).toBe(head + 1);
    const winner = ok[0] as CallResult;
    // The winner's body replays its answer.
    const replay = await api.post('/v1/memories', memoryBody(ns.id, winner.body.revision.text), { idem: key });
    expect(replay.text).toBe(winner.text);
  });

  it('a failed request stores nothing: the same key executes once the cause is fixed', async () => {
    const { id: ws, api, owner } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'facts' })).body.namespace;
    const bob = await h.human({ enroll: false });
    await admit(api, ws, owner, bob, 'member');
    await grant(api, ns.id, bob.actorId, ['read']);
    const bobApi = await bob.api(ws);

    const key = freshKey();
    const body = memoryBody(ns.id, 'from bob');
    const head = await headOf(h, ws);
    expectError(await bobApi.post('/v1/memories', body, { idem: key }), 403, 'forbidden');
    expect(await storedRecords(h, key)).toEqual([]);
    expect(await headOf(h, ws)).toBe(head);

    await grant(api, ns.id, bob.actorId, ['read', 'observe']);
    const retry = await bobApi.post('/v1/memories', body, { idem: key });
    expect(retry.status).toBe(200);
    expect(retry.body.commit.sequence).toBe(head + 2); // after the grants commit
    expect(retry.body.revision.text).toBe('from bob');
    expect(await storedRecords(h, key)).toHaveLength(1);

    // An invalid request stores nothing either: the key is then free for a different body.
    const key2 = freshKey();
    expectError(
      await api.post('/v1/memories', memoryBody(ns.id, 'x', { valid_from: 3, valid_to: 2 }), { idem: key2 }),
      400,
      'invalid_input',
    );
    expect(await storedRecords(h, key2)).toEqual([]);
    expect((await api.post('/v1/memories', memoryBody(ns.id, 'x'), { idem: key2 })).status).toBe(200);
  });

  it('evidence is deduplicated per namespace: the same excerpt returns the original and its commit', async () => {
    const { id: ws, api } = await h.workspace();
    const a = (await api.post('/v1/namespaces', { parent_id: null, name: 'a' })).body.namespace;
    const b = (await api.post('/v1/namespaces', { parent_id: null, name: 'b' })).body.namespace;
    const excerpt = 'The meeting moved to Thursday. \u{1F4C5}';
    const first = await api.post('/v1/evidence', evidenceBody(a.id, excerpt, 'mail://1'));
    expect(first.status).toBe(200);
    const head = await headOf(h, ws);
    expect(first.body.commit.sequence).toBe(head);

    // A new key and another locator: still the original evidence and commit, nothing written.
    const dupKey = freshKey();
    const dup = await api.post('/v1/evidence', evidenceBody(a.id, excerpt, 'mail://2'), { idem: dupKey });
    expect(dup.status).toBe(200);
    expect(dup.body).toEqual(first.body);
    expect(dup.body.evidence.source_locator).toBe('mail://1');
    expect(await headOf(h, ws)).toBe(head);
    // And its own key replays that answer.
    expect((await api.post('/v1/evidence', evidenceBody(a.id, excerpt, 'mail://2'), { idem: dupKey })).text).toBe(
      dup.text,
    );

    const elsewhere = await api.post('/v1/evidence', evidenceBody(b.id, excerpt, 'mail://1'));
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.body.evidence.id).not.toBe(first.body.evidence.id);
    expect(elsewhere.body.evidence.namespace_id).toBe(b.id);
    expect(elsewhere.body.evidence.excerpt_sha256).toBe(first.body.evidence.excerpt_sha256);
    expect(elsewhere.body.commit.sequence).toBe(head + 1);
    expect(await headOf(h, ws)).toBe(head + 1);
  });
});
