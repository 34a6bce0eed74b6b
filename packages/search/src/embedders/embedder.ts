/**
 * Turns text into vectors for the semantic arm of recall (decisions §11). Three kinds:
 * `builtin` (a model shipped in an npm package, run in a child process), `openai` (any
 * OpenAI-compatible `/embeddings` endpoint) and `none` (semantic arm off).
 */
export interface Embedder {
  readonly kind: 'builtin' | 'openai' | 'none';
  /**
   * Names the vector space: every stored vector records it, and a vector of another model is
   * never compared with this one's (a change of model re-embeds). Includes the dimension count,
   * e.g. `builtin:use-lite@512` or `openai:text-embedding-3-small@1536`. Null while it is not
   * known: an `openai` embedder without configured dimensions learns them from the endpoint's
   * first answer (`ready()`).
   */
  readonly model: string | null;
  /** The vectors' dimension count; null while `model` is. */
  readonly dimensions: number | null;
  /**
   * The model, once the embedder can tell it: at once when it is known, else after asking the
   * model or the endpoint (shared by concurrent callers). Rejects with `EmbedderUnavailableError`
   * while it cannot be learned; a later call tries again.
   */
  ready(): Promise<EmbedderModel>;
  /**
   * One unit-length vector per text, in order. `query` texts go ahead of queued `document`
   * texts (recall waits on them; the indexer does not). Throws `EmbedderUnavailableError` when the
   * model or the endpoint cannot answer now (recall then reports the semantic arm unavailable,
   * the indexer retries with backoff), or once `signal` is aborted: work not started by then is
   * dropped, so a caller that stopped waiting leaves nothing queued behind it.
   */
  embed(texts: readonly string[], purpose: 'document' | 'query', options?: EmbedOptions): Promise<Float32Array[]>;
  /** Stop the child process or drop connections; later calls throw `EmbedderUnavailableError`. */
  close(): Promise<void>;
}

export interface EmbedderModel {
  model: string;
  dimensions: number;
}

export interface EmbedOptions {
  /** Aborted when the caller stops waiting (recall's deadline): the texts not yet embedded are dropped. */
  signal?: AbortSignal | undefined;
}

/** The embedder cannot answer now: the semantic arm is `unavailable`, retried later. */
export class EmbedderUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EmbedderUnavailableError';
  }
}

/** The error an aborted `embed` rejects with: the signal's reason when it is one, else a new one. */
export function abandoned(signal: AbortSignal): EmbedderUnavailableError {
  return signal.reason instanceof EmbedderUnavailableError
    ? signal.reason
    : new EmbedderUnavailableError('the caller stopped waiting for the embedding', { cause: signal.reason });
}
