import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';

describe.each(DRIVERS)('admitting a second person (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  it('learns its actor id from /v1/me, is added as member, granted read on one namespace, and reads only that', async () => {
    const { id: ws, owner, api: admin } = await h.workspace();
    const shared = (await admin.post('/v1/namespaces', { parent_id: null, name: 'shared' })).body.namespace;
    const secret = (await admin.post('/v1/namespaces', { parent_id: null, name: 'secret' })).body.namespace;
    const memory = (
      await admin.post('/v1/memories', { namespace_id: shared.id, kind: 'claim', text: 'visible', valid_from: 0 })
    ).body.memory;
    const hidden = (
      await admin.post('/v1/memories', { namespace_id: secret.id, kind: 'claim', text: 'hidden', valid_from: 0 })
    ).body.memory;

    // Bob is not enrolled and not a member: he learns his id, and sees nothing of the workspace.
    const bob = await h.human({ enroll: false });
    const bobApi = await bob.api(ws);
    const me = await bobApi.get('/v1/me', { workspace: null });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      actor: { id: bob.actorId, issuer: h.issuer.sessionIssuer, subject: bob.subject },
      caller_kind: 'session',
      workspace_id: null,
      scopes: ['svc:read', 'svc:observe', 'svc:verify', 'svc:correct', 'svc:forget', 'svc:admin'],
    });
    expect((await bobApi.get(`/v1/namespaces/${shared.id}`)).status).toBe(404);

    // The admin adds him and grants read on `shared` only.
    const members = await admin.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: bob.actorId, role: 'member' },
      ],
    });
    expect(members.status).toBe(200);
    expect(members.body.members).toHaveLength(2);
    const grants = await admin.put(`/v1/namespaces/${shared.id}/grants`, {
      grants: [{ target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read'], inherit: false }],
    });
    expect(grants.status).toBe(200);

    expect((await bobApi.get(`/v1/memories/${memory.id}`)).body.view.revision.text).toBe('visible');
    expect((await bobApi.get(`/v1/namespaces/${shared.id}`)).status).toBe(200);
    const listed = await bobApi.get('/v1/namespaces');
    expect(listed.body.namespaces.map((n: { id: string }) => n.id)).toEqual([shared.id]);
    expect((await bobApi.get(`/v1/memories/${hidden.id}`)).body.error.code).toBe('not_found');
    expect((await bobApi.get(`/v1/namespaces/${secret.id}`)).body.error.code).toBe('not_found');
    // Read does not allow writing.
    const write = await bobApi.post('/v1/memories', {
      namespace_id: shared.id,
      kind: 'claim',
      text: 'x',
      valid_from: 0,
    });
    expect(write.body.error.code).toBe('forbidden');
    const workspaces = await bobApi.get('/v1/workspaces', { workspace: null });
    expect(workspaces.body.workspaces.map((w: { id: string }) => w.id)).toEqual([ws]);
    expect(workspaces.body.enrollment.can_create_workspace).toBe(false);
  });
});
