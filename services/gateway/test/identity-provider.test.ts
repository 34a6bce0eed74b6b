import crypto from 'node:crypto';
import { ApiClient, cliLines, runSvc } from '@tms/testkit';
import { OidcTestProvider } from '@tms/testkit/oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';
import { expectUnauthenticated } from './shapes';

// The whole identity story against a real OpenID provider (oidc-provider on loopback): tokens
// are obtained from it and verified through its JWKS; credentials are issued through /v1 and
// through the operator CLI, used, revoked, and refused on the next request.

/** Retry a check until it holds (key sets are refetched on the verifier's own schedule). */
async function eventually(check: () => Promise<boolean>, what: string, tries = 40): Promise<void> {
  for (let i = 0; i < tries; i += 1) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`never happened: ${what}`);
}

describe('identity from a real OpenID provider (postgres)', { timeout: 300_000 }, () => {
  let provider: OidcTestProvider;
  let h: Harness;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    provider = await OidcTestProvider.start();
    // JWKS_CACHE_SECONDS=1: a key the provider retires stops verifying within seconds.
    h = await startHarness({ driver: 'postgres', env: { ...provider.env(), JWKS_CACHE_SECONDS: '1' } });
    // The CLI is given the gateway's issuers, as the operator runs it (svc admin enroll checks them).
    cliEnv = { DATABASE_URL: h.database?.url ?? '', USER: 'ops-test', ...provider.env() };
  });
  afterAll(async () => {
    await h?.close();
    await provider?.close();
  });

  const svc = async (args: string[]) => {
    const run = await runSvc(args, cliEnv);
    expect(run.code, `svc ${args.join(' ')}: ${run.stderr}`).toBe(0);
    return run.stdout.trim();
  };

  it('runs the full flow: tokens, enrolled human, credential and service key issued, used, revoked', async () => {
    const subject = `alice-${crypto.randomBytes(4).toString('hex')}`;
    const session = await provider.sessionToken(subject);
    const anonymous = new ApiClient(h.url);

    // Not enrolled yet: the provider's token is valid, workspace creation is not allowed.
    const early = await anonymous.as(session).post('/v1/workspaces', { name: 'too early' });
    expect(early.status, early.text).toBe(403);
    expect(early.body.error.code).toBe('enrollment_required');
    expect(await svc(['admin', 'enroll', '--issuer', provider.issuer, '--subject', subject])).toContain(subject);

    const alice = anonymous.as(session);
    const me = await alice.get('/v1/me');
    expect(me.body).toMatchObject({ actor: { issuer: provider.issuer, subject }, caller_kind: 'session' });
    const created = await alice.post('/v1/workspaces', { name: 'acme' });
    expect(created.status, created.text).toBe(200);
    const ws = created.body.workspace.id as string;
    const admin = alice.in(ws);
    const ns = (await admin.post('/v1/namespaces', { parent_id: null, name: 'crm' })).body.namespace.id as string;

    // An OAuth client of the same provider: client credentials with our audience as resource.
    const backoffice = await provider.accessToken({ clientId: 'backoffice', scope: 'svc:read svc:admin' });
    const oauthMe = await anonymous.as(backoffice).get('/v1/me');
    expect(oauthMe.body).toMatchObject({ caller_kind: 'oauth', scopes: ['svc:read', 'svc:admin'] });
    await admin.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: me.body.actor.id, role: 'admin' },
        { actor_id: oauthMe.body.actor.id, role: 'admin' },
      ],
    });
    const installation = await anonymous.as(backoffice, ws).post('/v1/installations', { name: 'crm-sync' });
    expect(installation.status, installation.text).toBe(200);
    const installationId = installation.body.installation.id as string;
    // A token the provider minted for another resource is not ours.
    const foreign = await provider.accessToken({ scope: 'svc:read', resource: 'urn:example:other-api' });
    expectUnauthenticated(await anonymous.as(foreign).get('/v1/me'), 'token for another audience');

    // Issue an installation credential over /v1 and a service key through the operator CLI.
    const issued = await admin.post('/v1/credentials', {
      kind: 'installation',
      product_installation_id: installationId,
      name: 'crm-sync-prod',
      capabilities: ['read', 'observe'],
    });
    expect(issued.status, issued.text).toBe(200);
    const credential = issued.body.credential as { id: string };
    const appSecret = issued.body.secret as string;
    const serviceKey = await runSvc(
      ['admin', 'service-key', 'issue', '--workspace', ws, '--name', 'nightly', '--capabilities', 'read'],
      cliEnv,
    );
    expect(serviceKey.code, serviceKey.stderr).toBe(0);
    const keySecret = serviceKey.stdout.trim();
    expect(keySecret).toMatch(/^tms_sk_[0-9a-z]{24}_[0-9a-z]{52}$/);
    expect(cliLines(serviceKey.stderr).join('\n')).toMatch(/issued service key cred_\w+ \(read\) at commit \d+/);
    const keyId = `cred_${keySecret.slice(7, 31)}`;
    const listed = await admin.get('/v1/credentials');
    expect(listed.body.credentials.map((c: { id: string }) => c.id)).toEqual([credential.id, keyId]);

    // Use each.
    const granted = await admin.put(`/v1/namespaces/${ns}/grants`, {
      grants: [
        {
          target: { kind: 'installation', product_installation_id: installationId },
          capabilities: ['read', 'observe'],
          inherit: true,
        },
        { target: { kind: 'credential', credential_id: keyId }, capabilities: ['read'], inherit: true },
      ],
    });
    expect(granted.status, granted.text).toBe(200);
    const app = anonymous.as(appSecret);
    const job = anonymous.as(keySecret);
    const memory = await app.post('/v1/memories', {
      namespace_id: ns,
      kind: 'claim',
      text: 'Acme renewed for two years.',
      valid_from: 1700000000,
    });
    expect(memory.status, memory.text).toBe(200);
    const path = `/v1/memories/${memory.body.memory.id}`;
    expect((await job.get(path)).body.view.revision.text).toBe('Acme renewed for two years.');
    expect((await alice.in(ws).get(path)).status).toBe(200);

    // Revoke each: the credential over /v1, the service key through the CLI; the next request fails.
    expect((await app.get(path)).status).toBe(200);
    const revoked = await admin.post(`/v1/credentials/${credential.id}/revoke`, {});
    expect(revoked.status, revoked.text).toBe(200);
    expectUnauthenticated(await app.get(path), 'revoked installation credential');
    expect((await job.get(path)).status).toBe(200);
    expect(await svc(['admin', 'service-key', 'revoke', '--workspace', ws, '--id', keyId])).toBe(keyId);
    expectUnauthenticated(await job.get(path), 'revoked service key');
    // The operator sees both, revoked, and never a secret.
    const listing = await svc(['admin', 'credential', 'list', '--workspace', ws]);
    expect(listing.split('\n').map((line) => line.split('\t'))).toEqual([
      [credential.id, 'installation', installationId, 'crm-sync-prod', 'read,observe', 'revoked'],
      [keyId, 'service_key', '-', 'nightly', 'read', 'revoked'],
    ]);
    // The human and the OAuth client are untouched.
    expect((await alice.in(ws).get(path)).status).toBe(200);
    expect((await anonymous.as(backoffice, ws).get('/v1/credentials')).body.credentials).toHaveLength(2);
  });

  it('the CLI refuses bad requests with a one-line reason and a non-zero exit', async () => {
    const absent = await runSvc(
      ['admin', 'service-key', 'issue', '--workspace', 'ws_absent', '--name', 'x', '--capabilities', 'read'],
      cliEnv,
    );
    expect(absent.code).toBe(1);
    expect(cliLines(absent.stderr)).toEqual([expect.stringMatching(/^svc: not_found/)]);
    const badCapability = await runSvc(
      ['admin', 'service-key', 'issue', '--workspace', 'ws_absent', '--name', 'x', '--capabilities', 'root'],
      cliEnv,
    );
    // A value the catalog refuses is a wrong argument: exit 2, the reason, then the usage.
    expect(badCapability.code).toBe(2);
    expect(cliLines(badCapability.stderr)[0]).toMatch(/^svc: invalid_input/);
    expect(badCapability.stderr).toContain('Usage: svc admin service-key issue');
    const missing = await runSvc(['admin', 'credential', 'issue', '--name', 'x'], cliEnv);
    expect(missing.code).toBe(2);
    expect(cliLines(missing.stderr)[0]).toMatch(/^svc: required option '--workspace <id>' not specified/);
  });

  it('picks up a key rotation at the provider without a restart and refuses tokens of a retired key', async () => {
    const subject = `bob-${crypto.randomBytes(4).toString('hex')}`;
    const api = new ApiClient(h.url);
    const before = await provider.sessionToken(subject);
    expect((await api.as(before).get('/v1/me')).status).toBe(200);

    await provider.rotateKeys();
    const after = await provider.sessionToken(subject);
    const kid = (token: string) => JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString()).kid;
    expect(kid(after)).not.toBe(kid(before));
    await eventually(async () => (await api.as(after).get('/v1/me')).status === 200, 'new key accepted');
    expect((await api.as(before).get('/v1/me')).status, 'old key still published').toBe(200);

    await provider.retireOldKeys();
    await eventually(async () => (await api.as(before).get('/v1/me')).status === 401, 'retired key refused');
    expectUnauthenticated(await api.as(before).get('/v1/me'), 'token signed with a retired key');
    expect((await api.as(after).get('/v1/me')).status).toBe(200);
    const access = await provider.accessToken({ scope: 'svc:read' });
    expect((await api.as(access).get('/v1/workspaces')).status).toBe(200);
  });
});
