import { AUTH_FAILURES } from '@tms/auth';
import { type CallResult, freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';
import { expectUnauthenticated } from './shapes';

/*
 * A 401 says why (RFC 6750 §3): `WWW-Authenticate: Bearer error="invalid_token",
 * error_description="<reason>"` and the same reason in `X-Error-Detail`, a plain `Bearer` when no
 * token came (§3.1); the body stays the exact error object, the request's log line records the
 * reason. Alike on /v1, /graphql and /mcp, with tokens of a real issuer (TestIssuer's JWKS).
 */

const nowSeconds = () => Math.floor(Date.now() / 1000);
const sleepUntil = (seconds: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, seconds * 1000 - Date.now())));

describe('401 reasons', () => {
  let h: Harness;
  let ws: string;

  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite' });
    ws = (await h.workspace()).id;
  });
  afterAll(() => h?.close());

  /** The same unauthenticated request on each transport. */
  const transports: Record<string, (authorization: string | null) => Promise<CallResult>> = {
    rest: (authorization) => h.api.get('/v1/me', { token: null, headers: authorization ? { authorization } : {} }),
    graphql: (authorization) =>
      h.api.call('POST', '/graphql', {
        token: null,
        idem: null,
        raw: JSON.stringify({ query: '{ me { actor { id } } }' }),
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      }),
    mcp: (authorization) =>
      h.api.call('POST', '/mcp', {
        token: null,
        idem: null,
        raw: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-service-workspace': ws,
          ...(authorization ? { authorization } : {}),
        },
      }),
  };

  it('each cause has its reason, on REST, GraphQL over HTTP and MCP over HTTP', async () => {
    const subject = `reasons-${freshKey()}`;
    const tokens: [string, Promise<string>, string][] = [
      ['expired', h.issuer.sessionToken(subject, { exp: nowSeconds() - 600 }), AUTH_FAILURES.expired],
      ['not yet valid', h.issuer.sessionToken(subject, { nbf: nowSeconds() + 600 }), AUTH_FAILURES.notYetValid],
      [
        'wrong audience',
        h.issuer.accessToken(subject, 'svc:read', { audience: 'urn:someone:else' }),
        AUTH_FAILURES.audience,
      ],
      [
        'unknown issuer',
        h.issuer.sessionToken(subject, { issuer: 'https://idp.example.com/' }),
        AUTH_FAILURES.untrusted,
      ],
      ['unknown key', h.issuer.accessToken(subject, 'svc:read', { rogueKey: true }), AUTH_FAILURES.untrusted],
      ['malformed', Promise.resolve('not-a-jwt'), AUTH_FAILURES.malformed],
      ['no exp', h.issuer.sessionToken(subject, { exp: null }), AUTH_FAILURES.malformed],
    ];
    for (const [name, send] of Object.entries(transports)) {
      expectUnauthenticated(await send(null), `${name}: no token`, null);
      for (const [why, token, reason] of tokens) {
        const res = await send(`Bearer ${await token}`);
        expectUnauthenticated(res, `${name}: ${why}`, reason);
      }
    }
  });

  it('unknown, wrong and revoked credentials share one reason; an expired one says so', async () => {
    const { api: admin } = await h.workspace();
    const issue = async (extra: Record<string, unknown> = {}) => {
      const res = await admin.post('/v1/credentials', {
        kind: 'service_key',
        name: 'k',
        capabilities: ['read'],
        ...extra,
      });
      expect(res.status, res.text).toBe(200);
      return res.body as { secret: string; credential: { id: string } };
    };
    const live = await issue();
    const revoked = await issue();
    expect((await admin.post(`/v1/credentials/${revoked.credential.id}/revoke`, {})).status).toBe(200);
    const last = live.secret.at(-1) === 'a' ? 'b' : 'a';
    const secrets = {
      revoked: revoked.secret,
      'wrong secret': `${live.secret.slice(0, -1)}${last}`,
      'unknown id': `tms_sk_${'0'.repeat(24)}_${live.secret.slice(-52)}`,
      truncated: live.secret.slice(0, -1),
    };
    for (const [name, send] of Object.entries(transports)) {
      for (const [why, secret] of Object.entries(secrets)) {
        expectUnauthenticated(await send(`Bearer ${secret}`), `${name}: ${why}`, AUTH_FAILURES.credential);
      }
    }

    const expiresAt = Date.now() / 1000 + 1.5;
    const brief = await issue({ expires_at: expiresAt });
    expect((await transports.rest?.(`Bearer ${brief.secret}`))?.status).toBe(200);
    await sleepUntil(expiresAt + 0.05);
    for (const [name, send] of Object.entries(transports)) {
      expectUnauthenticated(await send(`Bearer ${brief.secret}`), name, AUTH_FAILURES.credentialExpired);
    }
  });

  it("the request's log line records the reason; a missing token logs none", async () => {
    const expired = await h.issuer.sessionToken(`log-${freshKey()}`, { exp: nowSeconds() - 600 });
    const ids = { expired: `why-${freshKey()}`, missing: `why-${freshKey()}` };
    await h.api.get('/v1/me', {
      token: null,
      headers: { authorization: `Bearer ${expired}`, 'x-request-id': ids.expired },
    });
    await h.api.get('/v1/me', { token: null, headers: { 'x-request-id': ids.missing } });
    const line = (id: string) =>
      h.logs.map((text) => JSON.parse(text)).find((entry) => entry.msg === 'request' && entry.request_id === id);
    expect(line(ids.expired)).toMatchObject({ status: 401, code: 'unauthenticated', reason: AUTH_FAILURES.expired });
    expect(line(ids.missing)).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(line(ids.missing)).not.toHaveProperty('reason');
    // The reason names the cause, never the token.
    expect(JSON.stringify(line(ids.expired))).not.toContain(expired.split('.')[2]);
  });
});
