import crypto from 'node:crypto';
import { OPERATIONS } from '@tms/catalog';
import { type ApiClient, type CallOptions, type CallResult, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, type Human, startHarness } from './harness';

/**
 * Object-level authorization: an id the caller may not read must answer exactly like an id that
 * does not exist. Every operation that takes an id (in the path or in the body) is one row of
 * the table below; each row is probed by
 *   - a member of the workspace without any capability on the target's namespace, and
 *   - the admin of another workspace, selecting its own workspace and naming the foreign id,
 * comparing the answer for the real id with the answer for an absent id of the same shape,
 * byte for byte (same X-Request-Id) and header for header. A control call by the target
 * workspace's owner proves that each request is otherwise valid (200).
 */

type TargetKind =
  | 'namespace'
  | 'evidence'
  | 'memory'
  | 'revision'
  | 'workspace'
  | 'installation'
  | 'credential'
  | 'webhook';

/** The resources in workspace W1 that the probers must not reach. */
interface Targets {
  namespace: string;
  evidence: string;
  memory: string;
  revision: string;
  workspace: string;
  installation: string;
  /** A service key of W1. */
  credential: string;
  webhook: string;
  contentRootSha256: string;
  excerptSha256: string;
  /** A verified verification of `evidence`. */
  verification: string;
  /** A second candidate memory in the secret namespace, for the attestation control. */
  attestable: string;
}

/** What a caller brings to a row: its own actor id and a namespace where it holds everything. */
interface Caller {
  self: string;
  own: string;
  /** A memory (generation 1) in `own`. */
  ownMemory: string;
  /** A candidate memory in `own` that the caller may attest. */
  ownAttestable: string;
  /** Members to keep when the caller replaces a member list (its own workspace's, if any). */
  members: { actor_id: string; role: 'admin' | 'member' }[];
}

interface Row {
  operation: string;
  kind: TargetKind;
  /**
   * No member probe: members of the target workspace can see the workspace itself, and
   * workspace-admin operations refuse a member (403) before any id is looked up.
   */
  memberProbe?: false;
  /** The id the owner's control call uses, when it must differ from the probed one. */
  controlId?: (t: Targets) => string;
  call(api: ApiClient, id: string, caller: Caller, t: Targets, options: CallOptions): Promise<CallResult>;
}

const EXCERPT = 'The launch moved to March.';

