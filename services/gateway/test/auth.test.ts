import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AUTH_FAILURES } from '@tms/auth';
import { ALL_SCOPES, type ApiClient, type CallResult, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';
import { expectUnauthenticated } from './shapes';

// ---------------------------------------------------------------------------------------------
// Helpers: hand-crafted JWTs (node:crypto only, so that nothing in the token comes from the
// issuer under test) and the expected 401.
// ---------------------------------------------------------------------------------------------

const b64url = (value: object | string | Buffer) =>
  Buffer.isBuffer(value)
    ? value.toString('base64url')
    : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8').toString('base64url');

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A JWS compact token with an RS256 signature made by `key`. */
function signRs256(header: object, payload: object, key: crypto.KeyObject): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${b64url(crypto.sign('sha256', Buffer.from(input), key))}`;
}

/** Whether `token` carries a valid RS256 signature by `publicKey` (proves a crafted token is well made). */
function rs256Valid(token: string, publicKey: crypto.KeyObject): boolean {
  const [h, p, s] = token.split('.') as [string, string, string];
  return crypto.verify('sha256', Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s, 'base64url'));
}

interface PublishedKey {
  kid: string;
  kty: string;
  alg: string;
  [k: string]: unknown;
}

async function publishedKeys(h: Harness, which: 'session' | 'oauth'): Promise<PublishedKey[]> {
  const res = await fetch(`${h.issuer.origin}/${which}/jwks`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { keys: PublishedKey[] }).keys;
}

/**
 * The issuer's own published RS256 signing key, for positive controls: a hand-crafted token signed
 * with it must be accepted, so that the refusal of its variant is due to the one thing changed.
 * (TestIssuer keeps its keys private; reaching in is confined to this helper.)
 */
function issuerKey(h: Harness, which: 'session' | 'oauth'): { kid: string; key: crypto.KeyObject } {
  type Key = { kid: string; alg: string; privateKey: crypto.webcrypto.CryptoKey };
  const keys = (h.issuer as unknown as { keys?: Record<string, Key[]> }).keys;
  const key = keys?.[which]?.find((k) => k.alg === 'RS256');
  if (!key) throw new Error('TestIssuer no longer holds its keys under `keys`');
  return { kid: key.kid, key: crypto.KeyObject.from(key.privateKey) };
}

const randomSubject = (prefix = 'user') => `${prefix}-${crypto.randomBytes(5).toString('hex')}`;

/** The parts of a response an ordinary client can compare, without the request id. */
function observable(res: CallResult) {
  const headers = Object.fromEntries(
    [...res.headers.entries()].filter(([name]) => name !== 'date' && name !== 'x-request-id'),
  );
  const body = structuredClone(res.body);
  if (body?.error) delete body.error.request_id;
  return { status: res.status, headers, body };
}

// ---------------------------------------------------------------------------------------------
// Token verification: no database involved beyond actor lookup, so PGlite only.
// ---------------------------------------------------------------------------------------------

describe('bearer token verification (pglite)', () => {
  let h: Harness;
  let me: (token: string | null, headers?: Record<string, string>) => Promise<CallResult>;

  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite' });
    me = (token, headers = {}) => h.api.get('/v1/me', { token, headers });
  });
  afterAll(() => h?.close());

  /** A standard session payload from the configured issuer, to be varied. */
  const sessionPayload = (subject: string, extra: Record<string, unknown> = {}) => ({
    iss: h.issuer.sessionIssuer,
    sub: subject,
    aud: h.issuer.sessionAudience,
    iat: nowSeconds(),
    exp: nowSeconds() + 600,
    ...extra,
  });

  describe('accepted', () => {
    it.each([
      ['session', 'RS256'],
      ['session', 'ES256'],
      ['oauth', 'RS256'],
      ['oauth', 'ES256'],
    ] as const)('%s token signed %s', async (kind, alg) => {
      const subject = randomSubject();
      const token =
        kind === 'session'
          ? await h.issuer.sessionToken(subject, { alg })
          : await h.issuer.accessToken(subject, 'svc:read', { alg });
      const res = await me(token);
      expect(res.status, res.text).toBe(200);
      expect(res.body.caller_kind).toBe(kind);
      expect(res.body.actor.subject).toBe(subject);
      expect(res.body.actor.issuer).toBe(kind === 'session' ? h.issuer.sessionIssuer : h.issuer.oauthIssuer);
      expect(res.body.actor.id).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/);
      expect(res.body.workspace_id).toBeNull();
      expect(res.body.scopes).toEqual(
        kind === 'session'
          ? ['svc:read', 'svc:observe', 'svc:verify', 'svc:correct', 'svc:forget', 'svc:admin']
          : ['svc:read'],
      );
    });

    it('an OAuth token without a scope claim gets the default scopes svc:read svc:observe', async () => {
      const token = await h.issuer.accessToken(randomSubject(), null);
      expect(JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString())).not.toHaveProperty(
        'scope',
      );
      const res = await me(token);
      expect(res.status).toBe(200);
      expect(res.body.caller_kind).toBe('oauth');
      expect(res.body.scopes).toEqual(['svc:read', 'svc:observe']);
    });

    it('an OAuth token with a scope claim gets exactly those scopes', async () => {
      const res = await me(await h.issuer.accessToken(randomSubject(), 'svc:verify svc:admin'));
      expect(res.status).toBe(200);
      expect(res.body.scopes).toEqual(['svc:verify', 'svc:admin']);
    });

    it('a session token whose aud array contains the session audience', async () => {
      const res = await me(
        await h.issuer.sessionToken(randomSubject(), { audience: ['urn:someone:else', h.issuer.sessionAudience] }),
      );
      expect(res.status).toBe(200);
      expect(res.body.caller_kind).toBe('session');
    });
  });

  describe('refused with 401 unauthenticated and WWW-Authenticate: Bearer', () => {
    it('no Authorization header, on a directory and on a workspace operation', async () => {
      // RFC 6750 §3.1: no token, no error code in the challenge.
      expectUnauthenticated(await me(null), 'me.get', null);
      expectUnauthenticated(
        await h.api.get('/v1/namespaces', { workspace: 'ws_doesnotmatter' }),
        'namespaces.list',
        null,
      );
      expectUnauthenticated(await h.api.post('/v1/workspaces', { name: 'x' }), 'workspaces.create', null);
    });

    it('a scheme other than Bearer, even around a valid token', async () => {
      const valid = await h.issuer.sessionToken(randomSubject());
      expect((await me(valid)).status).toBe(200);
      for (const authorization of [
        `Basic ${Buffer.from('user:pass').toString('base64')}`,
        `Token ${valid}`,
        `JWT ${valid}`,
        `Bearer${valid}`,
        valid,
      ]) {
        expectUnauthenticated(
          await h.api.get('/v1/me', { token: null, headers: { authorization } }),
          authorization,
          null,
        );
      }
    });

    it('garbage tokens', async () => {
      for (const garbage of ['garbage', 'a.b.c', 'a.b', '...', 'eyJhbGciOiJSUzI1NiJ9.e30', 'e30.e30.e30']) {
        expectUnauthenticated(await me(garbage), garbage, AUTH_FAILURES.malformed);
      }
      expectUnauthenticated(await h.api.get('/v1/me', { token: null, headers: { authorization: 'Bearer ' } }), 'empty');
      expectUnauthenticated(
        await h.api.get('/v1/me', { token: null, headers: { authorization: 'Bearer a b' } }),
        'a b',
      );
    });

    it('expired beyond the 60 s clock tolerance', async () => {
      const subject = randomSubject();
      const exp = nowSeconds() - 90;
      const expired = AUTH_FAILURES.expired;
      expectUnauthenticated(await me(await h.issuer.sessionToken(subject, { exp })), 'session', expired);
      expectUnauthenticated(await me(await h.issuer.accessToken(subject, 'svc:read', { exp })), 'oauth', expired);
      expectUnauthenticated(
        await me(await h.issuer.sessionToken(subject, { exp: nowSeconds() - 3600 })),
        'an hour ago',
      );
    });

    it('not valid before a time beyond the tolerance', async () => {
      const nbf = nowSeconds() + 120;
      const early = AUTH_FAILURES.notYetValid;
      expectUnauthenticated(await me(await h.issuer.sessionToken(randomSubject(), { nbf })), 'session', early);
      expectUnauthenticated(await me(await h.issuer.accessToken(randomSubject(), 'svc:read', { nbf })), 'oauth', early);
    });

    it('without exp', async () => {
      expectUnauthenticated(await me(await h.issuer.sessionToken(randomSubject(), { exp: null })), 'session');
      expectUnauthenticated(await me(await h.issuer.accessToken(randomSubject(), 'svc:read', { exp: null })), 'oauth');
    });

    it('with an issuer that is not the configured one as an exact string', async () => {
      const s = randomSubject();
      const { sessionIssuer, oauthIssuer } = h.issuer;
      const cases: [string, Promise<string>][] = [
        ['unknown issuer', h.issuer.sessionToken(s, { issuer: 'https://idp.example.com/' })],
        ['session issuer with a trailing slash', h.issuer.sessionToken(s, { issuer: `${sessionIssuer}/` })],
        ['session issuer in upper case', h.issuer.sessionToken(s, { issuer: sessionIssuer.toUpperCase() })],
        ['oauth issuer with a trailing slash', h.issuer.accessToken(s, 'svc:read', { issuer: `${oauthIssuer}/` })],
        // The other issuer's iss, signed with the token's own issuer's key.
        ['session token claiming the oauth iss', h.issuer.sessionToken(s, { issuer: oauthIssuer })],
        ['oauth token claiming the session iss', h.issuer.accessToken(s, 'svc:read', { issuer: sessionIssuer })],
      ];
      for (const [why, token] of cases) expectUnauthenticated(await me(await token), why, AUTH_FAILURES.untrusted);
    });

    it('signed by a key the JWKS never published (unknown kid)', async () => {
      expectUnauthenticated(
        await me(await h.issuer.sessionToken(randomSubject(), { rogueKey: true })),
        'session RS256',
        AUTH_FAILURES.untrusted,
      );
      expectUnauthenticated(
        await me(await h.issuer.sessionToken(randomSubject(), { rogueKey: true, alg: 'ES256' })),
        'session ES256',
      );
      expectUnauthenticated(
        await me(await h.issuer.accessToken(randomSubject(), 'svc:read', { rogueKey: true })),
        'oauth',
      );
    });

    it('signed by an unpublished key under a published kid', async () => {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const session = issuerKey(h, 'session');
      expect((await publishedKeys(h, 'session')).map((k) => k.kid)).toContain(session.kid);
      const header = { alg: 'RS256', typ: 'JWT', kid: session.kid };
      const payload = sessionPayload(randomSubject());
      // Control: the very same header and claims signed by the published key are accepted.
      expect((await me(signRs256(header, payload, session.key))).status).toBe(200);
      const forged = signRs256(header, payload, privateKey);
      expect(rs256Valid(forged, publicKey)).toBe(true); // a well-formed, correctly signed token...
      expectUnauthenticated(await me(forged), 'session', AUTH_FAILURES.signature); // ...by the wrong key

      const oauth = issuerKey(h, 'oauth');
      const accessHeader = { alg: 'RS256', typ: 'at+jwt', kid: oauth.kid };
      const accessPayload = {
        iss: h.issuer.oauthIssuer,
        sub: randomSubject(),
        aud: h.issuer.oauthAudience,
        exp: nowSeconds() + 600,
        scope: ALL_SCOPES,
      };
      expect((await me(signRs256(accessHeader, accessPayload, oauth.key))).status).toBe(200);
      expectUnauthenticated(await me(signRs256(accessHeader, accessPayload, privateKey)), 'oauth');
    });

    it("signed by the other issuer's key", async () => {
      const s = randomSubject();
      // A session token (typ JWT, session iss and aud) signed with the OAuth server's key.
      const sessionByOauthKey = await h.issuer.accessToken(s, null, {
        typ: 'JWT',
        issuer: h.issuer.sessionIssuer,
        audience: h.issuer.sessionAudience,
      });
      expectUnauthenticated(await me(sessionByOauthKey), 'session token signed by the oauth key');
      // An access token (typ at+jwt, oauth iss and aud) signed with the session issuer's key.
      for (const alg of ['RS256', 'ES256'] as const) {
        const accessBySessionKey = await h.issuer.sessionToken(s, {
          alg,
          typ: 'at+jwt',
          issuer: h.issuer.oauthIssuer,
          audience: h.issuer.oauthAudience,
          claims: { scope: ALL_SCOPES },
        });
        expectUnauthenticated(await me(accessBySessionKey), `access token signed by the session key (${alg})`);
      }
    });

    it('alg none', async () => {
      const payload = sessionPayload(randomSubject());
      const { kid, key } = issuerKey(h, 'session');
      expect((await me(signRs256({ alg: 'RS256', typ: 'JWT', kid }, payload, key))).status).toBe(200);
      for (const alg of ['none', 'None', 'NONE']) {
        for (const header of [
          { alg, typ: 'JWT' },
          { alg, typ: 'JWT', kid },
        ]) {
          expectUnauthenticated(await me(`${b64url(header)}.${b64url(payload)}.`), JSON.stringify(header));
        }
        // A signature segment that is present but meaningless does not help either.
        expectUnauthenticated(await me(`${b64url({ alg, typ: 'JWT', kid })}.${b64url(payload)}.c2ln`), `${alg} + sig`);
      }
      // An OAuth token with alg none and full scopes.
      const access = `${b64url({ alg: 'none', typ: 'at+jwt' })}.${b64url({
        iss: h.issuer.oauthIssuer,
        sub: randomSubject(),
        aud: h.issuer.oauthAudience,
        exp: nowSeconds() + 600,
        scope: ALL_SCOPES,
      })}.`;
      expectUnauthenticated(await me(access), 'oauth none');
    });

    it('HS256 keyed with the published RSA public key (algorithm confusion)', async () => {
      const published = (await publishedKeys(h, 'session')).find((k) => k.kty === 'RSA');
      expect(published).toBeDefined();
      const publicKey = crypto.createPublicKey({ key: published as crypto.JsonWebKey, format: 'jwk' });
      const pems = [
        publicKey.export({ type: 'spki', format: 'pem' }) as string,
        publicKey.export({ type: 'pkcs1', format: 'pem' }) as string,
      ];
      for (const pem of [...pems, ...pems.map((p) => p.trimEnd())]) {
        for (const header of [
          { alg: 'HS256', typ: 'JWT', kid: published?.kid },
          { alg: 'HS256', typ: 'JWT' },
        ]) {
          const input = `${b64url(header)}.${b64url(sessionPayload(randomSubject()))}`;
          const signature = crypto.createHmac('sha256', pem).update(input).digest('base64url');
          expectUnauthenticated(await me(`${input}.${signature}`), `HS256 ${JSON.stringify(header)}`);
        }
      }
    });

    it('a tampered payload under a valid signature', async () => {
      const victim = await h.human();
      const token = await h.issuer.sessionToken(randomSubject());
      expect((await me(token)).status).toBe(200);
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      for (const change of [
        { sub: victim.subject },
        { exp: claims.exp + 3600 },
        { aud: 'urn:other' },
        { extra: true },
      ]) {
        expectUnauthenticated(
          await me(`${header}.${b64url({ ...claims, ...change })}.${signature}`),
          JSON.stringify(change),
        );
      }
      // Re-encoding the same claims with different whitespace changes the signed bytes too.
      const respaced = Buffer.from(JSON.stringify(claims, null, 1)).toString('base64url');
      expectUnauthenticated(await me(`${header}.${respaced}.${signature}`), 'respaced');
      // A flipped signature bit.
      const sig = Buffer.from(signature, 'base64url');
      sig[0] = (sig[0] as number) ^ 1;
      expectUnauthenticated(await me(`${header}.${payload}.${sig.toString('base64url')}`), 'signature bit');
    });

    it('a key embedded in the header (jwk), even under a published kid', async () => {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const jwk = { ...publicKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig' };
      const published = issuerKey(h, 'session');
      const payload = sessionPayload(randomSubject());
      expect(
        (await me(signRs256({ alg: 'RS256', typ: 'JWT', kid: published.kid }, payload, published.key))).status,
      ).toBe(200);
      for (const header of [
        { alg: 'RS256', typ: 'JWT', jwk },
        { alg: 'RS256', typ: 'JWT', jwk: { ...jwk, kid: published.kid }, kid: published.kid },
      ]) {
        const token = signRs256(header, payload, privateKey);
        expect(rs256Valid(token, publicKey)).toBe(true);
        expectUnauthenticated(await me(token), JSON.stringify(Object.keys(header)));
      }
      // Key material in the header is refused outright, even on a token the published key signed.
      const withJwk = { alg: 'RS256', typ: 'JWT', kid: published.kid, jwk };
      expectUnauthenticated(await me(signRs256(withJwk, payload, published.key)), 'jwk on a genuine token');
    });

    it('a key set URL in the header (jku) pointing at a JWKS the attacker serves', async () => {
      const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const kid = `attacker-${crypto.randomBytes(3).toString('hex')}`;
      const jwks = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] };
      let fetched = 0;
      const server = http.createServer((_req, res) => {
        fetched += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const jku = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
        const token = signRs256({ alg: 'RS256', typ: 'JWT', kid, jku }, sessionPayload(randomSubject()), privateKey);
        expect(rs256Valid(token, publicKey)).toBe(true);
        expectUnauthenticated(await me(token), 'jku');
        const x5u = signRs256({ alg: 'RS256', typ: 'JWT', kid, x5u: jku }, sessionPayload(randomSubject()), privateKey);
        expectUnauthenticated(await me(x5u), 'x5u');
        // Even on a token the published key signed.
        const published = issuerKey(h, 'session');
        const genuine = signRs256(
          { alg: 'RS256', typ: 'JWT', kid: published.kid, jku },
          sessionPayload(randomSubject()),
          published.key,
        );
        expectUnauthenticated(await me(genuine), 'jku on a genuine token');
        expect(fetched).toBe(0); // the service never looked at the attacker's URL
      } finally {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      }
    });

    it('an OAuth access token with typ JWT or without typ', async () => {
      const s = randomSubject();
      expect((await me(await h.issuer.accessToken(s, 'svc:read'))).status).toBe(200); // control: typ at+jwt
      expectUnauthenticated(await me(await h.issuer.accessToken(s, 'svc:read', { typ: 'JWT' })), 'typ JWT');
      expectUnauthenticated(await me(await h.issuer.accessToken(s, 'svc:read', { typ: null })), 'no typ');
      expectUnauthenticated(await me(await h.issuer.accessToken(s, 'svc:read', { typ: 'at-jwt' })), 'typ at-jwt');
    });

    it('an OAuth access token with an audience other than exactly the configured one', async () => {
      const s = randomSubject();
      const aud = h.issuer.oauthAudience;
      for (const [why, audience] of [
        ['other audience', 'urn:tms:test:other'],
        ['audience with a trailing slash', `${aud}/`],
        ['the session audience', h.issuer.sessionAudience],
        ['missing aud', null],
      ] as const) {
        expectUnauthenticated(
          await me(await h.issuer.accessToken(s, 'svc:read', { audience })),
          why,
          AUTH_FAILURES.audience,
        );
      }
    });

    it('a session token with the wrong audience', async () => {
      const s = randomSubject();
      const aud = h.issuer.sessionAudience;
      for (const [why, audience] of [
        ['other audience', 'urn:tms:test:other'],
        ['audience with a trailing slash', `${aud}/`],
        ['the oauth audience', h.issuer.oauthAudience],
        ['missing aud', null],
      ] as const) {
        expectUnauthenticated(await me(await h.issuer.sessionToken(s, { audience })), why, AUTH_FAILURES.audience);
      }
    });

    it('a refused token wins over every later check (workspace, idempotency, body)', async () => {
      const expired = await h.issuer.sessionToken(randomSubject(), { exp: nowSeconds() - 600 });
      expectUnauthenticated(
        await h.api.get('/v1/namespaces', { token: expired, workspace: 'ws_absent' }),
        'namespaces.list',
      );
      expectUnauthenticated(
        await h.api.post('/v1/namespaces', { bogus: true }, { token: expired, idem: null, workspace: null }),
        'namespaces.create',
      );
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Actors, scopes and workspace selection: these touch the directory, so every driver.
// ---------------------------------------------------------------------------------------------

describe.each(DRIVERS)('actors, scopes and workspace selection (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  async function meOf(token: string, workspace: string | null = null) {
    const res = await h.api.get('/v1/me', { token, workspace });
    expect(res.status, res.text).toBe(200);
    return res.body as {
      actor: { id: string; issuer: string; subject: string };
      caller_kind: string;
      scopes: string[];
    };
  }

  async function setMembers(admin: ApiClient, ws: string, members: { actor_id: string; role: string }[]) {
    const res = await admin.put(`/v1/workspaces/${ws}/members`, { members }, { workspace: null });
    expect(res.status, res.text).toBe(200);
  }

  function evidenceBody(namespaceId: string, excerpt = `excerpt ${crypto.randomBytes(4).toString('hex')}`) {
    return {
      namespace_id: namespaceId,
      source_locator: 'file:///a.txt',
      content_root_sha256: sha256Hex(excerpt),
      excerpt,
    };
  }

  describe('actors', () => {
    it('the same subject of the session issuer is the same actor, whatever token carries it', async () => {
      const subject = randomSubject();
      const first = await meOf(await h.issuer.sessionToken(subject, { alg: 'RS256' }));
      const second = await meOf(await h.issuer.sessionToken(subject, { alg: 'ES256', expiresIn: 30 }));
      expect(second.actor).toEqual(first.actor);
      expect(first.actor).toEqual({ id: first.actor.id, issuer: h.issuer.sessionIssuer, subject });
      const someoneElse = await meOf(await h.issuer.sessionToken(randomSubject()));
      expect(someoneElse.actor.id).not.toBe(first.actor.id);
    });

    it('an actor is keyed by issuer and subject: the same subject at the OAuth issuer is another actor', async () => {
      const subject = randomSubject();
      const session = await meOf(await h.issuer.sessionToken(subject));
      const oauth = await meOf(await h.issuer.accessToken(subject, 'svc:read'));
      const oauthAgain = await meOf(await h.issuer.accessToken(subject, null, { alg: 'ES256' }));
      expect(oauth.actor.issuer).toBe(h.issuer.oauthIssuer);
      expect(oauth.actor.subject).toBe(subject);
      expect(oauth.actor.id).toBe(oauthAgain.actor.id);
      expect(oauth.actor.id).not.toBe(session.actor.id);
    });

    it('the actor id is never taken from input: claims, headers, query or body', async () => {
      const { id: ws, owner, api: ownerApi } = await h.workspace();
      const bob = await h.human({ enroll: false });
      await setMembers(ownerApi, ws, [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: bob.actorId, role: 'member' },
      ]);
      const ns = (await ownerApi.post('/v1/namespaces', { parent_id: null, name: 'n' })).body.namespace;
      const granted = await ownerApi.put(`/v1/namespaces/${ns.id}/grants`, {
        grants: [
          { target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read', 'observe'], inherit: false },
        ],
      });
      expect(granted.status).toBe(200);

      // Claims naming another actor are ignored.
      const claimed = await h.issuer.sessionToken(bob.subject, {
        claims: { actor_id: owner.actorId, act: { sub: owner.subject }, actor: { id: owner.actorId } },
      });
      expect((await meOf(claimed)).actor.id).toBe(bob.actorId);
      // Headers naming another actor are ignored.
      const bobApi = await bob.api(ws);
      const spoofHeaders = { 'x-actor-id': owner.actorId, 'x-service-actor': owner.actorId };
      const viaHeader = await bobApi.get('/v1/me', { headers: spoofHeaders });
      expect(viaHeader.body.actor.id).toBe(bob.actorId);
      const evidence = await bobApi.post('/v1/evidence', evidenceBody(ns.id), { headers: spoofHeaders });
      expect(evidence.status, evidence.text).toBe(200);
      expect(evidence.body.evidence.recorder_actor_id).toBe(bob.actorId);
      // A body or query field naming the actor is not part of any input: refused.
      const viaBody = await bobApi.post('/v1/evidence', { ...evidenceBody(ns.id), recorder_actor_id: owner.actorId });
      expect(viaBody.status).toBe(400);
      expect(viaBody.body.error.code).toBe('invalid_input');
      const viaQuery = await bobApi.get('/v1/me', { query: { actor_id: owner.actorId } });
      expect(viaQuery.status).toBe(400);
      expect(viaQuery.body.error.code).toBe('invalid_input');
      // Bob holds no admin: naming the owner anywhere does not lend him the owner's rights.
      const rename = await bobApi.patch(`/v1/namespaces/${ns.id}`, { name: 'taken' }, { headers: spoofHeaders });
      expect(rename.status).toBe(403);
      expect(rename.body.error.code).toBe('forbidden');
    });
  });

  describe('OAuth scopes and capabilities both apply', () => {
    async function oauthMember() {
      const { id: ws, owner, api: ownerApi } = await h.workspace();
      const subject = randomSubject('client');
      const token = (scope: string | null) => h.issuer.accessToken(subject, scope);
      const actorId = (await meOf(await token(ALL_SCOPES))).actor.id;
      await setMembers(ownerApi, ws, [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: actorId, role: 'member' },
      ]);
      const ns = (await ownerApi.post('/v1/namespaces', { parent_id: null, name: 'granted' })).body.namespace;
      const hidden = (await ownerApi.post('/v1/namespaces', { parent_id: null, name: 'hidden' })).body.namespace;
      // admin (inherit) on `granted`: every capability there and below.
      const put = await ownerApi.put(`/v1/namespaces/${ns.id}/grants`, {
        grants: [{ target: { kind: 'actor', actor_id: actorId }, capabilities: ['admin'], inherit: true }],
      });
      expect(put.status).toBe(200);
      const as = async (scope: string | null) => h.api.as(await token(scope), ws);
      return { ws, ns, hidden, as, subject, lastSequence: put.body.commit.sequence as number };
    }

    it('svc:read alone cannot create evidence or memories although the namespace capability is held', async () => {
      const { ns, as, lastSequence } = await oauthMember();
      const reader = await as('svc:read');
      expect((await reader.get(`/v1/namespaces/${ns.id}`)).status).toBe(200);
      for (const res of [
        await reader.post('/v1/evidence', evidenceBody(ns.id)),
        await reader.post('/v1/memories', { namespace_id: ns.id, kind: 'claim', text: 't', valid_from: 0 }),
      ]) {
        expect(res.status, res.text).toBe(403);
        expect(res.body.error.code).toBe('forbidden');
      }
      // Nothing was committed: the next write takes the very next sequence.
      const next = await (await as('svc:observe')).post('/v1/evidence', evidenceBody(ns.id));
      expect(next.status, next.text).toBe(200);
      expect(next.body.commit.sequence).toBe(lastSequence + 1);
    });

    it('svc:observe allows creating evidence and memories', async () => {
      const { ns, as } = await oauthMember();
      const observer = await as('svc:read svc:observe');
      const evidence = await observer.post('/v1/evidence', evidenceBody(ns.id));
      expect(evidence.status, evidence.text).toBe(200);
      const memory = await observer.post('/v1/memories', {
        namespace_id: ns.id,
        kind: 'claim',
        text: 'observed',
        valid_from: 0,
        evidence_ids: [evidence.body.evidence.id],
      });
      expect(memory.status, memory.text).toBe(200);
      // The default scopes (no claim) include svc:observe too.
      expect((await (await as(null)).post('/v1/evidence', evidenceBody(ns.id))).status).toBe(200);
    });

    it('namespaces.create and namespaces.update need svc:admin', async () => {
      const { ns, as } = await oauthMember();
      for (const scope of ['svc:read svc:observe', null, 'svc:read svc:observe svc:verify svc:correct svc:forget']) {
        const api = await as(scope);
        const create = await api.post('/v1/namespaces', { parent_id: ns.id, name: 'child' });
        expect(create.status, `${scope}: ${create.text}`).toBe(403);
        expect(create.body.error.code).toBe('forbidden');
        const update = await api.patch(`/v1/namespaces/${ns.id}`, { name: 'renamed' });
        expect(update.body.error.code).toBe('forbidden');
      }
      const admin = await as('svc:admin');
      const created = await admin.post('/v1/namespaces', { parent_id: ns.id, name: 'child' });
      expect(created.status, created.text).toBe(200);
      expect(created.body.namespace.display_path).toEqual(['granted', 'child']);
      const renamed = await admin.patch(`/v1/namespaces/${ns.id}`, { name: 'renamed' });
      expect(renamed.status, renamed.text).toBe(200);
    });

    it('a scope without the namespace capability is not enough', async () => {
      const { hidden, as } = await oauthMember();
      const all = await as(ALL_SCOPES);
      for (const res of [
        await all.get(`/v1/namespaces/${hidden.id}`),
        await all.post('/v1/evidence', evidenceBody(hidden.id)),
        await all.post('/v1/namespaces', { parent_id: hidden.id, name: 'x' }),
      ]) {
        expect(res.status, res.text).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
      // Root namespaces need a workspace admin, whatever the scopes.
      const root = await all.post('/v1/namespaces', { parent_id: null, name: 'root' });
      expect(root.status).toBe(403);
      expect(root.body.error.code).toBe('forbidden');
    });

    it('workspaces.list needs svc:read', async () => {
      const { ws, as } = await oauthMember();
      const denied = await (await as('svc:observe')).get('/v1/workspaces', { workspace: null });
      expect(denied.status).toBe(403);
      expect(denied.body.error.code).toBe('forbidden');
      const listed = await (await as('svc:read')).get('/v1/workspaces', { workspace: null });
      expect(listed.status).toBe(200);
      expect(listed.body.workspaces.map((w: { id: string }) => w.id)).toEqual([ws]);
      expect(listed.body.enrollment).toEqual({ can_create_workspace: false, policy: 'admin_managed_pilot' });
    });
  });

  describe('workspace creation', () => {
    it('an OAuth token is forbidden, even with every scope and an enrolled subject', async () => {
      const subject = randomSubject('client');
      await h.gateway.ledger.stores.directory.enroll(h.issuer.oauthIssuer, subject, Date.now() / 1000);
      const res = await h.api.post(
        '/v1/workspaces',
        { name: 'nope' },
        { token: await h.issuer.accessToken(subject, ALL_SCOPES) },
      );
      expect(res.status, res.text).toBe(403);
      expect(res.body.error.code).toBe('forbidden');
      expect(res.body.error.message).toBe('This operation is not permitted.');
      const listed = await h.api.get('/v1/workspaces', { token: await h.issuer.accessToken(subject, ALL_SCOPES) });
      expect(listed.body.workspaces).toEqual([]);
    });

    it('a session of a non-enrolled actor gets enrollment_required', async () => {
      const bob = await h.human({ enroll: false });
      const api = await bob.api();
      const res = await api.post('/v1/workspaces', { name: 'nope' });
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({
        code: 'enrollment_required',
        message: 'Workspace creation requires pilot enrollment.',
        status: 403,
        retryable: false,
      });
      const listed = await api.get('/v1/workspaces');
      expect(listed.body.workspaces).toEqual([]);
      expect(listed.body.enrollment.can_create_workspace).toBe(false);
    });

    it('enrollment allows several workspaces, each with the creator as admin', async () => {
      const alice = await h.human({ enroll: true });
      const api = await alice.api();
      expect((await api.get('/v1/workspaces')).body.enrollment.can_create_workspace).toBe(true);
      const ids: string[] = [];
      for (const name of ['one', 'two', 'three']) {
        const res = await api.post('/v1/workspaces', { name });
        expect(res.status, res.text).toBe(200);
        expect(res.body.workspace.name).toBe(name);
        ids.push(res.body.workspace.id);
      }
      expect(new Set(ids).size).toBe(3);
      const listed = await api.get('/v1/workspaces');
      expect(listed.body.workspaces.map((w: { id: string }) => w.id).sort()).toEqual([...ids].sort());
      for (const ws of ids) {
        // The creator is admin: may create a root namespace there.
        expect((await api.in(ws).post('/v1/namespaces', { parent_id: null, name: 'root' })).status).toBe(200);
      }
    });
  });

  describe('workspace selection', () => {
    it('a workspace operation without X-Service-Workspace is invalid_input', async () => {
      const { owner } = await h.workspace();
      const api = await owner.api(null);
      for (const res of [
        await api.get('/v1/namespaces'),
        await api.get('/v1/namespaces/ns_aaaaaaaaaaaaaaaaaaaaaaaa'),
      ]) {
        expect(res.status, res.text).toBe(400);
        expect(res.body.error.code).toBe('invalid_input');
      }
    });

    it('a malformed X-Service-Workspace is invalid_input', async () => {
      const { id: ws, owner } = await h.workspace();
      const api = await owner.api(null);
      for (const selector of [
        ws.replace(/^ws_/, 'xs_'),
        'ws_a!b',
        '_ws_abc',
        `${ws}/`,
        'workspace',
        `ws_${'a'.repeat(200)}`,
      ]) {
        const res = await api.get('/v1/namespaces', { workspace: selector });
        expect(res.status, selector).toBe(400);
        expect(res.body.error.code, selector).toBe('invalid_input');
      }
    });

    it('a workspace of which the caller is not a member answers exactly like one that does not exist', async () => {
      const { id: ws } = await h.workspace();
      const stranger = await h.human({ enroll: true });
      const api = await stranger.api(null);
      const absent = `ws_${'x'.repeat(ws.length - 3)}`;
      for (const [method, path] of [
        ['GET', '/v1/namespaces'],
        ['GET', '/v1/me'],
        ['POST', '/v1/namespaces'],
        ['GET', '/v1/memories/mem_aaaaaaaaaaaaaaaaaaaaaaaa'],
      ] as const) {
        const body = method === 'POST' ? { parent_id: null, name: 'x' } : undefined;
        const call = (workspace: string) =>
          api.call(method, path, { workspace, body, headers: { 'x-request-id': 'req-compare-1' } });
        const [foreign, missing] = [await call(ws), await call(absent)];
        expect(foreign.status, path).toBe(404);
        expect(foreign.body.error.code).toBe('not_found');
        // With the same X-Request-Id the answers are byte for byte the same...
        expect(foreign.text).toBe(missing.text);
        // ...and without it, everything but the request id.
        const [a, b] = [
          await api.call(method, path, { workspace: ws, body }),
          await api.call(method, path, { workspace: absent, body }),
        ];
        expect(a.body.error.request_id).not.toBe(b.body.error.request_id);
        expect(observable(a)).toEqual(observable(b));
      }
    });

    it('a removed member gets not_found on the very next request', async () => {
      const { id: ws, owner, api: ownerApi } = await h.workspace();
      const bob = await h.human({ enroll: false });
      await setMembers(ownerApi, ws, [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: bob.actorId, role: 'admin' },
      ]);
      const ns = (await ownerApi.post('/v1/namespaces', { parent_id: null, name: 'n' })).body.namespace;
      const bobApi = await bob.api(ws);
      expect((await bobApi.get(`/v1/namespaces/${ns.id}`)).status).toBe(200);
      expect((await bobApi.get('/v1/me')).body.workspace_id).toBe(ws);

      await setMembers(ownerApi, ws, [{ actor_id: owner.actorId, role: 'admin' }]);
      const next = await bobApi.get(`/v1/namespaces/${ns.id}`);
      expect(next.status).toBe(404);
      expect(next.body.error.code).toBe('not_found');
      expect((await bobApi.get('/v1/namespaces')).status).toBe(404);
      expect((await bobApi.get('/v1/me')).status).toBe(404);
      expect((await bobApi.post('/v1/namespaces', { parent_id: null, name: 'again' })).status).toBe(404);
      expect((await bobApi.get('/v1/workspaces', { workspace: null })).body.workspaces).toEqual([]);
      // The owner is unaffected.
      expect((await ownerApi.get(`/v1/namespaces/${ns.id}`)).status).toBe(200);
    });
  });
});
