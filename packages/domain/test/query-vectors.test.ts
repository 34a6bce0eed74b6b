import { type Embedder, EmbedderUnavailableError, type EmbedOptions } from '@tms/search';
import { describe, expect, it } from 'vitest';
import { QueryVectors } from '../src/query-vectors';

/** A tiny embedder in test code: the text's length as a one-dimensional vector, calls counted. */
class CountingEmbedder implements Embedder {
  readonly kind = 'openai' as const;
  readonly dimensions = 1;
  calls: string[] = [];
  failNext = false;
  constructor(readonly model: string) {}
  async ready() {
    return { model: this.model, dimensions: this.dimensions };
  }
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

/** An embedder whose answers wait until released; it records the signal of each call. */
class HeldEmbedder implements Embedder {
  readonly kind = 'openai' as const;
  readonly model = 'held@1';
  readonly dimensions = 1;
  signals: AbortSignal[] = [];
  private releases: (() => void)[] = [];
  async ready() {
    return { model: this.model, dimensions: this.dimensions };
  }
  embed(texts: readonly string[], _purpose: 'document' | 'query', options: EmbedOptions = {}) {
    const signal = options.signal as AbortSignal;
    this.signals.push(signal);
    return new Promise<Float32Array[]>((resolve, reject) => {
      signal.addEventListener('abort', () => reject(new EmbedderUnavailableError('abandoned')));
      this.releases.push(() => resolve(texts.map((t) => Float32Array.of(t.length))));
    });
  }
  release() {
    for (const release of this.releases.splice(0)) release();
  }
  async close(): Promise<void> {}
}

describe('query vectors nobody waits for', () => {
  it('keep the embedding while one recall still waits, and cancel it when the last one leaves', async () => {
    const embedder = new HeldEmbedder();
    const cache = new QueryVectors(embedder, 4);
    const first = new AbortController();
    const second = new AbortController();
    const a = cache.vectorFor('tea', first.signal);
    const b = cache.vectorFor('tea', second.signal);
    expect(embedder.signals).toHaveLength(1);
    first.abort();
    await expect(a).rejects.toBeInstanceOf(EmbedderUnavailableError);
    expect(embedder.signals[0]?.aborted).toBe(false);
    second.abort();
    await expect(b).rejects.toBeInstanceOf(EmbedderUnavailableError);
    expect(embedder.signals[0]?.aborted).toBe(true);
    // Not cached: the next recall of the text asks again.
    expect(cache.size).toBe(0);
    const c = cache.vectorFor('tea', new AbortController().signal);
    embedder.release();
    expect(Array.from((await c).vector)).toEqual([3]);
    expect(embedder.signals).toHaveLength(2);
  });

  it('answer a recall without a signal from the same shared embedding', async () => {
    const embedder = new HeldEmbedder();
    const cache = new QueryVectors(embedder, 4);
    const leaving = new AbortController();
    const a = cache.vectorFor('coffee', leaving.signal);
    const b = cache.vectorFor('coffee');
    leaving.abort();
    await expect(a).rejects.toBeInstanceOf(EmbedderUnavailableError);
    embedder.release();
    expect(Array.from((await b).vector)).toEqual([6]);
  });
});
