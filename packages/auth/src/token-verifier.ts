import crypto from 'node:crypto';
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  type JSONWebKeySet,
  type JWTPayload,
  errors as joseErrors,
  jwksCache,
  jwtVerify,
  type LocalJWKSet,
  type RemoteJWKSet,
} from 'jose';

/** Asymmetric algorithms only: `none` and HMAC are never accepted (decisions §6). */
export const ALLOWED_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];
export const CLOCK_TOLERANCE_SECONDS = 60;
export const DEFAULT_SCOPES = ['svc:read', 'svc:observe'] as const;

export interface IssuerConfig {
  issuer: string;
  audience: string;
  /** Remote JWKS (cached and refreshed by jose on unknown kid) ... */
  jwksUri?: string | undefined;
  /** ... or a local key set (the dev issuer). */
  jwks?: JSONWebKeySet | undefined;
  /**
   * How long a fetched remote JWKS is trusted before it is fetched again (jose's default is
   * 10 minutes). It bounds how long a key the issuer stopped publishing keeps verifying.
   */
  jwksCacheMaxAgeMs?: number | undefined;
}

export type TokenKind = 'session' | 'oauth';

export interface VerifiedToken {
  kind: TokenKind;
  issuer: string;
  subject: string;
  /** OAuth scopes from the token; null for sessions, which are not scope-limited. */
  scopes: string[] | null;
}

/**
 * Why a bearer token or credential is refused, as the caller is told (RFC 6750 §3
 * `error_description`, and `X-Error-Detail`). Fixed texts, never the token's own content: they
 * name what to fix without revealing whether an account or a credential exists (every unknown
 * or revoked secret reads alike). Printable ASCII without `"` or `\`, as a quoted-string needs.
 */
export const AUTH_FAILURES = {
  malformed: 'the token is malformed',
  algorithm: 'the token is signed with an algorithm that is not allowed',
  expired: 'the token has expired',
  notYetValid: 'the token is not yet valid',
  audience: 'the token is for another audience',
  untrusted: 'the token is from an unknown issuer or signed with an unknown key',
  signature: 'the token signature is invalid',
  credential: 'the credential is unknown or revoked',
  credentialExpired: 'the credential has expired',
} as const;

export type AuthFailure = (typeof AUTH_FAILURES)[keyof typeof AUTH_FAILURES];

/** The token was malformed, forged, expired or from an unknown issuer: `reason` says which. */
export class InvalidTokenError extends Error {
  constructor(
    readonly reason: AuthFailure,
    /** What exactly failed, for the operator's log (jose's message); never sent to the caller. */
    readonly internal: string = reason,
  ) {
    super(reason);
    this.name = 'InvalidTokenError';
  }
}

/** The public reason for a jose verification error. */
function failureOf(error: unknown): AuthFailure {
  if (error instanceof joseErrors.JWTExpired) return AUTH_FAILURES.expired;
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    // A token without `aud` is as much not for this service as one for another.
    if (error.claim === 'aud') return AUTH_FAILURES.audience;
    if (error.reason === 'missing') return AUTH_FAILURES.malformed;
    switch (error.claim) {
      case 'nbf':
      case 'iat':
        return AUTH_FAILURES.notYetValid;
      case 'iss':
        return AUTH_FAILURES.untrusted;
      default:
        return AUTH_FAILURES.malformed;
    }
  }
  if (error instanceof joseErrors.JWKSNoMatchingKey || error instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return AUTH_FAILURES.untrusted;
  }
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return AUTH_FAILURES.signature;
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return AUTH_FAILURES.algorithm;
  return AUTH_FAILURES.malformed;
}

/** The identity provider's key set could not be fetched: not the caller's fault. */
export class KeySetUnavailableError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'KeySetUnavailableError';
  }
}

/** What a verifier currently trusts for one issuer (tests wait on it instead of on time). */
export interface KeySetState {
  kind: TokenKind;
  issuer: string;
  /**
   * Whether the cached key set is younger than its max age. A stale set is fetched again before
   * the next token of this issuer is looked up in it. A local key set is always fresh.
   */
  fresh: boolean;
  /** The `kid`s of the keys the verifier holds now (empty before a remote set's first fetch). */
  kids: string[];
}

