import { freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';
import { expectError } from './shapes';

/*
 * webhooks.create, webhooks.list and webhooks.delete over /v1 (decisions §10): workspace admins
 * only, the secret shown once, the URL rules, idempotent create and delete, DELETE routing.
 * Deliveries are tested in services/indexer/test/webhook-deliveries.test.ts.
 */

describe.each(DRIVERS)('webhook registration (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  it('shows the secret once: a replay answers the same webhook with secret null, like credentials.create', async () => {
    const { id: ws, api: admin } = await h.workspace();
    const key = freshKey('webhook');
    const body = { url: 'https://hooks.example.com/tms', description: 'crm sync' };
    const created = await admin.post('/v1/webhooks', body, { idem: key });
    expect(created.status, created.text).toBe(200);
    const { webhook, secret, commit } = created.body;
    expect(Object.keys(created.body).sort()).toEqual(['commit', 'secret', 'webhook']);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(webhook).toEqual({
      id: expect.stringMatching(/^wh_/),
      workspace_id: ws,
      url: 'https://hooks.example.com/tms',
      namespace_id: null,
      description: 'crm sync',
      state: 'active',
      disabled_reason: null,
      state_since: null,
      // Deliveries start after the commit that created it.
      delivered_sequence: commit.sequence,
      last_delivered_at: null,
      last_error: null,
      last_error_at: null,
      failing_since: null,
      next_attempt_at: null,
      created_at: commit.recorded_at,
    });

    const replay = await admin.post('/v1/webhooks', body, { idem: key });
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toEqual({ ...created.body, secret: null });
    // credentials.create replays the same way: the stored answer never held the secret.
    const credentialBody = { kind: 'service_key', name: 'k', capabilities: ['read'] };
    const credentialKey = freshKey('credential');
    const issued = await admin.post('/v1/credentials', credentialBody, { idem: credentialKey });
    const reissued = await admin.post('/v1/credentials', credentialBody, { idem: credentialKey });
    expect(typeof issued.body.secret).toBe('string');
    expect(reissued.body).toEqual({ ...issued.body, secret: null });

    // The secret is kept in the webhook row only (deliveries are signed with it), never in an answer store.
    expect(await h.findInDatabase(secret)).toEqual(['webhooks.secret']);
    const listed = await admin.get('/v1/webhooks');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body).toEqual({ webhooks: [webhook], next_cursor: null });
    expect(listed.text).not.toContain(secret);

    // The write is a commit with a workspace-level `webhook` subject.
    const feed = await h.gateway.ledger.stores.changes.listAfter(ws, { after: commit.sequence - 1, limit: 1 });
    expect(feed.changes).toEqual([
      {
        sequence: commit.sequence,
        recordedAt: commit.recorded_at,
        operation: 'webhooks.create',
        actorId: expect.stringMatching(/^act_/),
        subjects: [{ type: 'webhook', id: webhook.id, namespaceId: null }],
      },
    ]);
  });

  it('deletes idempotently: a second delete answers commit null, and the list no longer shows it', async () => {
    const { id: ws, api: admin } = await h.workspace();
    const kept = (await admin.post('/v1/webhooks', { url: 'https://a.example.com/' })).body.webhook;
    const created = await admin.post('/v1/webhooks', { url: 'https://b.example.com/' });
    const { webhook, secret } = created.body;

    const key = freshKey('delete');
    const deleted = await admin.delete(`/v1/webhooks/${webhook.id}`, { idem: key });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body.commit).toEqual({ sequence: expect.any(Number), recorded_at: expect.any(Number) });
    expect(deleted.body.webhook).toEqual({
      ...webhook,
      state: 'deleted',
      state_since: deleted.body.commit.recorded_at,
    });
    // The same request replays byte for byte; a new request finds it deleted already.
    const replay = await admin.delete(`/v1/webhooks/${webhook.id}`, { idem: key });
    expect(replay.text).toBe(deleted.text);
    const again = await admin.delete(`/v1/webhooks/${webhook.id}`);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual({ webhook: deleted.body.webhook, commit: null });

    expect((await admin.get('/v1/webhooks')).body.webhooks.map((w: { id: string }) => w.id)).toEqual([kept.id]);
    // A deleted webhook's secret is forgotten.
    expect(await h.findInDatabase(secret)).toEqual([]);
    expectError(await admin.delete('/v1/webhooks/wh_unknown'), 'not_found');
    const head = await h.gateway.ledger.stores.commits.head(ws);
    expect(head?.sequence).toBe(deleted.body.commit.sequence);
  });

  it('routes DELETE: 405 with Allow for other methods, a body or an unknown query is invalid_input', async () => {
    const { api: admin } = await h.workspace();
    const { webhook } = (await admin.post('/v1/webhooks', { url: 'https://c.example.com/' })).body;
    expectError(await h.api.call('PUT', `/v1/webhooks/${webhook.id}`), 'method_not_allowed', { allow: ['DELETE'] });
    expectError(await h.api.call('PATCH', '/v1/webhooks'), 'method_not_allowed', { allow: ['GET', 'POST'] });
    expectError(await admin.call('DELETE', `/v1/webhooks/${webhook.id}`, { body: {} }), 'invalid_input');
    expectError(await admin.delete(`/v1/webhooks/${webhook.id}`, { query: { force: 'true' } }), 'invalid_input');
    expectError(await admin.delete(`/v1/webhooks/${webhook.id}`, { idem: null }), 'idempotency_required');
    expectError(await h.api.delete(`/v1/webhooks/${webhook.id}`), 'unauthenticated');
    expect((await admin.get('/v1/webhooks')).body.webhooks[0].state).toBe('active');
  });

  it('keeps webhooks to workspace admins: forbidden for members, not_found for others', async () => {
    const { id: ws, api: admin, owner } = await h.workspace();
    const { webhook } = (await admin.post('/v1/webhooks', { url: 'https://d.example.com/' })).body;
    const member = await h.human({ enroll: false });
    await admin.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: member.actorId, role: 'member' },
      ],
    });
    const memberApi = await member.api(ws);
    expectError(await memberApi.post('/v1/webhooks', { url: 'https://e.example.com/' }), 'forbidden');
    expectError(await memberApi.get('/v1/webhooks'), 'forbidden');
    expectError(await memberApi.delete(`/v1/webhooks/${webhook.id}`), 'forbidden');
    const stranger = await (await h.human({ enroll: false })).api(ws);
    expectError(await stranger.get('/v1/webhooks'), 'not_found');
    expectError(await stranger.delete(`/v1/webhooks/${webhook.id}`), 'not_found');
    // A service key, even one capped at admin, is not a workspace admin.
    const key = await admin.post('/v1/credentials', { kind: 'service_key', name: 'ops', capabilities: ['admin'] });
    expectError(await admin.as(key.body.secret, null).get('/v1/webhooks'), 'forbidden');
    // An OAuth token of an admin needs svc:admin.
    const oauthActor = (await admin.as(await h.issuer.accessToken(owner.subject), null).get('/v1/me')).body.actor.id;
    await admin.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: oauthActor, role: 'admin' },
      ],
    });
    const reader = admin.as(await h.issuer.accessToken(owner.subject, 'svc:read'), ws);
    expectError(await reader.get('/v1/webhooks'), 'forbidden');
    const oauthAdmin = admin.as(await h.issuer.accessToken(owner.subject, 'svc:admin'), ws);
    expect((await oauthAdmin.get('/v1/webhooks')).body.webhooks.map((w: { id: string }) => w.id)).toEqual([webhook.id]);
    expect((await admin.get('/v1/webhooks')).body.webhooks).toHaveLength(1);
  });

  it('refuses URLs outside the rules with invalid_input', async () => {
    const { id: ws, api: admin } = await h.workspace();
    const before = await h.gateway.ledger.stores.commits.head(ws);
    // The reason of each refusal (the text of X-Error-Detail) is checked in packages/webhooks/test.
    const refused = [
      'http://hooks.example.com/',
      'ftp://hooks.example.com/',
      '/relative',
      'https://127.0.0.1/',
      'https://[::1]:8443/',
      'https://192.168.1.20/',
      'https://169.254.169.254/latest/meta-data',
      'https://localhost/',
      'http://127.0.0.1:9/',
      'https://me:pw@hooks.example.com/',
    ];
    for (const url of refused) expectError(await admin.post('/v1/webhooks', { url }), 'invalid_input');
    expectError(await admin.post('/v1/webhooks', { url: 'https://x.example.com/', secret: 's' }), 'invalid_input');
    expectError(await admin.post('/v1/webhooks', { url: '' }), 'invalid_input');
    expectError(
      await admin.post('/v1/webhooks', { url: 'https://x.example.com/', namespace_id: 'ns_none' }),
      'not_found',
    );
    // Nothing was written.
    expect(await h.gateway.ledger.stores.commits.head(ws)).toEqual(before);
  });

  it('limits the namespace filter to namespaces of the workspace', async () => {
    const { api: admin } = await h.workspace();
    const other = await h.workspace();
    const foreign = (await other.api.post('/v1/namespaces', { parent_id: null, name: 'theirs' })).body.namespace;
    expectError(
      await admin.post('/v1/webhooks', { url: 'https://x.example.com/', namespace_id: foreign.id }),
      'not_found',
    );
    const mine = (await admin.post('/v1/namespaces', { parent_id: null, name: 'mine' })).body.namespace;
    const created = await admin.post('/v1/webhooks', { url: 'https://x.example.com/', namespace_id: mine.id });
    expect(created.status, created.text).toBe(200);
    expect(created.body.webhook.namespace_id).toBe(mine.id);
  });
});

describe('webhook registration with WEBHOOKS_ALLOW_PRIVATE=1', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite', env: { WEBHOOKS_ALLOW_PRIVATE: '1' } });
  });
  afterAll(() => h?.close());

  it('admits http and https to loopback and private addresses, and still refuses http elsewhere', async () => {
    const { api: admin } = await h.workspace();
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost:8080/hook', 'https://10.0.0.7/hook']) {
      const res = await admin.post('/v1/webhooks', { url });
      expect(res.status, `${url}: ${res.text}`).toBe(200);
    }
    expectError(await admin.post('/v1/webhooks', { url: 'http://hooks.example.com/' }), 'invalid_input');
    expectError(await admin.post('/v1/webhooks', { url: 'http://8.8.8.8/' }), 'invalid_input');
  });
});
