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

/** Retry `attempt` until it returns true, a bounded number of times; no assertion on timing. */
async function eventually(attempt: () => Promise<boolean>, tries = 60, pauseMs = 250): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (await attempt()) return true;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  return false;
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
    // The verifier has fetched and cached the key set that holds only the old key.
    await expect(verifier.verify(oldAccess)).resolves.toMatchObject({ kind: 'oauth' });
    await expect(verifier.verify(oldSession)).resolves.toMatchObject({ kind: 'session' });

    await op.rotateKeys();
    const newAccess = await op.accessToken({ scope: 'svc:read' });
    const newSession = await op.sessionToken('bob@example.test');
    expect(decodeProtectedHeader(newAccess).kid).not.toBe(decodeProtectedHeader(oldAccess).kid);
    expect(decodeProtectedHeader(newSession).kid).toBe(decodeProtectedHeader(newAccess).kid);

    // jose refetches on an unknown kid once its cooldown (or the cache age) has passed.
    expect(await eventually(() => verifies(verifier, newAccess))).toBe(true);
    expect(await verifies(verifier, newSession)).toBe(true);
    // Both keys are published: the old tokens still verify.
    expect(await verifies(verifier, oldAccess)).toBe(true);
    expect(await verifies(verifier, oldSession)).toBe(true);

    await op.retireOldKeys();
    // Once the cached key set is older than jwksCacheMaxAgeMs, the retired key is gone.
    expect(await eventually(() => refused(verifier, oldAccess))).toBe(true);
    expect(await refused(verifier, oldSession)).toBe(true);
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
