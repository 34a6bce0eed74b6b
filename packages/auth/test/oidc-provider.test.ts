import { OidcTestProvider } from '@tms/testkit/oidc-provider';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidTokenError, TokenVerifier } from '../src/token-verifier';

/** The verifier composeDomain would build from the provider's operator variables. */
function verifierFor(op: OidcTestProvider, jwksCacheMaxAgeMs?: number): TokenVerifier {
  const env = op.env();
  return new TokenVerifier({
    sessions: [
      {
        issuer: env.SESSION_ISSUER as string,
        jwksUri: env.SESSION_JWKS_URI,
        audience: env.SESSION_AUDIENCE as string,
        jwksCacheMaxAgeMs,
      },
    ],
    oauth: {
      issuer: env.OAUTH_ISSUER as string,
      jwksUri: env.OAUTH_JWKS_URI,
      audience: env.OAUTH_AUDIENCE as string,
      jwksCacheMaxAgeMs,
    },
  });
}

/**
 * Poll the verifier's own state (bounded) until no issuer's cached key set is fresh, so that the
 * next token of every issuer refetches its JWKS. The caches go stale one by one as each was
 * fetched; waiting on one of them, or on a guessed time, races the others.
 */
async function untilEveryKeySetStale(verifier: TokenVerifier, tries = 200, pauseMs = 25): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (verifier.keySets().every((set) => !set.fresh)) return true;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  return false;
}

/** The kids each token kind's key set holds now, sorted. */
function heldKids(verifier: TokenVerifier): Record<string, string[]> {
  return Object.fromEntries(verifier.keySets().map((set) => [set.kind, [...set.kids].sort()]));
}

const verifies = (verifier: TokenVerifier, token: string) =>
  verifier.verify(token).then(
    () => true,
    () => false,
  );

const refused = (verifier: TokenVerifier, token: string) =>
  verifier.verify(token).then(
    () => false,
    (error) => error instanceof InvalidTokenError,
  );

