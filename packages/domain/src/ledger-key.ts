import crypto from 'node:crypto';
import { canonicalJson, type Stores } from '@tms/ledger';

/** Where the service keeps its ledger signing key (created on first use, like the cursor key). */
const SETTING = 'ledger_signing_key';

export interface PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

const base64url = (data: string | Buffer) => Buffer.from(data).toString('base64url');

/**
 * The service's Ed25519 key that signs ledger heads (docs/ledger-proofs.md). A head is signed as
 * a compact JWS whose payload is the head's canonical JSON; the public key is published as a
 * JWKS, its `kid` the RFC 7638 thumbprint.
 */
export class LedgerSigningKey {
  private constructor(
    private readonly privateKey: crypto.KeyObject,
    readonly publicJwk: PublicJwk,
  ) {}

  /** The key kept in the ledger's service settings, created by whichever process asks first. */
  static async load(stores: Stores): Promise<LedgerSigningKey> {
    const stored = await stores.directory.secret(SETTING, () =>
      JSON.stringify(crypto.generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })),
    );
    return LedgerSigningKey.of(
      crypto.createPrivateKey({ key: JSON.parse(stored) as crypto.JsonWebKey, format: 'jwk' }),
    );
  }

  /** The operator's key (LEDGER_SIGNING_KEY_FILE): an Ed25519 private key in PKCS#8 PEM. */
  static fromPem(pem: string): LedgerSigningKey {
    const privateKey = crypto.createPrivateKey(pem);
    if (privateKey.asymmetricKeyType !== 'ed25519') {
      throw new Error(`LEDGER_SIGNING_KEY_FILE: must hold an Ed25519 private key, not ${privateKey.asymmetricKeyType}`);
    }
    return LedgerSigningKey.of(privateKey);
  }

  private static of(privateKey: crypto.KeyObject): LedgerSigningKey {
    const { x } = crypto.createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string };
    // RFC 7638: SHA-256 over the required members in lexicographic order, no whitespace.
    const kid = base64url(crypto.createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest());
    return new LedgerSigningKey(privateKey, { kty: 'OKP', crv: 'Ed25519', x, kid, alg: 'EdDSA', use: 'sig' });
  }

  get jwks(): { keys: PublicJwk[] } {
    return { keys: [this.publicJwk] };
  }

  /** A compact JWS over the canonical JSON of `payload`. */
  sign(payload: object): string {
    const header = base64url(JSON.stringify({ alg: 'EdDSA', kid: this.publicJwk.kid, typ: 'tms-ledger-head' }));
    const body = base64url(canonicalJson(payload));
    const signature = crypto.sign(null, Buffer.from(`${header}.${body}`), this.privateKey);
    return `${header}.${body}.${base64url(signature)}`;
  }
}
