import { describe, expect, it } from 'vitest';
import { RecentlyUsed } from '../src/graphql/document-caches';

describe('RecentlyUsed (the GraphQL document caches)', () => {
  it('holds at most its bound, dropping the least recently read or written entry', () => {
    const cache = new RecentlyUsed<string, number>(3);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    // Reading `a` makes `b` the least recently used.
    expect(cache.get('a')).toBe(1);
    cache.set('d', 4);
    expect(cache.size).toBe(3);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c'), cache.get('d')]).toEqual([1, 3, 4]);
    // Writing an existing key refreshes it instead of adding one.
    cache.set('a', 10);
    cache.set('e', 5);
    expect(cache.size).toBe(3);
    expect(cache.get('c')).toBeUndefined();
    expect([cache.get('a'), cache.get('d'), cache.get('e')]).toEqual([10, 4, 5]);
  });
});