const ROWS: Row[] = [
  {
    operation: 'namespaces.get',
    kind: 'namespace',
    call: (api, id, _c, _t, o) => api.get(`/v1/namespaces/${id}`, o),
  },
  {
    operation: 'namespaces.update',
    kind: 'namespace',
    call: (api, id, _c, _t, o) => api.patch(`/v1/namespaces/${id}`, { name: 'renamed' }, o),
  },
  {
    operation: 'namespaces.grants.put',
    kind: 'namespace',
    call: (api, id, c, _t, o) =>
      api.put(
        `/v1/namespaces/${id}/grants`,
        { grants: [{ target: { kind: 'actor', actor_id: c.self }, capabilities: ['admin'], inherit: true }] },
        o,
      ),
  },
  {
    operation: 'namespaces.grants.list',
    kind: 'namespace',
    call: (api, id, _c, _t, o) => api.get(`/v1/namespaces/${id}/grants`, o),
  },
  {
    operation: 'namespaces.create (parent_id)',
    kind: 'namespace',
    call: (api, id, _c, _t, o) => api.post('/v1/namespaces', { parent_id: id, name: 'probe' }, o),
  },
  {
    operation: 'namespaces.list (parent_id)',
    kind: 'namespace',
    call: (api, id, _c, _t, o) => api.get('/v1/namespaces', { ...o, query: { parent_id: id } }),
  },
  {
    operation: 'evidence.create (namespace_id)',
    kind: 'namespace',
    call: (api, id, _c, _t, o) =>
      api.post(
        '/v1/evidence',
        {
          namespace_id: id,
          source_locator: 'file:///probe.txt',
          content_root_sha256: sha256Hex('probe excerpt'),
          excerpt: 'probe excerpt',
        },
        o,
      ),
  },
  {
    operation: 'memories.create (namespace_id)',
    kind: 'namespace',
    call: (api, id, _c, _t, o) =>
      api.post('/v1/memories', { namespace_id: id, kind: 'claim', text: 'probe', valid_from: 0 }, o),
  },
  {
    operation: 'evidence.get',
    kind: 'evidence',
    call: (api, id, _c, _t, o) => api.get(`/v1/evidence/${id}`, o),
  },
  {
    operation: 'evidence.verify',
    kind: 'evidence',
    call: (api, id, _c, t, o) =>
      api.post(
        `/v1/evidence/${id}/verifications`,
        {
          expected_content_root_sha256: t.contentRootSha256,
          expected_excerpt_sha256: t.excerptSha256,
          verdict: 'verified',
        },
        o,
      ),
  },
  {
    operation: 'memories.create (evidence_ids)',
    kind: 'evidence',
    call: (api, id, c, _t, o) =>
      api.post(
        '/v1/memories',
        { namespace_id: c.own, kind: 'claim', text: 'cites', valid_from: 0, evidence_ids: [id] },
        o,
      ),
  },
  {
    operation: 'memories.get',
    kind: 'memory',
    call: (api, id, _c, _t, o) => api.get(`/v1/memories/${id}`, o),
  },
  {
    operation: 'memories.get (include_evidence, known_at)',
    kind: 'memory',
    call: (api, id, _c, _t, o) =>
      api.get(`/v1/memories/${id}`, { ...o, query: { include_evidence: true, known_at: 4102444800 } }),
  },
  {
    operation: 'ledger.proof',
    kind: 'evidence',
    call: (api, id, _c, _t, o) => api.get(`/v1/ledger/proofs/${id}`, o),
  },
  {
    operation: 'ledger.proof (revision)',
    kind: 'revision',
    call: (api, id, _c, _t, o) => api.get(`/v1/ledger/proofs/${id}`, o),
  },
  {
    operation: 'memories.history',
    kind: 'memory',
    call: (api, id, _c, _t, o) => api.get(`/v1/memories/${id}/history`, o),
  },
  {
    operation: 'memories.create (support_revision_ids)',
    kind: 'revision',
    call: (api, id, c, _t, o) =>
      api.post(
        '/v1/memories',
        { namespace_id: c.own, kind: 'claim', text: 'supported', valid_from: 0, support_revision_ids: [id] },
        o,
      ),
  },
  {
    operation: 'memories.list (namespace_id)',
    kind: 'namespace',
    call: (api, id, _c, _t, o) => api.get('/v1/memories', { ...o, query: { namespace_id: id } }),
  },
  {
    operation: 'memories.attest',
    kind: 'memory',
    controlId: (t) => t.attestable,
    call: (api, id, _c, t, o) =>
      api.post(
        `/v1/memories/${id}/attestations`,
        { expected_generation: 1, evidence_ids: [t.evidence], verification_ids: [t.verification] },
        o,
      ),
  },
  {
    operation: 'memories.attest (evidence_ids)',
    kind: 'evidence',
    call: (api, id, c, t, o) =>
      api.post(
        `/v1/memories/${c.ownAttestable}/attestations`,
        { expected_generation: 1, evidence_ids: [id], verification_ids: [t.verification] },
        o,
      ),
  },
  {
    operation: 'memories.correct',
    kind: 'memory',
    call: (api, id, _c, _t, o) =>
      api.post(`/v1/memories/${id}/corrections`, { expected_generation: 1, text: 'corrected', dry_run: true }, o),
  },
  {
    operation: 'memories.correct (evidence_ids)',
    kind: 'evidence',
    call: (api, id, c, _t, o) =>
      api.post(
        `/v1/memories/${c.ownMemory}/corrections`,
        { expected_generation: 1, evidence_ids: [id], dry_run: true },
        o,
      ),
  },
  {
    operation: 'memories.correct (support_revision_ids)',
    kind: 'revision',
    call: (api, id, c, _t, o) =>
      api.post(
        `/v1/memories/${c.ownMemory}/corrections`,
        { expected_generation: 1, support_revision_ids: [id], dry_run: true },
        o,
      ),
  },
  {
    operation: 'memories.forget (retract)',
    kind: 'memory',
    call: (api, id, _c, _t, o) =>
      api.post(`/v1/memories/${id}/forget`, { mode: 'retract', expected_generation: 1, dry_run: true }, o),
  },
  {
    operation: 'memories.forget (purge)',
    kind: 'memory',
    call: (api, id, _c, _t, o) =>
      api.post(`/v1/memories/${id}/forget`, { mode: 'purge', expected_generation: 1, dry_run: true }, o),
  },
  {
    operation: 'evidence.forget',
    kind: 'evidence',
    call: (api, id, _c, _t, o) => api.post(`/v1/evidence/${id}/forget`, { dry_run: true }, o),
  },
  {
    operation: 'workspaces.members.put',
    kind: 'workspace',
    memberProbe: false,
    call: (api, id, c, _t, o) => {
      const members = new Map(c.members.map((m) => [m.actor_id, m]));
      if (!members.has(c.self)) members.set(c.self, { actor_id: c.self, role: 'admin' });
      return api.put(`/v1/workspaces/${id}/members`, { members: [...members.values()] }, { ...o, workspace: null });
    },
  },
  {
    operation: 'installations.revoke',
    kind: 'installation',
    memberProbe: false,
    call: (api, id, _c, _t, o) => api.post(`/v1/installations/${id}/revoke`, {}, o),
  },
  {
    operation: 'credentials.revoke',
    kind: 'credential',
    memberProbe: false,
    call: (api, id, _c, _t, o) => api.post(`/v1/credentials/${id}/revoke`, {}, o),
  },
  {
    operation: 'webhooks.delete',
    kind: 'webhook',
    memberProbe: false,
    call: (api, id, _c, _t, o) => api.delete(`/v1/webhooks/${id}`, o),
  },
];

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** An id of the same shape (prefix and length) that names nothing. */
function absentLike(id: string): string {
  const cut = id.indexOf('_') + 1;
  const rest = [...crypto.randomBytes(id.length - cut)].map((b) => ALPHABET[b & 31]).join('');
  return id.slice(0, cut) + rest;
}

