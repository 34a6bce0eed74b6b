import { describe, expect, it } from 'vitest';
import { newId } from '../src/ids';

describe('newId', () => {
  it('gives a prefix and 24 base32 characters, distinct across many pool refills', () => {
    const ids = Array.from({ length: 2000 }, () => newId('mem'));
    for (const id of ids) expect(id).toMatch(/^mem_[0-9a-hjkmnp-tv-z]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Every character of the alphabet turns up: the bytes are used, not a constant.
    expect(new Set(ids.join('').replaceAll('mem_', '')).size).toBe(32);
  });
});
