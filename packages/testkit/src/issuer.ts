import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

export const ALL_SCOPES = 'svc:read svc:observe svc:verify svc:correct svc:forget svc:admin';

interface SigningKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function makeKey(alg: 'RS256' | 'ES256', kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export interface MintOptions {
  subject: string;
  scope?: string | null;
  audience?: string | string[] | null;
  issuer?: string;
  typ?: string | null;
  expiresIn?: number;
  exp?: number | null;
  nbf?: number;
  alg?: 'RS256' | 'ES256';
  /** Sign with a key the JWKS never published. */
  rogueKey?: boolean;
  claims?: Record<string, unknown>;
}

/**
 * A real token issuer on loopback for tests: two JWKS documents (session and OAuth), each
 * with an RS256 and an ES256 key, and JWTs signed by jose.
 */
export class TestIssuer {
  private constructor(
    private readonly server: http.Server,
    readonly origin: string,
    private readonly keys: { session: SigningKey[]; oauth: SigningKey[]; rogue: SigningKey[] },
  ) {}

  readonly sessionAudience = 'urn:tms:test:session';
  readonly oauthAudience = 'urn:tms:test:rest';

  static async start(): Promise<TestIssuer> {
    const tag = crypto.randomBytes(3).toString('hex');
    const keys = {
      session: [await makeKey('RS256', `session-rs-${tag}`), await makeKey('ES256', `session-es-${tag}`)],
      oauth: [await makeKey('RS256', `oauth-rs-${tag}`), await makeKey('ES256', `oauth-es-${tag}`)],
      rogue: [await makeKey('RS256', `rogue-rs-${tag}`), await makeKey('ES256', `rogue-es-${tag}`)],
    };
    const server = http.createServer((req, res) => {
      const set = req.url === '/session/jwks' ? keys.session : req.url === '/oauth/jwks' ? keys.oauth : null;
      if (!set) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: set.map((k) => k.publicJwk) }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return new TestIssuer(server, origin, keys);
  }

  get sessionIssuer(): string {
    return `${this.origin}/session`;
  }

  get oauthIssuer(): string {
    return `${this.origin}/oauth`;
  }

  /** The operator-contract variables pointing at this issuer. */
  env(): Record<string, string> {
    return {
      SESSION_ISSUER: this.sessionIssuer,
      SESSION_JWKS_URI: `${this.origin}/session/jwks`,
      SESSION_AUDIENCE: this.sessionAudience,
      OAUTH_ISSUER: this.oauthIssuer,
      OAUTH_JWKS_URI: `${this.origin}/oauth/jwks`,
      OAUTH_AUDIENCE: this.oauthAudience,
    };
  }

  private async mint(kind: 'session' | 'oauth', options: MintOptions): Promise<string> {
    const alg = options.alg ?? 'RS256';
    const set = options.rogueKey ? this.keys.rogue : this.keys[kind];
    const key = set.find((k) => k.alg === alg) as SigningKey;
    const typ = options.typ === undefined ? (kind === 'oauth' ? 'at+jwt' : 'JWT') : options.typ;
    const header: Record<string, unknown> = { alg, kid: key.kid };
    if (typ !== null) header.typ = typ;
    const payload: Record<string, unknown> = { jti: crypto.randomBytes(8).toString('hex'), ...(options.claims ?? {}) };
    if (kind === 'oauth') {
      const scope = options.scope === undefined ? 'svc:read svc:observe' : options.scope;
      if (scope !== null) payload.scope = scope;
      payload.client_id = 'test-client';
    }
    const now = Math.floor(Date.now() / 1000);
    let jwt = new SignJWT(payload)
      .setProtectedHeader(header as { alg: string })
      .setIssuer(options.issuer ?? (kind === 'oauth' ? this.oauthIssuer : this.sessionIssuer))
      .setSubject(options.subject)
      .setIssuedAt(now);
    const audience =
      options.audience === undefined
        ? kind === 'oauth'
          ? this.oauthAudience
          : this.sessionAudience
        : options.audience;
    if (audience !== null) jwt = jwt.setAudience(audience);
    if (options.exp !== null) jwt = jwt.setExpirationTime(options.exp ?? now + (options.expiresIn ?? 600));
    if (options.nbf !== undefined) jwt = jwt.setNotBefore(options.nbf);
    return jwt.sign(key.privateKey);
  }

  /** A human session token. */
  sessionToken(subject: string, options: Omit<MintOptions, 'subject'> = {}): Promise<string> {
    return this.mint('session', { ...options, subject });
  }

  /** An OAuth access token (`typ: at+jwt`) with the given scopes. */
  accessToken(
    subject: string,
    scope: string | null = 'svc:read svc:observe',
    options: Omit<MintOptions, 'subject' | 'scope'> = {},
  ) {
    return this.mint('oauth', { ...options, subject, scope });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
