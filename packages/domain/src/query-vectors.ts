import { type Embedder, EmbedderUnavailableError } from '@tms/search';

/** Query vectors a process remembers: a repeated recall skips the embedder. */
export const QUERY_VECTOR_CACHE_SIZE = 512;

/**
 * The embedder as recall's semantic arm uses it: one query text at a time, through a small LRU
 * cache keyed by model and text (a vector depends on nothing else). Concurrent recalls of one
 * text share one embedding; a failure is not cached, so the next recall asks the embedder again.
 */
export class QueryVectors {
  /** Most recently used last. */
  private readonly cache = new Map<string, Promise<{ model: string; vector: Float32Array }>>();

  constructor(
    readonly embedder: Embedder,
    private readonly capacity: number = QUERY_VECTOR_CACHE_SIZE,
  ) {}

  /**
   * The embedder's model, or null while it is not known (an `openai` embedder without
   * EMBEDDINGS_DIMENSIONS before its boot probe answered).
   */
  model(): string | null {
    try {
      return this.embedder.model;
    } catch {
      return null;
    }
  }

  /** Entries held now (tests). */
  get size(): number {
    return this.cache.size;
  }

  /**
   * The query's vector and the model that made it, from the cache when held. Rejects with
   * `EmbedderUnavailableError` when the embedder cannot answer (or its model is not known yet).
   */
  vectorFor(text: string): Promise<{ model: string; vector: Float32Array }> {
    const model = this.model();
    if (model === null) {
      return Promise.reject(new EmbedderUnavailableError('the embedder has not learned its dimension count yet'));
    }
    const key = `${model}\u0000${text}`;
    const held = this.cache.get(key);
    if (held) {
      this.cache.delete(key);
      this.cache.set(key, held);
      return held;
    }
    const made = this.embedder.embed([text], 'query').then((vectors) => {
      const vector = vectors[0];
      if (!vector) throw new EmbedderUnavailableError(`embedder ${model} returned no vector for a query`);
      return { model, vector };
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
