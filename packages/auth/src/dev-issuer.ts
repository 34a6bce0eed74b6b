import fs from 'node:fs';
import path from 'node:path';
import { exportJWK, generateKeyPair, importJWK, type JSONWebKeySet, type JWK, SignJWT } from 'jose';
import type { IssuerConfig } from './token-verifier';

export const DEV_ISSUER = 'urn:tms:dev-auth';
export const DEV_AUDIENCE = 'urn:tms:dev-auth:session';
export const DEV_SUBJECT = 'dev-admin';
const KEY_FILE = 'dev-auth-key.json';

/**
 * The embedded quickstart's own identity provider (DEV_AUTH=1): an ES256 key kept in
 * DATA_DIR so that tokens printed once keep working across restarts.
 */
export class DevIssuer {
  private constructor(
    private readonly privateJwk: JWK,
    readonly publicJwks: JSONWebKeySet,
  ) {}

  static async loadOrCreate(dataDir: string): Promise<DevIssuer> {
    const file = path.join(dataDir, KEY_FILE);
    let privateJwk: JWK;
    if (fs.existsSync(file)) {
      privateJwk = JSON.parse(fs.readFileSync(file, 'utf8')) as JWK;
    } else {
      const { privateKey } = await generateKeyPair('ES256', { extractable: true });
      privateJwk = { ...(await exportJWK(privateKey)), kid: `dev-${Date.now().toString(36)}`, alg: 'ES256' };
      fs.mkdirSync(dataDir, { recursive: true });
      fs.writeFileSync(file, JSON.stringify(privateJwk), { mode: 0o600 });
    }
    const { d: _private, ...publicJwk } = privateJwk;
    return new DevIssuer(privateJwk, { keys: [publicJwk] });
  }

  get config(): IssuerConfig {
    return { issuer: DEV_ISSUER, audience: DEV_AUDIENCE, jwks: this.publicJwks };
  }

  /** A human session token for `subject`, valid for `ttlSeconds`. */
  async sessionToken(subject: string = DEV_SUBJECT, ttlSeconds = 12 * 3600): Promise<string> {
    const key = await importJWK(this.privateJwk, 'ES256');
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: this.privateJwk.kid as string })
      .setIssuer(DEV_ISSUER)
      .setAudience(DEV_AUDIENCE)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(key);
  }
}
