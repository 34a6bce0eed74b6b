/**
 * Turns text into vectors for the semantic arm of recall (decisions §11). Three kinds:
 * `builtin` (a model shipped in an npm package, run in a niced child process), `openai` (any
 * OpenAI-compatible `/embeddings` endpoint) and `none` (semantic arm off).
 */
export interface Embedder {
  readonly kind: 'builtin' | 'openai' | 'none';
  /**
   * Names the vector space: every stored vector records it, and a vector of another model is
   * never compared with this one's (a change of model re-embeds). Includes the dimension count,
   * e.g. `builtin:use-lite@512` or `openai:text-embedding-3-small@1536`.
   */
  readonly model: string;
  readonly dimensions: number;
  /**
   * One unit-length vector per text, in order. `query` texts go ahead of queued `document`
   * texts (recall waits on them; the indexer does not). Throws `EmbedderUnavailableError` when the
   * model or the endpoint cannot answer now (recall then reports the semantic arm unavailable,
   * the indexer retries with backoff).
   */
  embed(texts: readonly string[], purpose: 'document' | 'query'): Promise<Float32Array[]>;
  /** Stop the child process or drop connections; later calls throw `EmbedderUnavailableError`. */
  close(): Promise<void>;
}

/** The embedder cannot answer now: the semantic arm is `unavailable`, retried later. */
export class EmbedderUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbedderUnavailableError';
  }
}
