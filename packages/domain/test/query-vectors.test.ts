import { type Embedder, EmbedderUnavailableError } from '@tms/search';
import { describe, expect, it } from 'vitest';
import { QueryVectors } from '../src/query-vectors';

/** A tiny embedder in test code: the text's length as a one-dimensional vector, calls counted. */
class CountingEmbedder implements Embedder {
  readonly kind = 'openai' as const;
  readonly dimensions = 1;
  calls: string[] = [];
  failNext = false;
  constructor(readonly model: string) {}
  async embed(texts: readonly string[], purpose: 'document' | 'query'): Promise<Float32Array[]> {
    expect(purpose).toBe('query');
    this.calls.push(...texts);
    if (this.failNext) {
      this.failNext = false;
      throw new EmbedderUnavailableError('down');
    }
    return texts.map((t) => Float32Array.of(t.length));
  }
  async close(): Promise<void> {}
}

describe('query vectors cache', () => {
  it('embeds a text once, shares a pending embedding, and forgets the least recently used', async () => {
    const embedder = new CountingEmbedder('m@1');
    const cache = new QueryVectors(embedder, 2);
    const [a1, a2] = await Promise.all([cache.vectorFor('aa'), cache.vectorFor('aa')]);
    expect(a1).toBe(a2);
    expect(a1.model).toBe('m@1');
    expect(Array.from(a1.vector)).toEqual([2]);
    await cache.vectorFor('bbb');
    await cache.vectorFor('aa'); // aa is now the most recent
    await cache.vectorFor('c'); // evicts bbb
    expect(cache.size).toBe(2);
    await cache.vectorFor('aa');
    await cache.vectorFor('bbb');
    expect(embedder.calls).toEqual(['aa', 'bbb', 'c', 'bbb']);
  });

  it('does not keep a failure: the next call asks the embedder again', async () => {
    const embedder = new CountingEmbedder('m@1');
    const cache = new QueryVectors(embedder, 4);
    embedder.failNext = true;
    await expect(cache.vectorFor('tea')).rejects.toBeInstanceOf(EmbedderUnavailableError);
    expect(cache.size).toBe(0);
    expect(Array.from((await cache.vectorFor('tea')).vector)).toEqual([3]);
    expect(embedder.calls).toEqual(['tea', 'tea']);
  });
});
