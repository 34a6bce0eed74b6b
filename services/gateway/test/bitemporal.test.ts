import { MIN_TIMESTAMP, TIMESTAMP_LIMIT } from '@tms/catalog';
import { type ApiClient, type CallResult, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';

/** The last whole second a time may name (year 9999). */
const LAST_SECOND = TIMESTAMP_LIMIT - 1;

/** The largest double below `x` (x > 0): the instant just before. */
function justBefore(x: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) - 1n);
  return view.getFloat64(0);
}

async function ok(res: Promise<CallResult>): Promise<CallResult> {
  const done = await res;
  expect(done.status, done.text).toBe(200);
  return done;
}

function expectNotFound(res: CallResult) {
  expect(res.status).toBe(404);
  expect(res.body.error.code).toBe('not_found');
}

async function createEvidence(api: ApiClient, namespaceId: string, excerpt: string) {
  const res = await ok(
    api.post('/v1/evidence', {
      namespace_id: namespaceId,
      source_locator: `doc://${sha256Hex(excerpt).slice(0, 8)}`,
      content_root_sha256: sha256Hex(excerpt),
      excerpt,
    }),
  );
  return res.body.evidence as { id: string; content_root_sha256: string; excerpt_sha256: string; recorded_at: number };
}

async function verify(
  api: ApiClient,
  evidence: { id: string; content_root_sha256: string; excerpt_sha256: string },
  verdict: 'verified' | 'rejected',
) {
  const res = await ok(
    api.post(`/v1/evidence/${evidence.id}/verifications`, {
      expected_content_root_sha256: evidence.content_root_sha256,
      expected_excerpt_sha256: evidence.excerpt_sha256,
      verdict,
    }),
  );
  return res.body as {
    verification: { id: string; recorded_at: number };
    commit: { sequence: number; recorded_at: number };
  };
}

