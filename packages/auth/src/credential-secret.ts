import crypto from 'node:crypto';

/**
 * Opaque credential secrets: `tms_ic_<id>_<secret>` (installation credential) or
 * `tms_sk_<id>_<secret>` (service key). The recognisable prefix lets secret scanners find a
 * leaked one; `<id>` is the public part of the credential id, so the server looks the row up
 * by id and compares hashes in constant time; `<secret>` carries 260 random bits.
 */
export type CredentialKind = 'installation' | 'service_key';

const PREFIX: Record<CredentialKind, string> = { installation: 'tms_ic_', service_key: 'tms_sk_' };
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const SECRET_CHARS = 52;
const SECRET_PATTERN = /^tms_(ic|sk)_([0-9a-hjkmnp-tv-z]{24})_([0-9a-hjkmnp-tv-z]{52})$/;
const ID_PREFIX = 'cred_';

function randomBase32(length: number): string {
  const bytes = crypto.randomBytes(length);
  let out = '';
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

function sha256Hex(text: string): string {
  return crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Whether a bearer token has the shape of a credential secret (not a JWT). */
export function looksLikeCredentialSecret(token: string): boolean {
  return token.startsWith('tms_');
}

/** A new credential id (`cred_` + 24 base32 characters) and the secret that names it. */
export function mintCredentialSecret(kind: CredentialKind): { credentialId: string; secret: string; sha256: string } {
  const idBody = randomBase32(24);
  const secret = `${PREFIX[kind]}${idBody}_${randomBase32(SECRET_CHARS)}`;
  return { credentialId: `${ID_PREFIX}${idBody}`, secret, sha256: sha256Hex(secret) };
}

/** The kind and credential id a secret names, or null when it is not well formed. */
export function parseCredentialSecret(token: string): { kind: CredentialKind; credentialId: string } | null {
  const match = SECRET_PATTERN.exec(token);
  if (!match) return null;
  return { kind: match[1] === 'ic' ? 'installation' : 'service_key', credentialId: `${ID_PREFIX}${match[2]}` };
}

/** Constant-time comparison of a presented secret with the stored SHA-256. */
export function secretMatches(token: string, storedSha256: string): boolean {
  const presented = Buffer.from(sha256Hex(token), 'hex');
  const stored = Buffer.from(storedSha256, 'hex');
  return presented.length === stored.length && crypto.timingSafeEqual(presented, stored);
}
