import crypto from 'node:crypto';
import { type ApiClient, type CallResult, freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';

function expectError(res: CallResult, status: number, code: string, why = '') {
  expect(res.status, `${why} ${res.text}`).toBe(status);
  expect(res.body?.error?.code, why).toBe(code);
}

const sleepUntil = async (unixSeconds: number) => {
  const wait = unixSeconds * 1000 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
};

describe.each(DRIVERS)('installation credentials and service keys (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  /** A workspace with a root namespace and two children (a, b) below it. */
  async function setup() {
    const { id: ws, api: admin, owner } = await h.workspace();
    const ns = async (parent: string | null, name: string) => {
      const res = await admin.post('/v1/namespaces', { parent_id: parent, name });
      expect(res.status, res.text).toBe(200);
      return res.body.namespace.id as string;
    };
    const root = await ns(null, 'root');
    const a = await ns(root, 'a');
    const b = await ns(root, 'b');
    const installation = await admin.post('/v1/installations', { name: 'crm' });
    expect(installation.status, installation.text).toBe(200);
    return { ws, admin, owner, root, a, b, installationId: installation.body.installation.id as string };
  }

  async function issue(admin: ApiClient, body: Record<string, unknown>, idem?: string) {
    const res = await admin.post('/v1/credentials', body, idem ? { idem } : {});
    expect(res.status, res.text).toBe(200);
    return res;
  }

  const memory = (namespaceId: string, text = 'Ana prefers tea.') => ({
    namespace_id: namespaceId,
    kind: 'claim',
    text,
    valid_from: 1700000000,
  });

  it('issues an installation credential whose grants come from its installation, cut to its ceiling', async () => {
    const { ws, admin, root, a, installationId } = await setup();
    const issued = await issue(admin, {
      kind: 'installation',
      product_installation_id: installationId,
      name: 'crm-prod',
      capabilities: ['read', 'observe'],
    });
    const { credential, secret, commit } = issued.body;
    expect(Object.keys(issued.body).sort()).toEqual(['commit', 'credential', 'secret']);
    expect(secret).toMatch(/^tms_ic_[0-9a-z]{24}_[0-9a-z]{52}$/);
    expect(secret.slice(7, 31)).toBe(credential.id.slice(5));
    expect(credential).toEqual({
      id: expect.stringMatching(/^cred_/),
      workspace_id: ws,
      kind: 'installation',
      product_installation_id: installationId,
      name: 'crm-prod',
      actor_id: expect.stringMatching(/^act_/),
      capabilities: ['read', 'observe'],
      namespace_ids: null,
      expires_at: null,
      created_at: commit.recorded_at,
      revoked_at: null,
    });

    const app = admin.as(secret, null);
    // Bound to its workspace without any header; nothing readable before a grant.
    const me = await app.get('/v1/me');
    expect(me.body).toEqual({
      actor: { id: credential.actor_id, issuer: 'urn:tms:credential', subject: credential.id },
      caller_kind: 'installation',
      workspace_id: ws,
      scopes: ['svc:read', 'svc:observe'],
    });
    expectError(await app.get(`/v1/namespaces/${a}`), 404, 'not_found', 'before any grant');
    expect((await app.get('/v1/workspaces')).body.workspaces).toEqual([]);

    // The installation is granted admin on the subtree: the credential gets read and observe only.
    const granted = await admin.put(`/v1/namespaces/${root}/grants`, {
      grants: [
        {
          target: { kind: 'installation', product_installation_id: installationId },
          capabilities: ['admin'],
          inherit: true,
        },
      ],
    });
    expect(granted.status, granted.text).toBe(200);
    expect((await app.get('/v1/workspaces')).body.workspaces.map((w: { id: string }) => w.id)).toEqual([ws]);
    const created = await app.post('/v1/memories', memory(a));
    expect(created.status, created.text).toBe(200);
    const view = await admin.get(`/v1/memories/${created.body.memory.id}`);
    expect(view.status).toBe(200);
    // Its scopes stop what its grants would allow.
    expectError(await app.post('/v1/namespaces', { parent_id: a, name: 'child' }), 403, 'forbidden');
    expectError(
      await app.post(`/v1/memories/${created.body.memory.id}/forget`, { mode: 'retract', expected_generation: 1 }),
      403,
      'forbidden',
    );
    // The selector cannot broaden it: another workspace is absent to it; its own is fine.
    const other = await h.workspace();
    expectError(await app.in(other.id).get('/v1/namespaces'), 404, 'not_found');
    expect((await app.in(ws).get('/v1/namespaces')).status).toBe(200);
    // Admin operations are for workspace admins only.
    expectError(await app.get('/v1/credentials'), 403, 'forbidden');
  });

  it('narrows a credential to namespaces: an inherited grant reaches only the allowed subtree', async () => {
    const { admin, root, a, b, installationId } = await setup();
    const { secret } = (
      await issue(admin, {
        kind: 'installation',
        product_installation_id: installationId,
        name: 'only-a',
        capabilities: ['read', 'observe'],
        namespace_ids: [a],
      })
    ).body;
    await admin.put(`/v1/namespaces/${root}/grants`, {
      grants: [
        {
          target: { kind: 'installation', product_installation_id: installationId },
          capabilities: ['read', 'observe'],
          inherit: true,
        },
      ],
    });
    const app = admin.as(secret, null);
    expect((await app.get(`/v1/namespaces/${a}`)).status).toBe(200);
    expectError(await app.get(`/v1/namespaces/${b}`), 404, 'not_found', 'outside the ceiling');
    expectError(await app.get(`/v1/namespaces/${root}`), 404, 'not_found', 'above the ceiling');
    const listed = await app.get('/v1/namespaces');
    expect(listed.body.namespaces.map((n: { id: string }) => n.id)).toEqual([a]);
    expectError(await app.post('/v1/memories', memory(b)), 404, 'not_found');
    expect((await app.post('/v1/memories', memory(a))).status).toBe(200);
  });

  it('issues a service key bound to its workspace; grants to the credential decide', async () => {
    const { ws, admin, a } = await setup();
    const issued = await issue(admin, {
      kind: 'service_key',
      name: 'nightly-job',
      capabilities: ['read', 'observe', 'verify'],
    });
    const { credential, secret } = issued.body;
    expect(secret).toMatch(/^tms_sk_/);
    expect(credential.product_installation_id).toBeNull();
    const job = admin.as(secret, null);
    expect((await job.get('/v1/me')).body.caller_kind).toBe('service_key');
    expect((await job.get('/v1/workspaces')).body.workspaces.map((w: { id: string }) => w.id)).toEqual([ws]);
    expectError(await job.get(`/v1/namespaces/${a}`), 404, 'not_found');
    await admin.put(`/v1/namespaces/${a}/grants`, {
      grants: [
        { target: { kind: 'credential', credential_id: credential.id }, capabilities: ['read'], inherit: false },
      ],
    });
    expect((await job.get(`/v1/namespaces/${a}`)).status).toBe(200);
    expectError(await job.post('/v1/memories', memory(a)), 403, 'forbidden', 'read only');
    // Removing the grant bites on the next request.
    await admin.put(`/v1/namespaces/${a}/grants`, { grants: [] });
    expectError(await job.get(`/v1/namespaces/${a}`), 404, 'not_found', 'grant removed');
  });

  it('refuses a revoked credential, a credential of a revoked installation and an expired one on the next request', async () => {
    const { admin, a, installationId } = await setup();
    const body = { kind: 'installation', product_installation_id: installationId, capabilities: ['read'] };
    const one = (await issue(admin, { ...body, name: 'one' })).body;
    const two = (await issue(admin, { ...body, name: 'two' })).body;
    const key = (await issue(admin, { kind: 'service_key', name: 'k', capabilities: ['read'] })).body;
    for (const c of [one, two, key]) expect((await admin.as(c.secret, null).get('/v1/me')).status).toBe(200);

    const revoked = await admin.post(`/v1/credentials/${one.credential.id}/revoke`, {});
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.credential.revoked_at).toBe(revoked.body.commit.recorded_at);
    expectError(await admin.as(one.secret, null).get('/v1/me'), 401, 'unauthenticated', 'revoked');
    expect((await admin.as(two.secret, null).get('/v1/me')).status).toBe(200);
    // Revoking again changes nothing and writes no commit.
    const again = await admin.post(`/v1/credentials/${one.credential.id}/revoke`, {});
    expect(again.body).toEqual({ credential: revoked.body.credential, commit: null });

    const installation = await admin.post(`/v1/installations/${installationId}/revoke`, {});
    expect(installation.status, installation.text).toBe(200);
    expectError(await admin.as(two.secret, null).get('/v1/me'), 401, 'unauthenticated', 'installation revoked');
    expect((await admin.as(key.secret, null).get('/v1/me')).status, 'service key unaffected').toBe(200);
    // A revoked installation takes no new credentials and no grants.
    expectError(await admin.post('/v1/credentials', { ...body, name: 'three' }), 409, 'conflict');
    expectError(
      await admin.put(`/v1/namespaces/${a}/grants`, {
        grants: [
          {
            target: { kind: 'installation', product_installation_id: installationId },
            capabilities: ['read'],
            inherit: false,
          },
        ],
      }),
      400,
      'invalid_input',
    );

    const expiresAt = Date.now() / 1000 + 1.5;
    const brief = (
      await issue(admin, { kind: 'service_key', name: 'brief', capabilities: ['read'], expires_at: expiresAt })
    ).body;
    expect(brief.credential.expires_at).toBe(expiresAt);
    expect((await admin.as(brief.secret, null).get('/v1/me')).status).toBe(200);
    await sleepUntil(expiresAt + 0.05);
    expectError(await admin.as(brief.secret, null).get('/v1/me'), 401, 'unauthenticated', 'expired');
  });

  it('refuses forged, mangled and foreign secrets exactly like any bad token', async () => {
    const { admin } = await setup();
    const { secret, credential } = (await issue(admin, { kind: 'service_key', name: 'k', capabilities: ['read'] }))
      .body;
    const last = secret.at(-1) === 'a' ? 'b' : 'a';
    const variants = {
      'wrong secret part': `${secret.slice(0, -1)}${last}`,
      'kind swapped': secret.replace('tms_sk_', 'tms_ic_'),
      'unknown id': `tms_sk_${'0'.repeat(24)}_${secret.slice(-52)}`,
      truncated: secret.slice(0, -1),
      'id only': `tms_sk_${credential.id.slice(5)}`,
    };
    for (const [why, token] of Object.entries(variants)) {
      expectError(await admin.as(token, null).get('/v1/me'), 401, 'unauthenticated', why);
    }
  });

  it('shows a secret once: a replay answers the same credential with secret null; no table or log holds it', async () => {
    const { admin, installationId } = await setup();
    const idem = freshKey('cred');
    const body = {
      kind: 'installation',
      product_installation_id: installationId,
      name: 'once',
      capabilities: ['read'],
    };
    const first = await issue(admin, body, idem);
    const secret = first.body.secret as string;
    // Positive control: the scan finds the stored hash, so it would find the secret if stored.
    const hash = crypto.createHash('sha256').update(secret).digest('hex');
    expect(await h.findInDatabase(hash)).toEqual(['credentials.secret_sha256']);

    const replay = await issue(admin, body, idem);
    expect(replay.body).toEqual({ ...first.body, secret: null });
    const listed = await admin.get('/v1/credentials', { query: { product_installation_id: installationId } });
    expect(listed.body).toEqual({ credentials: [first.body.credential], next_cursor: null });
    expect(listed.text).not.toContain(secret);

    // Use it through every transport, then look for it everywhere.
    expect((await admin.as(secret, null).get('/v1/me')).status).toBe(200);
    const gql = await fetch(`${h.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ me { callerKind } }' }),
    });
    expect(gql.status).toBe(200);
    await admin.as(`${secret.slice(0, -1)}x`, null).get('/v1/me');
    expect(await h.findInDatabase(secret)).toEqual([]);
    expect(await h.findInDatabase(secret.slice(-52))).toEqual([]);
    expect(h.logs.length).toBeGreaterThan(0);
    expect(h.logs.filter((line) => line.includes(secret.slice(-52)))).toEqual([]);
  });

  it('keeps issuance and revocation to workspace admins and records each as a commit', async () => {
    const { ws, admin, owner, installationId } = await setup();
    const member = await h.human({ enroll: false });
    await admin.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: member.actorId, role: 'member' },
      ],
    });
    const memberApi = await member.api(ws);
    expectError(await memberApi.post('/v1/installations', { name: 'x' }), 403, 'forbidden');
    expectError(await memberApi.get('/v1/installations'), 403, 'forbidden');
    expectError(
      await memberApi.post('/v1/credentials', { kind: 'service_key', name: 'x', capabilities: ['read'] }),
      403,
      'forbidden',
    );
    // An OAuth client acting for a workspace admin needs svc:admin as well.
    const oauthActor = (await admin.as(await h.issuer.accessToken(owner.subject), null).get('/v1/me')).body.actor.id;
    await admin.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: oauthActor, role: 'admin' },
      ],
    });
    const oauth = admin.as(await h.issuer.accessToken(owner.subject, 'svc:read svc:observe'), ws);
    expectError(await oauth.get('/v1/installations'), 403, 'forbidden');
    const oauthAdmin = admin.as(await h.issuer.accessToken(owner.subject, 'svc:read svc:admin'), ws);
    expect((await oauthAdmin.get('/v1/installations')).body.installations.map((i: { id: string }) => i.id)).toEqual([
      installationId,
    ]);

    // Bad input: kind and installation must agree; expiry in the future; namespaces must exist.
    const bad = [
      { kind: 'installation', name: 'x', capabilities: ['read'] },
      { kind: 'service_key', product_installation_id: installationId, name: 'x', capabilities: ['read'] },
      { kind: 'service_key', name: 'x', capabilities: ['read'], expires_at: 1 },
      { kind: 'service_key', name: 'x', capabilities: [] },
      { kind: 'service_key', name: 'x', capabilities: ['read', 'read'] },
      { kind: 'service_key', name: 'x', capabilities: ['root'] },
      { kind: 'service_key', name: 'x', capabilities: ['read'], secret: 'mine' },
    ];
    for (const body of bad)
      expectError(await admin.post('/v1/credentials', body), 400, 'invalid_input', JSON.stringify(body));
    expectError(
      await admin.post('/v1/credentials', {
        kind: 'service_key',
        name: 'x',
        capabilities: ['read'],
        namespace_ids: ['ns_absent'],
      }),
      404,
      'not_found',
    );
    expectError(await admin.post('/v1/credentials/cred_absent/revoke', {}), 404, 'not_found');
    expectError(await admin.post('/v1/installations/ins_absent/revoke', {}), 404, 'not_found');

    const before = (await h.gateway.ledger.stores.commits.head(ws))?.sequence ?? 0;
    const issued = await issue(admin, { kind: 'service_key', name: 'k', capabilities: ['read'] });
    const revoked = await admin.post(`/v1/credentials/${issued.body.credential.id}/revoke`, {});
    const commits = await h.gateway.ledger.stores.commits.after(ws, before, 10);
    expect(commits.map((c) => [c.sequence, c.operation, c.subjectIds])).toEqual([
      [issued.body.commit.sequence, 'credentials.create', [issued.body.credential.id]],
      [revoked.body.commit.sequence, 'credentials.revoke', [issued.body.credential.id]],
    ]);
  });

  it('workspaces.list reports exactly current grants of an installation, the bound workspace of a key, current memberships', async () => {
    const { ws, admin, owner, a, installationId } = await setup();
    const enrollment = { can_create_workspace: false, policy: 'admin_managed_pilot' };
    const workspace = (await admin.get('/v1/workspaces')).body.workspaces.find((w: { id: string }) => w.id === ws);
    const listing = (ids: unknown[]) => ({ workspaces: ids, next_cursor: null, enrollment });
    const app = admin.as(
      (
        await issue(admin, {
          kind: 'installation',
          product_installation_id: installationId,
          name: 'i',
          capabilities: ['read'],
        })
      ).body.secret,
      null,
    );
    const key = admin.as(
      (await issue(admin, { kind: 'service_key', name: 'k', capabilities: ['read'] })).body.secret,
      null,
    );

    expect((await app.get('/v1/workspaces')).body).toEqual(listing([]));
    expect((await key.get('/v1/workspaces')).body).toEqual(listing([workspace]));
    const grant = {
      target: { kind: 'installation', product_installation_id: installationId },
      capabilities: ['read'],
      inherit: false,
    };
    await admin.put(`/v1/namespaces/${a}/grants`, { grants: [grant] });
    expect((await app.get('/v1/workspaces')).body).toEqual(listing([workspace]));
    await admin.put(`/v1/namespaces/${a}/grants`, { grants: [] });
    expect((await app.get('/v1/workspaces')).body).toEqual(listing([]));
    expectError(await app.post('/v1/workspaces', { name: 'mine' }), 403, 'forbidden');
    expectError(await key.post('/v1/workspaces', { name: 'mine' }), 403, 'forbidden');

    // A person sees the workspace while a member, and not after removal.
    const bob = await h.human({ enroll: false });
    const bobApi = await bob.api();
    const members = (extra: { actor_id: string; role: string }[]) =>
      admin.put(`/v1/workspaces/${ws}/members`, { members: [{ actor_id: owner.actorId, role: 'admin' }, ...extra] });
    await members([{ actor_id: bob.actorId, role: 'member' }]);
    expect((await bobApi.get('/v1/workspaces')).body).toEqual(listing([workspace]));
    await members([]);
    expect((await bobApi.get('/v1/workspaces')).body).toEqual(listing([]));
  });

  it('pages installations and credentials', async () => {
    const { admin } = await setup();
    for (let i = 0; i < 3; i += 1) await admin.post('/v1/installations', { name: `p${i}` });
    const first = await admin.get('/v1/installations', { query: { limit: 2 } });
    expect(first.body.installations).toHaveLength(2);
    const second = await admin.get('/v1/installations', { query: { limit: 2, cursor: first.body.next_cursor } });
    expect(second.body.installations).toHaveLength(2);
    expect(second.body.next_cursor).toBeNull();
    const names = [...first.body.installations, ...second.body.installations].map((i: { name: string }) => i.name);
    expect(names).toEqual(['crm', 'p0', 'p1', 'p2']);
  });
});
