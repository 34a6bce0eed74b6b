/**
 * Receiver side of the service's signed webhooks. Every delivery carries
 * `Tms-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret>`.
 * Only Web Crypto is used, so this runs in browsers, workers, Deno, Bun and Node 20+ alike.
 */

export interface VerifyWebhookSignatureOptions {
  /** The `Tms-Signature` header as received (null or absent counts as invalid). */
  header: string | null | undefined;
  /** The raw request body, exactly as received: re-serialised JSON would not verify. */
  body: string | Uint8Array;
  /** The webhook's signing secret (`whsec_...`), as `webhooks.create` showed it. */
  secret: string;
  /** How far `t` may be from now, either way, in seconds (default 300): older deliveries are refused as replays. */
  toleranceSeconds?: number;
  /** Unix seconds to check `t` against (default: the clock). */
  now?: number;
}

const encoder = new TextEncoder();

/** `t` and every `v1` signature of the header, or null when it is malformed. */
function parseHeader(header: string): { timestamp: number; signatures: Uint8Array<ArrayBuffer>[] } | null {
  let timestamp: number | null = null;
  const signatures: Uint8Array<ArrayBuffer>[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== null || !/^[0-9]{1,12}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      const bytes = hexBytes(value);
      if (bytes) signatures.push(bytes);
    }
    // Other schemes are for other versions of the signature and are ignored.
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures };
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i += 1) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/**
 * Whether a delivery is authentic and fresh: the header is well formed, its timestamp is within
 * the tolerance of now, and one of its `v1` signatures is the HMAC of `"<t>.<body>"`. The
 * comparison is Web Crypto's own HMAC verification, which takes the same time however many
 * bytes match.
 */
export async function verifyWebhookSignature(options: VerifyWebhookSignatureOptions): Promise<boolean> {
  const { header, body, secret } = options;
  if (typeof header !== 'string' || secret.length === 0) return false;
  const parsed = parseHeader(header);
  if (!parsed) return false;
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.now ?? Date.now() / 1000;
  if (Math.abs(now - parsed.timestamp) > tolerance) return false;

  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'verify',
  ]);
  const bodyBytes = typeof body === 'string' ? encoder.encode(body) : body;
  const prefix = encoder.encode(`${parsed.timestamp}.`);
  const signed = new Uint8Array(prefix.length + bodyBytes.length);
  signed.set(prefix, 0);
  signed.set(bodyBytes, prefix.length);
  let valid = false;
  // Every signature is checked (no early exit), so timing says nothing about which one matched.
  for (const signature of parsed.signatures) {
    if (await crypto.subtle.verify('HMAC', key, signature, signed)) valid = true;
  }
  return valid;
}
