import type { ApiClient } from '@tms/testkit';
import { freshKey, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';

async function setup(h: Harness) {
  const { id: ws, api, owner } = await h.workspace();
  const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'facts' })).body.namespace;
  return { ws, api, owner, ns };
}

async function createMemory(api: ApiClient, namespaceId: string, text: string, extra: object = {}) {
  const res = await api.post('/v1/memories', {
    namespace_id: namespaceId,
    kind: 'claim',
    text,
    valid_from: 0,
    ...extra,
  });
  expect(res.status).toBe(200);
  return res.body as {
    memory: { id: string; generation: number };
    revision: { id: string };
    commit: { recorded_at: number };
  };
}

describe.each(DRIVERS)('memory lifecycle (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  it('corrects a memory: history keeps both, the old revision ends at the commit, reads are bitemporal', async () => {
    const { api, ns } = await setup(h);
    const created = await createMemory(api, ns.id, 'Ana lives in Lisbon.');
    const corrected = await api.post(`/v1/memories/${created.memory.id}/corrections`, {
      expected_generation: 1,
      text: 'Ana lives in Porto.',
    });
    expect(corrected.status).toBe(200);
    expect(corrected.body.memory.generation).toBe(2);
    expect(corrected.body.revision.generation).toBe(2);
    expect(corrected.body.invalidated_revision_ids).toEqual([]);
    const t1 = created.commit.recorded_at;
    const t2 = corrected.body.commit.recorded_at;

    const now = await api.get(`/v1/memories/${created.memory.id}`);
    expect(now.body.view.revision.text).toBe('Ana lives in Porto.');
    const before = await api.get(`/v1/memories/${created.memory.id}`, { query: { known_at: t1 } });
    expect(before.body.view.revision.text).toBe('Ana lives in Lisbon.');
    expect(before.body.view.revision.recorded_until).toBeNull();
    expect(before.body.view.memory.generation).toBe(1);

    const history = await api.get(`/v1/memories/${created.memory.id}/history`);
    expect(history.body.revisions.map((r: { generation: number }) => r.generation)).toEqual([2, 1]);
    expect(history.body.revisions[1].recorded_until).toBe(t2);
    const historyThen = await api.get(`/v1/memories/${created.memory.id}/history`, { query: { known_at: t1 } });
    expect(historyThen.body.revisions).toHaveLength(1);
    expect(historyThen.body.revisions[0].recorded_until).toBeNull();
  });

  it('refuses a stale expected_generation with conflict and replays each new mutation by key', async () => {
    const { api, ns } = await setup(h);
    const created = await createMemory(api, ns.id, 'v1');
    const stale = await api.post(`/v1/memories/${created.memory.id}/corrections`, {
      expected_generation: 2,
      text: 'x',
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('conflict');

    const key = freshKey();
    const first = await api.post(
      `/v1/memories/${created.memory.id}/corrections`,
      { expected_generation: 1, text: 'v2' },
      { idem: key },
    );
    const again = await api.post(
      `/v1/memories/${created.memory.id}/corrections`,
      { expected_generation: 1, text: 'v2' },
      { idem: key },
    );
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    const changed = await api.post(
      `/v1/memories/${created.memory.id}/corrections`,
      { expected_generation: 1, text: 'v3' },
      { idem: key },
    );
    expect(changed.body.error.code).toBe('idempotency_conflict');

    const staleForget = await api.post(`/v1/memories/${created.memory.id}/forget`, {
      mode: 'purge',
      expected_generation: 1,
    });
    expect(staleForget.body.error.code).toBe('conflict');
    const retractKey = freshKey();
    const retract = await api.post(
      `/v1/memories/${created.memory.id}/forget`,
      { mode: 'retract', expected_generation: 2 },
      { idem: retractKey },
    );
    expect(retract.status).toBe(200);
    const retractAgain = await api.post(
      `/v1/memories/${created.memory.id}/forget`,
      { mode: 'retract', expected_generation: 2 },
      { idem: retractKey },
    );
    expect(retractAgain.text).toBe(retract.text);
    expect((await api.get(`/v1/memories/${created.memory.id}`)).status).toBe(404);
    const earlier = await api.get(`/v1/memories/${created.memory.id}`, {
      query: { known_at: retract.body.commit.recorded_at - 0.0001 },
    });
    expect(earlier.body.view.revision.text).toBe('v2');
  });

  it('invalidates dependents from the correction on, not before, and a dry run writes nothing', async () => {
    const { api, ns } = await setup(h);
    const base = await createMemory(api, ns.id, 'base fact');
    const dependent = await createMemory(api, ns.id, 'derived fact', { support_revision_ids: [base.revision.id] });
    const head = await h.gateway.ledger.stores.commits.head(
      (await api.get('/v1/me')).body.workspace_id ?? api.workspace ?? '',
    );

    const dry = await api.post(`/v1/memories/${base.memory.id}/corrections`, {
      expected_generation: 1,
      text: 'new',
      dry_run: true,
    });
    expect(dry.status).toBe(200);
    expect(dry.body.commit).toBeNull();
    expect(dry.body.invalidated_revision_ids).toEqual([dependent.revision.id]);
    const headAfterDry = await h.gateway.ledger.stores.commits.head(api.workspace ?? '');
    expect(headAfterDry).toEqual(head);
    expect((await api.get(`/v1/memories/${base.memory.id}`)).body.view.revision.text).toBe('base fact');

    const real = await api.post(`/v1/memories/${base.memory.id}/corrections`, { expected_generation: 1, text: 'new' });
    expect(real.body.invalidated_revision_ids).toEqual([dependent.revision.id]);
    const at = real.body.commit.recorded_at;
    const staleNow = await api.get(`/v1/memories/${dependent.memory.id}`);
    expect(staleNow.body.view.stale).toBe(true);
    expect(staleNow.body.view.revision.invalidation).toEqual({
      recorded_at: at,
      cause_revision_id: base.revision.id,
      reason: 'support_corrected',
    });
    const staleBefore = await api.get(`/v1/memories/${dependent.memory.id}`, {
      query: { known_at: dependent.commit.recorded_at },
    });
    expect(staleBefore.body.view.stale).toBe(false);
    expect(staleBefore.body.view.revision.invalidation).toBeNull();
    const listed = await api.get('/v1/memories', { query: { namespace_id: ns.id } });
    const item = listed.body.items.find((i: { memory: { id: string } }) => i.memory.id === dependent.memory.id);
    expect(item.stale).toBe(true);
  });

  it('purges a memory: receipt by hash, suppressed at every known_at, text gone from every table', async () => {
    const { api, ns } = await setup(h);
    const secret = `purge-me-${freshKey()}`;
    const created = await createMemory(api, ns.id, `${secret} v1`);
    await api.post(`/v1/memories/${created.memory.id}/corrections`, { expected_generation: 1, text: `${secret} v2` });
    const dependent = await createMemory(api, ns.id, 'depends', { support_revision_ids: [] });
    expect(dependent.memory.id).toBeTruthy();
    const purgeKey = freshKey();
    const purge = await api.post(
      `/v1/memories/${created.memory.id}/forget`,
      { mode: 'purge', expected_generation: 2 },
      { idem: purgeKey },
    );
    expect(purge.status).toBe(200);
    expect(Object.keys(purge.body).sort()).toEqual(['commit', 'receipt']);
    expect(purge.body.receipt.erased_text_sha256).toEqual([sha256Hex(`${secret} v1`), sha256Hex(`${secret} v2`)]);
    expect(purge.body.receipt.revision_ids).toHaveLength(2);
    expect(purge.body.receipt.recorded_at).toBe(purge.body.commit.recorded_at);
    const replay = await api.post(
      `/v1/memories/${created.memory.id}/forget`,
      { mode: 'purge', expected_generation: 2 },
      { idem: purgeKey },
    );
    expect(replay.text).toBe(purge.text);

    expect((await api.get(`/v1/memories/${created.memory.id}`)).status).toBe(404);
    expect(
      (await api.get(`/v1/memories/${created.memory.id}`, { query: { known_at: created.commit.recorded_at } })).status,
    ).toBe(404);
    expect(
      (await api.get(`/v1/memories/${created.memory.id}/history`, { query: { known_at: created.commit.recorded_at } }))
        .status,
    ).toBe(404);
    const listed = await api.get('/v1/memories', {
      query: { namespace_id: ns.id, known_at: created.commit.recorded_at },
    });
    expect(listed.body.items.map((i: { memory: { id: string } }) => i.memory.id)).not.toContain(created.memory.id);

    // Nothing of the text is left anywhere in the database.
    expect(await h.findInDatabase(secret)).toEqual([]);
  });

  it('forgets evidence: receipt, excerpt gone, views omit it, the create key no longer replays it', async () => {
    const { api, ns } = await setup(h);
    const excerpt = `private excerpt ${freshKey()}`;
    const evKey = freshKey();
    const evidence = (
      await api.post(
        '/v1/evidence',
        { namespace_id: ns.id, source_locator: 'doc://1', content_root_sha256: sha256Hex(excerpt), excerpt },
        { idem: evKey },
      )
    ).body.evidence;
    const memory = await createMemory(api, ns.id, 'cites it', { evidence_ids: [evidence.id] });
    const dry = await api.post(`/v1/evidence/${evidence.id}/forget`, { dry_run: true });
    expect(dry.body.commit).toBeNull();
    expect((await api.get(`/v1/evidence/${evidence.id}`)).status).toBe(200);
    const forgetKey = freshKey();
    const forget = await api.post(`/v1/evidence/${evidence.id}/forget`, {}, { idem: forgetKey });
    expect(forget.status).toBe(200);
    const forgetReplay = await api.post(`/v1/evidence/${evidence.id}/forget`, {}, { idem: forgetKey });
    expect(forgetReplay.text).toBe(forget.text);
    expect((await api.post(`/v1/evidence/${evidence.id}/forget`, {})).status).toBe(404);
    expect(forget.body.receipt).toMatchObject({
      evidence_id: evidence.id,
      mode: 'purge',
      erased_excerpt_sha256: sha256Hex(excerpt),
    });
    expect((await api.get(`/v1/evidence/${evidence.id}`)).status).toBe(404);
    const view = await api.get(`/v1/memories/${memory.memory.id}`, { query: { include_evidence: true } });
    expect(view.body.view.evidence).toEqual([]);
    const replay = await api.post(
      '/v1/evidence',
      { namespace_id: ns.id, source_locator: 'doc://1', content_root_sha256: sha256Hex(excerpt), excerpt },
      { idem: evKey },
    );
    expect(replay.status).toBe(404);
    expect(replay.text).not.toContain(excerpt);
  });

  it('attests a candidate as a new asserted revision', async () => {
    const { api, ns } = await setup(h);
    const excerpt = `source ${freshKey()}`;
    const evidence = (
      await api.post('/v1/evidence', {
        namespace_id: ns.id,
        source_locator: 'doc://2',
        content_root_sha256: sha256Hex(excerpt),
        excerpt,
      })
    ).body.evidence;
    const memory = await createMemory(api, ns.id, 'claim', { evidence_ids: [evidence.id] });
    expect((await api.get(`/v1/memories/${memory.memory.id}`)).body.view.revision.status).toBe('candidate');
    const verification = (
      await api.post(`/v1/evidence/${evidence.id}/verifications`, {
        expected_content_root_sha256: evidence.content_root_sha256,
        expected_excerpt_sha256: evidence.excerpt_sha256,
        verdict: 'verified',
      })
    ).body.verification;
    const attestBody = { expected_generation: 1, evidence_ids: [evidence.id], verification_ids: [verification.id] };
    const stale = await api.post(`/v1/memories/${memory.memory.id}/attestations`, {
      ...attestBody,
      expected_generation: 3,
    });
    expect(stale.body.error.code).toBe('conflict');
    const key = freshKey();
    const attest = await api.post(`/v1/memories/${memory.memory.id}/attestations`, attestBody, { idem: key });
    expect(attest.status).toBe(200);
    const replay = await api.post(`/v1/memories/${memory.memory.id}/attestations`, attestBody, { idem: key });
    expect(replay.text).toBe(attest.text);
    expect((await api.get(`/v1/memories/${memory.memory.id}/history`)).body.revisions).toHaveLength(2);
    expect(attest.body.revision.status).toBe('asserted');
    expect(attest.body.revision.generation).toBe(2);
    expect(attest.body.revision.attestation).toMatchObject({
      claim_text: 'claim',
      claim_sha256: sha256Hex('claim'),
      evidence_ids: [evidence.id],
      verification_ids: [verification.id],
      recorded_at: attest.body.commit.recorded_at,
    });
  });
});