async function createMemory(api: ApiClient, namespaceId: string, text: string, extra: object = {}) {
  const res = await api.post('/v1/memories', {
    namespace_id: namespaceId,
    kind: 'claim',
    text,
    valid_from: 0,
    ...extra,
  });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe.each(DRIVERS)('bitemporal reads of created memories (%s)', (driver) => {
  let h: Harness;
  let ws: string;
  let api: ApiClient;
  let ownerActorId: string;
  let ns: { id: string };
  beforeAll(async () => {
    h = await startHarness({ driver });
    const workspace = await h.workspace();
    ws = workspace.id;
    api = workspace.api;
    ownerActorId = workspace.owner.actorId;
    ns = (await ok(api.post('/v1/namespaces', { parent_id: null, name: 'facts' }))).body.namespace;
  });
  afterAll(() => h?.close());

  it('defaults as_of and known_at to now and echoes them', async () => {
    const created = await createMemory(api, ns.id, 'Ana lives in Lisbon.');
    const res = await ok(api.get(`/v1/memories/${created.memory.id}`));
    expect(Object.keys(res.body).sort()).toEqual(['as_of', 'known_at', 'view']);
    expect(typeof res.body.known_at).toBe('number');
    expect(res.body.as_of).toBe(res.body.known_at);
    expect(res.body.known_at).toBeGreaterThanOrEqual(created.commit.recorded_at);
    expect(res.body.view.revision).toEqual(created.revision);
    expect(res.body.view.memory).toEqual({
      id: created.memory.id,
      namespace_id: ns.id,
      kind: 'claim',
      generation: 1,
      key: null,
    });
    expect(created.memory.generation).toBe(1);
    expect(created.revision.generation).toBe(1);
    expect(res.body.view.stale).toBe(false);
    // Without include_evidence the view carries no evidence.
    expect(res.body.view.evidence).toEqual([]);
    expect(res.body.view.verifications).toEqual([]);
    // Only one of the two given: the other still defaults to now.
    const onlyAsOf = await ok(api.get(`/v1/memories/${created.memory.id}`, { query: { as_of: 5 } }));
    expect(onlyAsOf.body.as_of).toBe(5);
    expect(onlyAsOf.body.known_at).toBeGreaterThanOrEqual(created.commit.recorded_at);
  });

  it('a memory is unknown before its creation commit and known from its recorded_at exactly', async () => {
    const created = await createMemory(api, ns.id, 'Known from the commit on.');
    const recordedAt = created.commit.recorded_at as number;
    expect(created.revision.recorded_at).toBe(recordedAt);
    const id = created.memory.id;
    expectNotFound(await api.get(`/v1/memories/${id}`, { query: { known_at: justBefore(recordedAt) } }));
    expectNotFound(await api.get(`/v1/memories/${id}`, { query: { known_at: recordedAt - 1 } }));
    const exact = await ok(api.get(`/v1/memories/${id}`, { query: { known_at: recordedAt } }));
    expect(exact.body.known_at).toBe(recordedAt);
    expect(exact.body.view.revision.id).toBe(created.revision.id);

    // History follows the same clock.
    expectNotFound(await api.get(`/v1/memories/${id}/history`, { query: { known_at: justBefore(recordedAt) } }));
    const history = await ok(api.get(`/v1/memories/${id}/history`, { query: { known_at: recordedAt } }));
    expect(history.body.revisions).toEqual([created.revision]);
    expect(history.body.next_cursor).toBeNull();
    const later = await ok(api.get(`/v1/memories/${id}/history`, { query: { known_at: recordedAt + 3600 } }));
    expect(later.body.revisions).toHaveLength(1);
    expect(later.body.revisions[0].generation).toBe(1);
  });

  it('valid time is half-open [valid_from, valid_to)', async () => {
    const validFrom = 1000.5;
    const validTo = 2000.25;
    const created = await createMemory(api, ns.id, 'Valid for a while.', { valid_from: validFrom, valid_to: validTo });
    expect(created.revision.valid_from).toBe(validFrom);
    expect(created.revision.valid_to).toBe(validTo);
    const id = created.memory.id;
    const at = (asOf: number) => api.get(`/v1/memories/${id}`, { query: { as_of: asOf } });
    expectNotFound(await at(justBefore(validFrom)));
    expectNotFound(await at(MIN_TIMESTAMP));
    expect((await ok(at(validFrom))).body.view.revision.id).toBe(created.revision.id);
    expect((await ok(at(justBefore(validTo)))).body.as_of).toBe(justBefore(validTo));
    expectNotFound(await at(validTo));
    expectNotFound(await at(LAST_SECOND));

    // valid_to null: open-ended.
    const open = await createMemory(api, ns.id, 'Valid from now on.', { valid_from: -1.5 });
    expect(open.revision.valid_to).toBeNull();
    expectNotFound(await api.get(`/v1/memories/${open.memory.id}`, { query: { as_of: -1.5000001 } }));
    expect((await api.get(`/v1/memories/${open.memory.id}`, { query: { as_of: -1.5 } })).status).toBe(200);
    expect((await api.get(`/v1/memories/${open.memory.id}`, { query: { as_of: LAST_SECOND } })).status).toBe(200);
  });

  it('echoes as_of and known_at given explicitly, exactly', async () => {
    const created = await createMemory(api, ns.id, 'Echo.', { valid_from: 0.1 });
    const asOf = 1700000000.123456;
    const knownAt = created.commit.recorded_at + 0.000123;
    const res = await ok(api.get(`/v1/memories/${created.memory.id}`, { query: { as_of: asOf, known_at: knownAt } }));
    expect(res.body.as_of).toBe(asOf);
    expect(res.body.known_at).toBe(knownAt);
    const tiny = await ok(
      api.get(`/v1/memories/${created.memory.id}`, { query: { as_of: 0.1, known_at: LAST_SECOND } }),
    );
    expect(tiny.body.as_of).toBe(0.1);
    expect(tiny.body.known_at).toBe(LAST_SECOND);
  });

  it('include_evidence shows cited evidence in order and only verifications known at known_at', async () => {
    const e1 = await createEvidence(api, ns.id, 'first excerpt');
    const e2 = await createEvidence(api, ns.id, 'second excerpt \u{1F9FE}');
    const e3 = await createEvidence(api, ns.id, 'third excerpt');
    const early = await verify(api, e3, 'verified');
    const created = await createMemory(api, ns.id, 'Cites three.', { evidence_ids: [e2.id, e3.id, e1.id] });
    const t0 = created.commit.recorded_at as number;
    const late = await verify(api, e1, 'rejected');
    const t1 = late.commit.recorded_at;
    expect(t1).toBeGreaterThan(t0);
    expect(late.commit.sequence).toBe(created.commit.sequence + 1);

    const view = async (knownAt: number) =>
      (await ok(api.get(`/v1/memories/${created.memory.id}`, { query: { include_evidence: true, known_at: knownAt } })))
        .body.view;

    const then = await view(t0);
    expect(then.evidence.map((e: { id: string }) => e.id)).toEqual([e2.id, e3.id, e1.id]);
    expect(then.evidence[1].excerpt).toBe('third excerpt');
    expect(then.evidence[0].excerpt).toBe('second excerpt \u{1F9FE}');
    expect(then.verifications.map((v: { id: string }) => v.id)).toEqual([early.verification.id]);

    const now = await view(t1);
    expect(now.evidence.map((e: { id: string }) => e.id)).toEqual([e2.id, e3.id, e1.id]);
    expect(now.verifications.map((v: { id: string }) => v.id).sort()).toEqual(
      [early.verification.id, late.verification.id].sort(),
    );
    const lateShown = now.verifications.find((v: { id: string }) => v.id === late.verification.id);
    expect(lateShown).toEqual({
      id: late.verification.id,
      evidence_id: e1.id,
      content_root_sha256: e1.content_root_sha256,
      excerpt_sha256: e1.excerpt_sha256,
      verdict: 'rejected',
      verifier_actor_id: ownerActorId,
      recorded_at: t1,
    });
    // A verification does not change the revision: still generation 1, as created.
    expect(now.revision).toEqual(created.revision);
    expect(now.memory.generation).toBe(1);
  });

  describe('status at creation', () => {
    it('is candidate without evidence', async () => {
      const created = await createMemory(api, ns.id, 'No evidence.');
      expect(created.revision.status).toBe('candidate');
      expect(created.revision.attestation).toBeNull();
      expect(created.revision.evidence_ids).toEqual([]);
    });

    it('is candidate when cited evidence is not verified', async () => {
      const verified = await createEvidence(api, ns.id, 'status: verified one');
      await verify(api, verified, 'verified');
      const unverified = await createEvidence(api, ns.id, 'status: never verified');
      const created = await createMemory(api, ns.id, 'Half verified.', { evidence_ids: [verified.id, unverified.id] });
      expect(created.revision.status).toBe('candidate');
      expect(created.revision.attestation).toBeNull();
      expect(created.revision.evidence_ids).toEqual([verified.id, unverified.id]);
    });

    it('is asserted with an attestation when the verifier cites only verified evidence', async () => {
      const a = await createEvidence(api, ns.id, 'status: a');
      const b = await createEvidence(api, ns.id, 'status: b');
      const vb = await verify(api, b, 'verified');
      const va = await verify(api, a, 'verified');
      const text = 'Asserted claim with \u0000 and \u{1F30D}.';
      const created = await createMemory(api, ns.id, text, { evidence_ids: [a.id, b.id] });
      expect(created.revision.status).toBe('asserted');
      const attestation = created.revision.attestation;
      expect(attestation).toEqual({
        id: expect.any(String),
        claim_text: text,
        claim_sha256: sha256Hex(text),
        evidence_ids: [a.id, b.id],
        verification_ids: [va.verification.id, vb.verification.id],
        verifier_actor_id: ownerActorId,
        recorded_at: created.commit.recorded_at,
      });
      // The read shows the same revision and attestation.
      const read = await ok(api.get(`/v1/memories/${created.memory.id}`));
      expect(read.body.view.revision).toEqual(created.revision);
      expect(read.body.view.revision.text).toBe(text);
    });

    it('is candidate when any cited evidence has a rejected verification', async () => {
      const a = await createEvidence(api, ns.id, 'status: rejected later');
      await verify(api, a, 'verified');
      await verify(api, a, 'rejected');
      const b = await createEvidence(api, ns.id, 'status: fine');
      await verify(api, b, 'verified');
      const created = await createMemory(api, ns.id, 'One rejected.', { evidence_ids: [b.id, a.id] });
      expect(created.revision.status).toBe('candidate');
      expect(created.revision.attestation).toBeNull();
    });

    it('is candidate when the caller holds observe but not verify', async () => {
      const e = await createEvidence(api, ns.id, 'status: verified for bob');
      await verify(api, e, 'verified');
      const bob = await h.human({ enroll: false });
      const members = await api.put(`/v1/workspaces/${ws}/members`, {
        members: [
          { actor_id: ownerActorId, role: 'admin' },
          { actor_id: bob.actorId, role: 'member' },
        ],
      });
      expect(members.status).toBe(200);
      const grants = await api.put(`/v1/namespaces/${ns.id}/grants`, {
        grants: [
          { target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read', 'observe'], inherit: false },
        ],
      });
      expect(grants.status).toBe(200);
      const bobApi = await bob.api(ws);
      const created = await createMemory(bobApi, ns.id, 'Bob cites verified evidence.', { evidence_ids: [e.id] });
      expect(created.revision.status).toBe('candidate');
      expect(created.revision.attestation).toBeNull();

      // The same request from the verifier is asserted (so the difference is the capability).
      const same = await createMemory(api, ns.id, 'Bob cites verified evidence.', { evidence_ids: [e.id] });
      expect(same.revision.status).toBe('asserted');
    });
  });
});