/** Everything a client can observe except the Date header. */
function observable(res: CallResult) {
  return {
    status: res.status,
    text: res.text,
    headers: Object.fromEntries([...res.headers.entries()].filter(([name]) => name !== 'date')),
  };
}

const NOT_FOUND = {
  code: 'not_found',
  message: 'The resource was not found.',
  status: 404,
  retryable: false,
  retry_after_seconds: null,
};

describe.each(DRIVERS)('object-level authorization (%s)', (driver) => {
  let h: Harness;
  let t: Targets;
  let owner: { api: ApiClient; caller: Caller };
  let member: { api: ApiClient; caller: Caller; human: Human };
  let outsider: { api: ApiClient; caller: Caller };

  beforeAll(async () => {
    h = await startHarness({ driver });

    async function memory(api: ApiClient, namespaceId: string, extra: object = {}) {
      const res = await api.post('/v1/memories', {
        namespace_id: namespaceId,
        kind: 'claim',
        text: `memory ${crypto.randomBytes(3).toString('hex')}`,
        valid_from: 0,
        ...extra,
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.revision.status).toBe('candidate');
      return res.body as { memory: { id: string }; revision: { id: string } };
    }

    // W1: the owner's secrets, and a namespace of the member's own.
    const w1 = await h.workspace();
    const secret = (await w1.api.post('/v1/namespaces', { parent_id: null, name: 'secret' })).body.namespace;
    const mine = (await w1.api.post('/v1/namespaces', { parent_id: null, name: 'mine' })).body.namespace;
    const evidence = (
      await w1.api.post('/v1/evidence', {
        namespace_id: secret.id,
        source_locator: 'file:///minutes.txt',
        content_root_sha256: sha256Hex(EXCERPT),
        excerpt: EXCERPT,
      })
    ).body.evidence;
    const created = await memory(w1.api, secret.id, { evidence_ids: [evidence.id] });
    const attestable = await memory(w1.api, secret.id, { evidence_ids: [evidence.id] });
    const verified = await w1.api.post(`/v1/evidence/${evidence.id}/verifications`, {
      expected_content_root_sha256: evidence.content_root_sha256,
      expected_excerpt_sha256: evidence.excerpt_sha256,
      verdict: 'verified',
    });
    expect(verified.status, verified.text).toBe(200);

    const bob = await h.human({ enroll: false });
    const w1Members = [
      { actor_id: w1.owner.actorId, role: 'admin' as const },
      { actor_id: bob.actorId, role: 'member' as const },
    ];
    expect((await w1.api.put(`/v1/workspaces/${w1.id}/members`, { members: w1Members })).status).toBe(200);
    const granted = await w1.api.put(`/v1/namespaces/${mine.id}/grants`, {
      grants: [{ target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['admin'], inherit: true }],
    });
    expect(granted.status, granted.text).toBe(200);
    const bobApi = await bob.api(w1.id);

    // W2: the outsider is admin of its own workspace, and so holds admin on everything there.
    const w2 = await h.workspace();
    const own = (await w2.api.post('/v1/namespaces', { parent_id: null, name: 'own' })).body.namespace;

    const installation = (await w1.api.post('/v1/installations', { name: 'crm' })).body.installation;
    const serviceKey = (
      await w1.api.post('/v1/credentials', { kind: 'service_key', name: 'job', capabilities: ['read'] })
    ).body.credential;

    const webhook = (await w1.api.post('/v1/webhooks', { url: 'https://hooks.example.com/w1' })).body.webhook;

    t = {
      webhook: webhook.id,
      installation: installation.id,
      credential: serviceKey.id,
      namespace: secret.id,
      evidence: evidence.id,
      memory: created.memory.id,
      revision: created.revision.id,
      workspace: w1.id,
      contentRootSha256: evidence.content_root_sha256,
      excerptSha256: evidence.excerpt_sha256,
      verification: verified.body.verification.id,
      attestable: attestable.memory.id,
    };
    owner = {
      api: w1.api,
      caller: {
        self: w1.owner.actorId,
        own: mine.id,
        ownMemory: (await memory(w1.api, mine.id)).memory.id,
        ownAttestable: (await memory(w1.api, mine.id)).memory.id,
        members: w1Members,
      },
    };
    member = {
      api: bobApi,
      human: bob,
      caller: {
        self: bob.actorId,
        own: mine.id,
        ownMemory: (await memory(bobApi, mine.id)).memory.id,
        ownAttestable: (await memory(bobApi, mine.id)).memory.id,
        members: [],
      },
    };
    outsider = {
      api: w2.api,
      caller: {
        self: w2.owner.actorId,
        own: own.id,
        ownMemory: (await memory(w2.api, own.id)).memory.id,
        ownAttestable: (await memory(w2.api, own.id)).memory.id,
        members: [{ actor_id: w2.owner.actorId, role: 'admin' }],
      },
    };
  });
  afterAll(() => h?.close());

  async function expectIndistinguishable(row: Row, prober: { api: ApiClient; caller: Caller }, label: string) {
    const real = t[row.kind];
    const absent = absentLike(real);
    expect(absent).not.toBe(real);
    expect(absent.length).toBe(real.length);
    const requestId = `bola-${crypto.randomBytes(6).toString('hex')}`;
    const options = { headers: { 'x-request-id': requestId } };
    const forReal = await row.call(prober.api, real, prober.caller, t, options);
    const forAbsent = await row.call(prober.api, absent, prober.caller, t, options);
    expect(forReal.body, `${label} ${row.operation}: ${forReal.text}`).toEqual({
      error: { ...NOT_FOUND, request_id: requestId },
    });
    expect(observable(forReal), `${label} ${row.operation}`).toEqual(observable(forAbsent));
  }

  it.each(ROWS.map((row) => [row.operation, row] as const))(
    '%s: an unreadable or foreign id answers exactly like an absent one',
    async (_name, row) => {
      if (row.memberProbe !== false) await expectIndistinguishable(row, member, 'member without capability');
      await expectIndistinguishable(row, outsider, 'admin of another workspace');
      // Control: the same request by the owner succeeds, so the probes were refused for the id alone.
      const control = await row.call(owner.api, row.controlId?.(t) ?? t[row.kind], owner.caller, t, {});
      expect(control.status, `control ${row.operation}: ${control.text}`).toBe(200);
    },
  );

  it('the table covers every operation that takes an id in its path', () => {
    const covered = new Set(ROWS.map((row) => row.operation.split(' ')[0]));
    const withPathId = OPERATIONS.filter((op) => op.path.includes('{id}')).map((op) => op.name);
    expect(withPathId.length).toBeGreaterThan(10);
    expect(withPathId.filter((name) => !covered.has(name))).toEqual([]);
  });

  it('a readable memory never expands into evidence the caller cannot read', async () => {
    // The owner writes, in the member's namespace, a memory citing the secret evidence.
    const cited = await owner.api.post('/v1/memories', {
      namespace_id: owner.caller.own,
      kind: 'claim',
      text: 'cites a secret',
      valid_from: 0,
      evidence_ids: [t.evidence],
    });
    expect(cited.status, cited.text).toBe(200);
    const asOwner = await owner.api.get(`/v1/memories/${cited.body.memory.id}`, { query: { include_evidence: true } });
    expect(asOwner.body.view.evidence.map((e: { id: string }) => e.id)).toEqual([t.evidence]);
    const asMember = await member.api.get(`/v1/memories/${cited.body.memory.id}`, {
      query: { include_evidence: true },
    });
    expect(asMember.status, asMember.text).toBe(200);
    expect(asMember.body.view.revision.evidence_ids).toEqual([t.evidence]);
    expect(asMember.body.view.evidence).toEqual([]);
    expect(asMember.body.view.verifications).toEqual([]);
    expect(asMember.text).not.toContain(EXCERPT);
  });

  it('the member is not locked out altogether: the same operations work in its own namespace', async () => {
    const api = member.api;
    const own = member.caller.own;
    expect((await api.get(`/v1/namespaces/${own}`)).status).toBe(200);
    const evidence = await api.post('/v1/evidence', {
      namespace_id: own,
      source_locator: 'file:///own.txt',
      content_root_sha256: sha256Hex('own excerpt'),
      excerpt: 'own excerpt',
    });
    expect(evidence.status, evidence.text).toBe(200);
    const memory = await api.post('/v1/memories', {
      namespace_id: own,
      kind: 'claim',
      text: 'own',
      valid_from: 0,
      evidence_ids: [evidence.body.evidence.id],
    });
    expect(memory.status, memory.text).toBe(200);
    expect((await api.get(`/v1/memories/${memory.body.memory.id}/history`)).status).toBe(200);
    expect((await api.get(`/v1/evidence/${evidence.body.evidence.id}`)).status).toBe(200);
  });
});
