import { type CallResult, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';
import { expectError, expectShape } from './shapes';

/** The operations of interface.md's Endpoints table plus the two core ones of decisions §3. */
const CORE_OPERATIONS = [
  'workspaces.list',
  'workspaces.create',
  'namespaces.list',
  'namespaces.create',
  'namespaces.get',
  'namespaces.update',
  'namespaces.grants.put',
  'evidence.create',
  'evidence.get',
  'evidence.verify',
  'memories.create',
  'memories.get',
  'memories.history',
  'me.get',
  'workspaces.members.put',
];

const ALL_SCOPES = ['svc:read', 'svc:observe', 'svc:verify', 'svc:correct', 'svc:forget', 'svc:admin'];

describe.each(DRIVERS)('exact answers (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  it('answers each of the 15 core operations with exactly its catalog fields, private and uncached', async () => {
    const covered = new Set<string>();
    // biome-ignore lint/suspicious/noExplicitAny: answers are checked against the catalog schemas.
    const ok = (res: CallResult, operation: string): any => {
      covered.add(operation);
      const body = expectShape(res, operation);
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      return body;
    };

    const alice = await h.human();
    const home = await alice.api();
    expect(ok(await home.get('/v1/me'), 'me.get')).toEqual({
      actor: { id: alice.actorId, issuer: h.issuer.sessionIssuer, subject: alice.subject },
      caller_kind: 'session',
      workspace_id: null,
      scopes: ALL_SCOPES,
    });
    const { workspace } = ok(await home.post('/v1/workspaces', { name: 'Exact' }), 'workspaces.create');
    expect(workspace).toEqual({ id: expect.stringMatching(/^ws_/), name: 'Exact', created_at: expect.any(Number) });
    const api = home.in(workspace.id);
    expect(ok(await api.get('/v1/me'), 'me.get').workspace_id).toBe(workspace.id);
    expect(ok(await home.get('/v1/workspaces'), 'workspaces.list')).toEqual({
      workspaces: [workspace],
      next_cursor: null,
      enrollment: { can_create_workspace: true, policy: 'admin_managed_pilot' },
    });

    // Commits are per workspace, gap-free: its creation was 1, each write takes the next.
    let sequence = 1;
    let last = workspace.created_at as number;
    const nextCommit = (commit: { sequence: number; recorded_at: number }) => {
      sequence += 1;
      expect(commit.sequence).toBe(sequence);
      expect(commit.recorded_at).toBeGreaterThanOrEqual(last);
      last = commit.recorded_at;
      return commit.recorded_at;
    };

    const bob = await h.human({ enroll: false });
    const members = [
      { actor_id: alice.actorId, role: 'admin' },
      { actor_id: bob.actorId, role: 'member' },
    ];
    const put = ok(await api.put(`/v1/workspaces/${workspace.id}/members`, { members }), 'workspaces.members.put');
    expect(put).toEqual({ workspace_id: workspace.id, members, commit: put.commit });
    nextCommit(put.commit);

    const root = ok(await api.post('/v1/namespaces', { parent_id: null, name: 'root' }), 'namespaces.create');
    const rootAt = nextCommit(root.commit);
    expect(root.namespace).toEqual({
      id: expect.any(String),
      workspace_id: workspace.id,
      parent_id: null,
      name: 'root',
      display_path: ['root'],
      created_at: rootAt,
      updated_at: rootAt,
    });
    const child = ok(
      await api.post('/v1/namespaces', { parent_id: root.namespace.id, name: 'child' }),
      'namespaces.create',
    );
    const childAt = nextCommit(child.commit);
    expect(child.namespace).toMatchObject({ parent_id: root.namespace.id, display_path: ['root', 'child'] });
    expect(ok(await api.get(`/v1/namespaces/${child.namespace.id}`), 'namespaces.get')).toEqual({
      namespace: child.namespace,
    });
    const renamed = ok(await api.patch(`/v1/namespaces/${child.namespace.id}`, { name: 'kid' }), 'namespaces.update');
    const renamedAt = nextCommit(renamed.commit);
    const kid = {
      ...child.namespace,
      name: 'kid',
      display_path: ['root', 'kid'],
      created_at: childAt,
      updated_at: renamedAt,
    };
    expect(renamed.namespace).toEqual(kid);
    expect(ok(await api.get('/v1/namespaces'), 'namespaces.list')).toEqual({
      namespaces: [root.namespace, kid],
      next_cursor: null,
    });
    expect(ok(await api.get('/v1/namespaces', { query: { parent_id: root.namespace.id } }), 'namespaces.list')).toEqual(
      {
        namespaces: [kid],
        next_cursor: null,
      },
    );

    const grants = [
      { target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read', 'observe'], inherit: true },
    ];
    const granted = ok(
      await api.put(`/v1/namespaces/${root.namespace.id}/grants`, { grants }),
      'namespaces.grants.put',
    );
    expect(granted).toEqual({ namespace_id: root.namespace.id, grants, commit: granted.commit });
    nextCommit(granted.commit);

    const excerpt = 'Ana moved to Porto in May.';
    const created = ok(
      await api.post('/v1/evidence', {
        namespace_id: kid.id,
        source_locator: 'mail://inbox/42',
        content_root_sha256: sha256Hex(excerpt),
        excerpt,
      }),
      'evidence.create',
    );
    const evidenceAt = nextCommit(created.commit);
    expect(created.evidence).toEqual({
      id: expect.any(String),
      namespace_id: kid.id,
      source_locator: 'mail://inbox/42',
      content_root_sha256: sha256Hex(excerpt),
      excerpt,
      excerpt_sha256: sha256Hex(excerpt),
      recorder_actor_id: alice.actorId,
      recorded_at: evidenceAt,
    });
    const verified = ok(
      await api.post(`/v1/evidence/${created.evidence.id}/verifications`, {
        expected_content_root_sha256: sha256Hex(excerpt),
        expected_excerpt_sha256: sha256Hex(excerpt),
        verdict: 'verified',
      }),
      'evidence.verify',
    );
    expect(verified.verification).toEqual({
      id: expect.any(String),
      evidence_id: created.evidence.id,
      content_root_sha256: sha256Hex(excerpt),
      excerpt_sha256: sha256Hex(excerpt),
      verdict: 'verified',
      verifier_actor_id: alice.actorId,
      recorded_at: nextCommit(verified.commit),
    });
    expect(ok(await api.get(`/v1/evidence/${created.evidence.id}`), 'evidence.get')).toEqual({
      evidence: created.evidence,
      verifications: [verified.verification],
      next_cursor: null,
    });

    const text = 'Ana lives in Porto.';
    const memory = ok(
      await api.post('/v1/memories', {
        namespace_id: kid.id,
        kind: 'claim',
        text,
        valid_from: 10,
        valid_to: 20,
        evidence_ids: [created.evidence.id],
      }),
      'memories.create',
    );
    const memoryAt = nextCommit(memory.commit);
    expect(memory.memory).toEqual({
      id: expect.any(String),
      namespace_id: kid.id,
      kind: 'claim',
      generation: 1,
      key: null,
    });
    expect(memory.revision).toEqual({
      id: expect.any(String),
      memory_id: memory.memory.id,
      namespace_id: kid.id,
      kind: 'claim',
      generation: 1,
      text,
      status: 'asserted',
      valid_from: 10,
      valid_to: 20,
      recorded_at: memoryAt,
      recorded_until: null,
      evidence_ids: [created.evidence.id],
      support_revision_ids: [],
      attestation: {
        id: expect.any(String),
        claim_text: text,
        claim_sha256: sha256Hex(text),
        evidence_ids: [created.evidence.id],
        verification_ids: [verified.verification.id],
        verifier_actor_id: alice.actorId,
        recorded_at: memoryAt,
      },
      invalidation: null,
    });
    // Bob (read+observe, no verify) writes a candidate that leans on Alice's revision.
    const bobApi = await bob.api(workspace.id);
    const episode = ok(
      await bobApi.post('/v1/memories', {
        namespace_id: kid.id,
        kind: 'episode',
        text: 'Saw Ana in Porto.',
        valid_from: 12,
        evidence_ids: [created.evidence.id],
        support_revision_ids: [memory.revision.id],
      }),
      'memories.create',
    );
    nextCommit(episode.commit);
    expect(episode.revision).toMatchObject({
      kind: 'episode',
      status: 'candidate',
      valid_to: null,
      attestation: null,
      support_revision_ids: [memory.revision.id],
    });

    const full = ok(
      await api.get(`/v1/memories/${memory.memory.id}`, { query: { as_of: 15, include_evidence: true } }),
      'memories.get',
    );
    expect(full).toEqual({
      view: {
        memory: memory.memory,
        revision: memory.revision,
        evidence: [created.evidence],
        verifications: [verified.verification],
        stale: false,
      },
      as_of: 15,
      known_at: full.known_at,
    });
    expect(full.known_at).toBeGreaterThanOrEqual(memoryAt);
    const bare = ok(
      await bobApi.get(`/v1/memories/${memory.memory.id}`, { query: { as_of: 10, known_at: memoryAt } }),
      'memories.get',
    );
    expect(bare).toEqual({
      view: { memory: memory.memory, revision: memory.revision, evidence: [], verifications: [], stale: false },
      as_of: 10,
      known_at: memoryAt,
    });
    // Half-open validity: valid at 10, not at 20; unknown before its commit.
    expectError(await api.get(`/v1/memories/${memory.memory.id}`, { query: { as_of: 20 } }), 'not_found');
    expectError(
      await api.get(`/v1/memories/${memory.memory.id}`, { query: { as_of: 15, known_at: rootAt } }),
      'not_found',
    );
    expect(ok(await api.get(`/v1/memories/${memory.memory.id}/history`), 'memories.history')).toEqual({
      revisions: [memory.revision],
      next_cursor: null,
    });

    const oauth = await h.issuer.accessToken(`client-${alice.subject}`, 'svc:read');
    expect(ok(await h.api.get('/v1/me', { token: oauth }), 'me.get')).toMatchObject({
      caller_kind: 'oauth',
      workspace_id: null,
      scopes: ['svc:read'],
    });

    expect([...covered].sort()).toEqual([...CORE_OPERATIONS].sort());
  });

  it('round-trips U+0000 and other rare characters exactly in names, locators, excerpts and text', async () => {
    const rare = '\u0000\uFEFF\u2028\u{1F600}\uFFFF\u0000';
    const owner = await h.human();
    const home = await owner.api();
    const wsName = `nul\u0000name${rare}`;
    const { workspace } = expectShape(await home.post('/v1/workspaces', { name: wsName }), 'workspaces.create');
    expect(workspace.name).toBe(wsName);
    const listed = expectShape(await home.get('/v1/workspaces'), 'workspaces.list');
    expect(listed.workspaces.map((w: { name: string }) => w.name)).toEqual([wsName]);

    const api = home.in(workspace.id);
    const names = ['a\u0000b', '\u0000', 'a', `a${rare}`];
    const parent = expectShape(
      await api.post('/v1/namespaces', { parent_id: null, name: names[0] }),
      'namespaces.create',
    );
    const nulChild = expectShape(
      await api.post('/v1/namespaces', { parent_id: parent.namespace.id, name: names[1] }),
      'namespaces.create',
    );
    expect(nulChild.namespace.display_path).toEqual([names[0], names[1]]);
    for (const name of names.slice(2)) {
      expectShape(await api.post('/v1/namespaces', { parent_id: null, name }), 'namespaces.create');
    }
    const read = expectShape(await api.get(`/v1/namespaces/${nulChild.namespace.id}`), 'namespaces.get');
    expect(read.namespace.name).toBe('\u0000');
    expect(read.namespace.display_path).toEqual(['a\u0000b', '\u0000']);
    const all = expectShape(await api.get('/v1/namespaces'), 'namespaces.list');
    // Display-path order, NUL included: a prefix first, a parent before its children.
    expect(all.namespaces.map((n: { display_path: string[] }) => n.display_path)).toEqual([
      ['a'],
      ['a\u0000b'],
      ['a\u0000b', '\u0000'],
      [`a${rare}`],
    ]);

    const locator = `file:///tmp/a\u0000b${rare}`;
    const excerpt = `\u0000head\u0000tail${rare}`;
    const evidence = expectShape(
      await api.post('/v1/evidence', {
        namespace_id: parent.namespace.id,
        source_locator: locator,
        content_root_sha256: sha256Hex(excerpt),
        excerpt,
      }),
      'evidence.create',
    );
    expect(evidence.evidence.excerpt_sha256).toBe(sha256Hex(Buffer.from(excerpt, 'utf8')));
    const evidenceRead = expectShape(await api.get(`/v1/evidence/${evidence.evidence.id}`), 'evidence.get');
    expect(evidenceRead.evidence.source_locator).toBe(locator);
    expect(evidenceRead.evidence.excerpt).toBe(excerpt);

    for (const text of ['\u0000', `x\u0000y${rare}`]) {
      const memory = expectShape(
        await api.post('/v1/memories', { namespace_id: parent.namespace.id, kind: 'procedure', text, valid_from: 0 }),
        'memories.create',
      );
      expect(memory.revision.text).toBe(text);
      const got = expectShape(await api.get(`/v1/memories/${memory.memory.id}`), 'memories.get');
      expect(got.view.revision.text).toBe(text);
      const history = expectShape(await api.get(`/v1/memories/${memory.memory.id}/history`), 'memories.history');
      expect(history.revisions[0].text).toBe(text);
    }
  });

  it('reads times back exactly: valid_from, valid_to, as_of and known_at', async () => {
    const { api } = await h.workspace();
    const ns = expectShape(await api.post('/v1/namespaces', { parent_id: null, name: 'times' }), 'namespaces.create');
    const times = [0, -1.5, 253402300799.99997, 1700000000.123456, 0.1, -62135596799];
    for (const t of times) {
      const open = expectShape(
        await api.post('/v1/memories', {
          namespace_id: ns.namespace.id,
          kind: 'claim',
          text: `from ${t}`,
          valid_from: t,
        }),
        'memories.create',
      );
      expect(open.revision.valid_from).toBe(t);
      const res = await api.get(`/v1/memories/${open.memory.id}`, { query: { as_of: t } });
      const read = expectShape(res, 'memories.get');
      expect(read.view.revision.valid_from).toBe(t);
      expect(read.view.revision.valid_to).toBeNull();
      expect(read.as_of).toBe(t);
      expect(read.view.revision.recorded_at).toBe(open.commit.recorded_at);
      expect(res.text).toContain(`"valid_from":${JSON.stringify(t)}`);

      const start = t - 1;
      const closed = expectShape(
        await api.post('/v1/memories', {
          namespace_id: ns.namespace.id,
          kind: 'claim',
          text: `until ${t}`,
          valid_from: start,
          valid_to: t,
        }),
        'memories.create',
      );
      expect(closed.revision.valid_to).toBe(t);
      const during = expectShape(
        await api.get(`/v1/memories/${closed.memory.id}`, { query: { as_of: start } }),
        'memories.get',
      );
      expect(during.view.revision.valid_from).toBe(start);
      expect(during.view.revision.valid_to).toBe(t);
      expect(during.as_of).toBe(start);
      expectError(await api.get(`/v1/memories/${closed.memory.id}`, { query: { as_of: t } }), 'not_found');
      const history = expectShape(await api.get(`/v1/memories/${closed.memory.id}/history`), 'memories.history');
      expect(history.revisions[0].valid_to).toBe(t);

      // known_at is echoed exactly: far ahead it sees the memory; at or before 0 it did not exist yet.
      if (t >= 253402300799) {
        const later = expectShape(
          await api.get(`/v1/memories/${open.memory.id}`, { query: { as_of: t, known_at: t } }),
          'memories.get',
        );
        expect(later.known_at).toBe(t);
        const historyLater = expectShape(
          await api.get(`/v1/memories/${open.memory.id}/history`, { query: { known_at: t } }),
          'memories.history',
        );
        expect(historyLater.revisions).toHaveLength(1);
      } else if (t <= 0.1) {
        expectError(await api.get(`/v1/memories/${open.memory.id}`, { query: { as_of: t, known_at: t } }), 'not_found');
      }
    }
  });
});