/** jose's default for how long a fetched remote key set is trusted. */
const JOSE_DEFAULT_CACHE_MAX_AGE_MS = 600_000;
/** How many verified tokens a verifier remembers (by SHA-256 of the token). */
const VERIFIED_CACHE_SIZE = 10_000;

interface Verifier {
  kind: TokenKind;
  config: IssuerConfig;
  keys: LocalJWKSet | RemoteJWKSet;
  /** A remote set's fetch record, which jose updates on every fetch (`uat`: when); null for a local set. */
  fetched: { uat?: number } | null;
}

function verifierOf(kind: TokenKind, config: IssuerConfig): Verifier {
  if (config.jwks) return { kind, config, keys: createLocalJWKSet(config.jwks), fetched: null };
  if (config.jwksUri) {
    const fetched: { uat?: number } = {};
    const keys = createRemoteJWKSet(new URL(config.jwksUri), {
      cooldownDuration: 5000,
      timeoutDuration: 5000,
      ...(config.jwksCacheMaxAgeMs !== undefined ? { cacheMaxAge: config.jwksCacheMaxAgeMs } : {}),
      [jwksCache]: fetched as Record<string, never>,
    });
    return { kind, config, keys, fetched };
  }
  throw new Error(`issuer ${config.issuer} has neither jwksUri nor jwks`);
}

/** A verified token, trusted again until `until` (ms) while its issuer's key set is the one it was checked against. */
interface VerifiedEntry {
  token: VerifiedToken;
  until: number;
  verifier: Verifier;
  /** The key set fetch it was verified against (remote sets); another fetch drops the entry. */
  uat: number | undefined;
}

