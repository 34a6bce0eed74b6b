/** SHA-256 of a text's UTF-8 bytes with WebCrypto, as lowercase hex (the service's `sha256` type). */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
