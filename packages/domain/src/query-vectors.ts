import type { Embedder } from '@tms/search';

/** Query vectors a process remembers: a repeated recall skips the embedder. */
export const QUERY_VECTOR_CACHE_SIZE = 512;

/**
 * The embedder as recall's semantic arm uses it: one query text at a time, through a small LRU
 * cache keyed by model and text (a vector depends on nothing else). Concurrent recalls of one
 * text share one embedding; a failure is not cached, so the next recall asks the embedder again.
 */
export class QueryVectors {
  /** Most recently used last. */
  private readonly cache = new Map<string, Promise<Float32Array>>();

  constructor(
    readonly embedder: Embedder,
    private readonly capacity: number = QUERY_VECTOR_CACHE_SIZE,
  ) {}

  get model(): string {
    return this.embedder.model;
  }

  /** Entries held now (tests). */
  get size(): number {
    return this.cache.size;
  }

  vectorFor(text: string): Promise<Float32Array> {
    const key = `${this.embedder.model}\u0000${text}`;
    const held = this.cache.get(key);
    if (held) {
      this.cache.delete(key);
      this.cache.set(key, held);
      return held;
    }
    const made = this.embedder.embed([text], 'query').then((vectors) => {
      const vector = vectors[0];
      if (!vector) throw new Error(`embedder ${this.embedder.model} returned no vector for a query`);
      return vector;
    });
    this.cache.set(key, made);
    made.catch(() => {
      if (this.cache.get(key) === made) this.cache.delete(key);
    });
    while (this.cache.size > this.capacity) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
    return made;
  }
}
