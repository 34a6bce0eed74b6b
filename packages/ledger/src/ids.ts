import crypto from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** A fresh id: a type prefix and 24 random base32 characters (120 bits). */
export function newId(prefix: string): string {
  const bytes = crypto.randomBytes(24);
  let out = `${prefix}_`;
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}