describe('tokens from a real OpenID provider (oidc-provider)', () => {
  let op: OidcTestProvider;

  beforeAll(async () => {
    op = await OidcTestProvider.start();
  });

  afterAll(async () => {
    await op?.close();
  });

  it('publishes its issuer and JWKS through discovery', () => {
    const env = op.env();
    expect(env.OAUTH_ISSUER).toBe(op.issuer);
    expect(env.SESSION_ISSUER).toBe(op.issuer);
    expect(env.OAUTH_JWKS_URI).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(env.OAUTH_AUDIENCE).toBe(op.audience);
    expect(env.SESSION_AUDIENCE).toBe(op.sessionAudience);
  });

  it('verifies a client-credentials access token as oauth with the requested scopes', async () => {
    const token = await op.accessToken({ scope: 'svc:read svc:verify' });
    expect(decodeProtectedHeader(token).typ?.toLowerCase()).toMatch(/^(application\/)?at\+jwt$/);
    const verified = await verifierFor(op).verify(token);
    expect(verified.kind).toBe('oauth');
    expect(verified.issuer).toBe(op.issuer);
    expect(verified.subject).toBe('tms-test-service');
    expect(verified.scopes?.sort()).toEqual(['svc:read', 'svc:verify']);
  });

  it('gives another client its own subject', async () => {
    const token = await op.accessToken({ scope: 'svc:admin', clientId: 'tms-test-robot' });
    const verified = await verifierFor(op).verify(token);
    expect(verified).toMatchObject({ kind: 'oauth', subject: 'tms-test-robot', scopes: ['svc:admin'] });
  });

  it('verifies an ID token from the authorization-code flow as a session of the subject', async () => {
    const token = await op.sessionToken('alice@example.test');
    const verified = await verifierFor(op).verify(token);
    expect(verified).toEqual({ kind: 'session', issuer: op.issuer, subject: 'alice@example.test', scopes: null });
  });

  it('refuses an access token issued for another resource', async () => {
    const other = 'urn:tms:test:someone-else';
    const token = await op.accessToken({ scope: 'svc:read', resource: other });
    // The token is genuine and only its audience is wrong.
    const claims = decodeJwt(token);
    expect(claims.aud).toBe(other);
    expect(claims.iss).toBe(op.issuer);
    await expect(verifierFor(op).verify(token)).rejects.toThrow(InvalidTokenError);
    await expect(verifierFor(op).verify(token)).rejects.toThrow(/aud/);
  });

  it('follows key rotation and retirement without a new verifier', async () => {
    const verifier = verifierFor(op, 500);
    const oldAccess = await op.accessToken({ scope: 'svc:read' });
    const oldSession = await op.sessionToken('bob@example.test');
    const oldKid = decodeProtectedHeader(oldAccess).kid as string;
    // The verifier fetches and caches the key set that holds only the old key.
    await expect(verifier.verify(oldAccess)).resolves.toMatchObject({ kind: 'oauth' });
    await expect(verifier.verify(oldSession)).resolves.toMatchObject({ kind: 'session' });
    expect(heldKids(verifier)).toEqual({ session: [oldKid], oauth: [oldKid] });

    await op.rotateKeys();
    const newAccess = await op.accessToken({ scope: 'svc:read' });
    const newSession = await op.sessionToken('bob@example.test');
    const newKid = decodeProtectedHeader(newAccess).kid as string;
    expect(newKid).not.toBe(oldKid);
    expect(decodeProtectedHeader(newSession).kid).toBe(newKid);

    // Each issuer keeps its own cache; once a cache is older than jwksCacheMaxAgeMs, the next
    // token of that issuer fetches the key set again. Wait for that state, not for a time.
    expect(await untilEveryKeySetStale(verifier)).toBe(true);
    await expect(verifier.verify(newAccess)).resolves.toMatchObject({ kind: 'oauth' });
    await expect(verifier.verify(newSession)).resolves.toMatchObject({ kind: 'session' });
    expect(heldKids(verifier)).toEqual({ session: [newKid, oldKid].sort(), oauth: [newKid, oldKid].sort() });
    // Both keys are published: the old tokens still verify.
    expect(await verifies(verifier, oldAccess)).toBe(true);
    expect(await verifies(verifier, oldSession)).toBe(true);

    await op.retireOldKeys();
    // The cached sets still hold the retired key until they are stale and fetched again.
    expect(await untilEveryKeySetStale(verifier)).toBe(true);
    expect(await refused(verifier, oldAccess)).toBe(true);
    expect(await refused(verifier, oldSession)).toBe(true);
    expect(heldKids(verifier)).toEqual({ session: [newKid], oauth: [newKid] });
    await expect(verifier.verify(newAccess)).resolves.toMatchObject({ kind: 'oauth', scopes: ['svc:read'] });
    await expect(verifier.verify(newSession)).resolves.toMatchObject({ kind: 'session', subject: 'bob@example.test' });
    await expect(verifier.verify(await op.accessToken({ scope: 'svc:observe' }))).resolves.toMatchObject({
      kind: 'oauth',
    });
  });
});

describe('access token typ', () => {
  it('treats application/at+jwt (any case) as an access token and plain JWT as a session', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const issuer = 'https://as.example.test';
    const verifier = new TokenVerifier({
      sessions: [{ issuer, audience: 'web', jwks: { keys: [jwk] } }],
      oauth: { issuer, audience: 'api', jwks: { keys: [jwk] } },
    });
    const mint = (typ: string, aud: string) =>
      new SignJWT({ scope: 'svc:read' })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1', typ })
        .setIssuer(issuer)
        .setSubject('client-1')
        .setAudience(aud)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);

    for (const typ of ['at+jwt', 'application/at+jwt', 'Application/AT+JWT']) {
      await expect(verifier.verify(await mint(typ, 'api'))).resolves.toMatchObject({
        kind: 'oauth',
        scopes: ['svc:read'],
      });
    }
    // Not an access token type: judged as a session token, so the OAuth audience is refused.
    await expect(verifier.verify(await mint('application/jwt', 'api'))).rejects.toThrow(InvalidTokenError);
    await expect(verifier.verify(await mint('JWT', 'web'))).resolves.toMatchObject({ kind: 'session' });
  });
});