function decodeSegment(segment: string | undefined): Record<string, unknown> | null {
  if (!segment) return null;
  try {
    const value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Verifies bearer tokens of the human-session issuers and the OAuth authorization server.
 * The issuer is read from the unverified payload only to pick the key set; the signature,
 * issuer, audience, expiry and type are then verified against that issuer's own rules.
 */
export class TokenVerifier {
  private readonly verifiers: Verifier[];
  /**
   * Tokens already verified, by SHA-256 of the token, oldest first: trusted until the token's
   * `exp` or until its issuer's key set is due for a refresh, whichever is first, so a key the
   * issuer retires stops verifying as soon as without this cache.
   */
  private readonly verified = new Map<string, VerifiedEntry>();

  constructor(options: { sessions?: IssuerConfig[]; oauth?: IssuerConfig | undefined }) {
    this.verifiers = [
      ...(options.sessions ?? []).map((config) => verifierOf('session', config)),
      ...(options.oauth ? [verifierOf('oauth', options.oauth)] : []),
    ];
  }

  /**
   * Every issuer's key set as cached right now: whether it is fresh and which keys it holds.
   * Session and OAuth issuers each keep their own cache, even when they share a JWKS URI.
   */
  keySets(): KeySetState[] {
    return this.verifiers.map(({ kind, config, keys }) => ({
      kind,
      issuer: config.issuer,
      fresh: 'fresh' in keys ? keys.fresh : true,
      kids: (keys.jwks()?.keys ?? []).flatMap((key) => (typeof key.kid === 'string' ? [key.kid] : [])),
    }));
  }

  async verify(token: string): Promise<VerifiedToken> {
    const key = crypto.createHash('sha256').update(token).digest('base64url');
    const entry = this.verified.get(key);
    if (entry) {
      if (Date.now() < entry.until && entry.uat === entry.verifier.fetched?.uat) {
        return { ...entry.token, scopes: entry.token.scopes && [...entry.token.scopes] };
      }
      this.verified.delete(key);
    }
    const { result, verifier, exp } = await this.verifyAfresh(token);
    const uat = verifier.fetched?.uat;
    let until = exp * 1000;
    if (verifier.fetched) {
      // A remote set is due for a refresh `cacheMaxAge` after its fetch (jose's `fresh`).
      if (uat === undefined) return result;
      until = Math.min(until, uat + (verifier.config.jwksCacheMaxAgeMs ?? JOSE_DEFAULT_CACHE_MAX_AGE_MS));
    }
    if (until > Date.now()) {
      this.verified.set(key, { token: result, until, verifier, uat });
      if (this.verified.size > VERIFIED_CACHE_SIZE) {
        const oldest = this.verified.keys().next().value;
        if (oldest !== undefined) this.verified.delete(oldest);
      }
    }
    return { ...result, scopes: result.scopes && [...result.scopes] };
  }

  private async verifyAfresh(token: string): Promise<{ result: VerifiedToken; verifier: Verifier; exp: number }> {
    const parts = token.split('.');
    if (parts.length !== 3) throw new InvalidTokenError(AUTH_FAILURES.malformed, 'not a compact JWS');
    const header = decodeSegment(parts[0]);
    const payload = decodeSegment(parts[1]);
    if (!header || !payload) throw new InvalidTokenError(AUTH_FAILURES.malformed, 'undecodable token');
    if (typeof header.alg !== 'string') throw new InvalidTokenError(AUTH_FAILURES.malformed, 'no algorithm');
    if (!ALLOWED_ALGORITHMS.includes(header.alg)) {
      throw new InvalidTokenError(AUTH_FAILURES.algorithm, 'algorithm not allowed');
    }
    // Keys come only from the configured JWKS, never from the token itself.
    if ('jwk' in header || 'jku' in header || 'x5u' in header || 'x5c' in header) {
      throw new InvalidTokenError(AUTH_FAILURES.malformed, 'embedded key material');
    }
    // RFC 9068 access tokens: `at+jwt`, or its full media type `application/at+jwt`.
    const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : null;
    const isAccessToken = typ === 'at+jwt' || typ === 'application/at+jwt';
    const kind: TokenKind = isAccessToken ? 'oauth' : 'session';
    const verifier = this.verifiers.find((v) => v.kind === kind && v.config.issuer === payload.iss);
    if (!verifier) throw new InvalidTokenError(AUTH_FAILURES.untrusted, 'unknown issuer for this token type');

    let verified: JWTPayload;
    try {
      const result = await jwtVerify(token, verifier.keys, {
        issuer: verifier.config.issuer,
        audience: verifier.config.audience,
        algorithms: ALLOWED_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['exp', 'sub'],
        // jose compares `typ` case-insensitively with the `application/` prefix implied, so
        // this accepts both spellings above.
        ...(kind === 'oauth' ? { typ: 'at+jwt' } : {}),
      });
      verified = result.payload;
    } catch (error) {
      if (error instanceof joseErrors.JWKSTimeout || isFetchFailure(error)) {
        throw new KeySetUnavailableError((error as Error).message);
      }
      throw new InvalidTokenError(failureOf(error), (error as Error).message ?? 'verification failed');
    }
    const subject = verified.sub;
    if (typeof subject !== 'string' || subject.length === 0 || subject.length > 1024 || !subject.isWellFormed()) {
      throw new InvalidTokenError(AUTH_FAILURES.malformed, 'bad subject');
    }
    return {
      result: { kind, issuer: verifier.config.issuer, subject, scopes: kind === 'oauth' ? scopesOf(verified) : null },
      verifier,
      // Required above, and a number, or jose would have refused the token.
      exp: verified.exp as number,
    };
  }
}

function isFetchFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // jose rethrows network errors of the JWKS fetch as-is (TypeError: fetch failed), and
  // answers JOSEError 'JWKSInvalid' or a plain Error on a non-200 status.
  return (
    (error.name === 'TypeError' && /fetch failed/i.test(error.message)) ||
    /Expected 200 OK from the JSON Web Key Set HTTP response/i.test(error.message)
  );
}

function scopesOf(payload: JWTPayload): string[] {
  const scope = payload.scope;
  if (scope === undefined) return [...DEFAULT_SCOPES];
  if (typeof scope !== 'string') return [];
  return scope.split(' ').filter(Boolean);
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function parseBearer(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
  return match?.[1] ?? null;
}
