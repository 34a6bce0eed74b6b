/**
 * Order-preserving byte encoding of a display path: each segment's UTF-8 bytes with 0x00 and
 * 0x01 escaped (0x00 -> 01 01, 0x01 -> 01 02), segments separated by 0x00. Byte order of keys
 * is then segment-by-segment code point order, and a parent sorts right before its subtree.
 */
export function encodePathKey(segments: readonly string[]): Buffer {
  const parts: number[] = [];
  segments.forEach((segment, i) => {
    if (i > 0) parts.push(0x00);
    for (const byte of Buffer.from(segment, 'utf8')) {
      if (byte === 0x00) parts.push(0x01, 0x01);
      else if (byte === 0x01) parts.push(0x01, 0x02);
      else parts.push(byte);
    }
  });
  return Buffer.from(parts);
}

export function decodePathKey(key: Uint8Array): string[] {
  const segments: string[] = [];
  let current: number[] = [];
  for (let i = 0; i < key.length; i += 1) {
    const byte = key[i] as number;
    if (byte === 0x00) {
      segments.push(Buffer.from(current).toString('utf8'));
      current = [];
    } else if (byte === 0x01) {
      i += 1;
      current.push(key[i] === 0x01 ? 0x00 : 0x01);
    } else current.push(byte);
  }
  segments.push(Buffer.from(current).toString('utf8'));
  return segments;
}
