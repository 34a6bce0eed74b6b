import { describe, expect, it } from 'vitest';
import { cachedKeyCount, canonicalJson } from '../src/canonical-json';

describe('canonical JSON key cache', () => {
  it('keeps no long key and at most 2048 short ones, whatever requests send; the text stays exact', () => {
    const before = cachedKeyCount();
    const long = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`${'k'.repeat(100)}${i}`, i]));
    expect(canonicalJson(long)).toBe(JSON.stringify(Object.fromEntries(Object.entries(long).sort())));
    expect(cachedKeyCount()).toBe(before);

    for (let round = 0; round < 3; round += 1) {
      const many = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`key_${round}_${i}`, i]));
      const expected = `{${Object.keys(many)
        .sort()
        .map((key) => `${JSON.stringify(key)}:${many[key]}`)
        .join(',')}}`;
      expect(canonicalJson(many)).toBe(expected);
    }
    expect(cachedKeyCount()).toBe(2048);
    // Past the bound, a key never seen is written as exactly as a cached one.
    expect(canonicalJson({ 'fresh "key"': 1, b: [2] })).toBe('{"b":[2],"fresh \\"key\\"":1}');
  });
});
