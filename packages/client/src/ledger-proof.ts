/**
 * Reader side of the ledger's hash chain (docs/ledger-proofs.md). A proof from `ledger.proof` is
 * checked with SHA-256 alone:
 *
 *   h = SHA-256(previous_chain_hash ‖ SHA-256(digest_input))      (hashes as 32 raw bytes)
 *   h = SHA-256(h ‖ link)   for each link, in order
 *   h must equal head.chain_hash
 *
 * and the digest input must name the subject at the proof's sequence. With the service's JWKS
 * (`/.well-known/ledger-keys.json`) the head's Ed25519 signature is checked too, and a head kept
 * earlier (`pinnedHead`) must be the one the proof reaches. Only Web Crypto is used.
 */
import type { LedgerHeadOutput, LedgerProofOutput } from './generated';

export type SignedLedgerHead = LedgerHeadOutput;
export type LedgerHead = LedgerHeadOutput['head'];
export type LedgerProof = LedgerProofOutput;

/** An Ed25519 public key as the service publishes it. */
export interface LedgerJwk {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
}

export interface VerifyProofOptions {
  /** The service's ledger keys: when given, the head's signature must verify with one of them. */
  jwks?: { keys: readonly LedgerJwk[] };
  /** A head kept earlier (from `ledger.head`): the proof must reach exactly this head. */
  pinnedHead?: LedgerHead;
}

/** The subject's record from the digest input, or why the proof does not hold. */
export type ProofVerdict = { valid: true; record: Record<string, unknown> } | { valid: false; reason: string };

const encoder = new TextEncoder();
const HEX64 = /^[0-9a-f]{64}$/;

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

async function sha256(data: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', data));
}

const toHex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

/** SHA-256(previous ‖ digest), both given and answered as hex. */
async function chainStep(previous: string, digest: string): Promise<string> {
  const joined = new Uint8Array(64);
  joined.set(hexBytes(previous), 0);
  joined.set(hexBytes(digest), 32);
  return toHex(await sha256(joined));
}

function base64urlBytes(text: string): Uint8Array<ArrayBuffer> {
  const base64 = text
    .replace(/-/g, '+')
    .replace(/_/g, '/')
    .padEnd(Math.ceil(text.length / 4) * 4, '=');
  const binary = atob(base64);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** Whether `signed.signature` is a valid JWS over exactly `signed.head` by one of the keys. */
export async function verifyLedgerHead(
  signed: SignedLedgerHead,
  jwks: { keys: readonly LedgerJwk[] },
): Promise<boolean> {
  const parts = signed.signature.split('.');
  if (parts.length !== 3) return false;
  const [header64, payload64, signature64] = parts as [string, string, string];
  try {
    const header = JSON.parse(new TextDecoder().decode(base64urlBytes(header64))) as { alg?: string; kid?: string };
    const payload = JSON.parse(new TextDecoder().decode(base64urlBytes(payload64))) as Record<string, unknown>;
    const jwk = jwks.keys.find((k) => k.kid === header.kid && k.kty === 'OKP' && k.crv === 'Ed25519');
    if (header.alg !== 'EdDSA' || !jwk?.x) return false;
    const head = signed.head as Record<string, unknown>;
    const keys = Object.keys(head);
    if (keys.length !== Object.keys(payload).length || keys.some((k) => payload[k] !== head[k])) return false;
    const key = await crypto.subtle.importKey(
      'jwk',
      { kty: 'OKP', crv: 'Ed25519', x: jwk.x },
      { name: 'Ed25519' },
      false,
      ['verify'],
    );
    return await crypto.subtle.verify(
      { name: 'Ed25519' },
      key,
      base64urlBytes(signature64),
      encoder.encode(`${header64}.${payload64}`),
    );
  } catch {
    return false;
  }
}

/** Check a `ledger.proof` answer (see the file comment); never throws on a malformed proof. */
export async function verifyProof(proof: LedgerProof, options: VerifyProofOptions = {}): Promise<ProofVerdict> {
  const fail = (reason: string): ProofVerdict => ({ valid: false, reason });
  const head = proof.head.head;
  if (!HEX64.test(proof.previous_chain_hash) || !HEX64.test(head.chain_hash)) return fail('malformed hash');
  if (!proof.links.every((link) => HEX64.test(link))) return fail('malformed link');
  if (head.sequence - proof.sequence !== proof.links.length) return fail('the links do not span the proof to its head');
  let input: { workspace_id?: unknown; sequence?: unknown; records?: unknown };
  try {
    input = JSON.parse(proof.digest_input) as typeof input;
  } catch {
    return fail('the digest input is not JSON');
  }
  if (input.sequence !== proof.sequence) return fail('the digest input is of another commit');
  if (input.workspace_id !== head.workspace_id) return fail('the digest input is of another workspace');
  const records = Array.isArray(input.records) ? (input.records as Record<string, unknown>[]) : [];
  const record = records.find((r) => r.id === proof.subject_id);
  if (!record || record.missing) return fail('the commit does not name the subject');

  let hash = await chainStep(proof.previous_chain_hash, toHex(await sha256(encoder.encode(proof.digest_input))));
  for (const link of proof.links) hash = await chainStep(hash, link);
  if (hash !== head.chain_hash) return fail("the chain does not reach the head's chain hash");

  if (options.jwks && !(await verifyLedgerHead(proof.head, options.jwks)))
    return fail("the head's signature does not verify");
  const pinned = options.pinnedHead;
  if (pinned) {
    if (pinned.workspace_id !== head.workspace_id || pinned.sequence !== head.sequence) {
      return fail('the proof ends at another head than the one kept');
    }
    if (pinned.chain_hash !== head.chain_hash || pinned.recorded_at !== head.recorded_at) {
      return fail('the chain no longer matches the head kept');
    }
  }
  return { valid: true, record };
}
