import { type Embedder, EmbedderUnavailableError } from '@tms/search';
import { LRUCache } from 'lru-cache';

/** Query vectors a process remembers: a repeated recall skips the embedder. */
export const QUERY_VECTOR_CACHE_SIZE = 512;

interface QueryVector {
  model: string;
  vector: Float32Array;
}

/** One text's embedding, shared by every recall waiting for it; cancelled when the last of them stops waiting. */
interface Entry {
  vector: Promise<QueryVector>;
  /** Recalls waiting for the embedding now; 0 once it is settled. */
  waiting: number;
  cancel: AbortController;
  settled: boolean;
  /** A recall waits for it without a signal (no deadline): it is never cancelled. */
  kept: boolean;
}

/**
 * The embedder as recall's semantic arm uses it: one query text at a time, through a small LRU
 * cache keyed by model and text (a vector depends on nothing else). Concurrent recalls of one
 * text share one embedding; a failure is not cached, so the next recall asks the embedder again.
 * A recall that stops waiting (its deadline) says so with its signal: once no recall waits for
 * an embedding any more, it is cancelled, so nothing nobody waits for stays queued.
 */
export class QueryVectors {
  private readonly cache: LRUCache<string, Entry>;

  constructor(
    readonly embedder: Embedder,
    capacity: number = QUERY_VECTOR_CACHE_SIZE,
  ) {
    this.cache = new LRUCache({ max: capacity });
  }

  /**
   * The embedder's model, or null while it is not known (an `openai` embedder without
   * EMBEDDINGS_DIMENSIONS before its endpoint first answered); asking starts learning it.
   */
  model(): string | null {
    const model = this.embedder.model;
    if (model === null) this.embedder.ready().catch(() => {});
    return model;
  }

  /** Entries held now (tests). */
  get size(): number {
    return this.cache.size;
  }

  /**
   * The query's vector and the model that made it, from the cache when held. Rejects with
   * `EmbedderUnavailableError` when the embedder cannot answer (or its model is not known yet),
   * and once `signal` is aborted.
   */
  vectorFor(text: string, signal?: AbortSignal): Promise<QueryVector> {
    const model = this.model();
    if (model === null) {
      return Promise.reject(new EmbedderUnavailableError('the embedder has not learned its model yet'));
    }
    const key = `${model}\u0000${text}`;
    let entry = this.cache.get(key);
    if (!entry) {
      entry = this.embed(key, model, text);
      this.cache.set(key, entry);
    }
    return this.wait(key, entry, signal);
  }

  private embed(key: string, model: string, text: string): Entry {
    const cancel = new AbortController();
    const made = this.embedder.embed([text], 'query', { signal: cancel.signal }).then((vectors) => {
      const vector = vectors[0];
      if (!vector) throw new EmbedderUnavailableError(`embedder ${model} returned no vector for a query`);
      return { model, vector };
    });
    const entry: Entry = { vector: made, waiting: 0, cancel, settled: false, kept: false };
    made.then(
      () => {
        entry.settled = true;
      },
      () => {
        entry.settled = true;
        if (this.cache.peek(key) === entry) this.cache.delete(key);
      },
    );
    return entry;
  }

  /** The entry's vector for one recall; when the last recall waiting for it gives up, the embedding is cancelled. */
  private wait(key: string, entry: Entry, signal: AbortSignal | undefined): Promise<QueryVector> {
    if (!signal) entry.kept = true;
    if (entry.settled || !signal) return entry.vector;
    if (signal.aborted) return Promise.reject(new EmbedderUnavailableError('the recall stopped waiting'));
    entry.waiting += 1;
    return new Promise<QueryVector>((resolve, reject) => {
      const leave = () => {
        signal.removeEventListener('abort', onAbort);
        entry.waiting -= 1;
      };
      const onAbort = () => {
        leave();
        if (entry.waiting === 0 && !entry.settled && !entry.kept) {
          entry.cancel.abort();
          if (this.cache.peek(key) === entry) this.cache.delete(key);
        }
        reject(new EmbedderUnavailableError('the recall stopped waiting', { cause: signal.reason }));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      entry.vector.then(
        (vector) => {
          leave();
          resolve(vector);
        },
        (error: unknown) => {
          leave();
          reject(error);
        },
      );
    });
  }
}
