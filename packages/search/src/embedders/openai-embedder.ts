import { abandoned, type Embedder, type EmbedderModel, EmbedderUnavailableError, type EmbedOptions } from './embedder';

export interface OpenAiEmbedderOptions {
  /** The API's base URL (`https://api.openai.com/v1`); requests go to `{url}/embeddings`. */
  url: string;
  /** Sent as `model`, and part of the vector space's name. */
  model: string;
  /** Sent as `Authorization: Bearer`, when given. */
  apiKey?: string | undefined;
  /**
   * Sent as `dimensions` and required of every answer. Unset: the model's own size, learned from
   * the endpoint's first answer (`ready()`, `probe()`); until then `model` and `dimensions` are null.
   */
  dimensions?: number | undefined;
  /** Most inputs in one request. Default 64. */
  batchSize?: number;
  /** One request's limit, answer included. Default 30 s. */
  timeoutMs?: number;
  /** Tries of one request, the first included, on network errors, timeouts, 429 and 5xx. Default 4. */
  attempts?: number;
  /** Wait before the first retry, doubled at each (a 429's Retry-After, when longer, wins). Default 250 ms. */
  retryDelayMs?: number;
  /** Longest wait between tries. Default 8 s. */
  maxRetryDelayMs?: number;
}

/** After a failed attempt to learn the model, `ready()` answers that failure for this long before asking again. */
const READY_RETRY_MS = 1000;

/** The boot check failed: the message is one line naming what is wrong. */
export class EmbedderProbeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbedderProbeError';
  }
}

/** Why one request failed, and whether trying it again may help. */
interface RequestFailure {
  retryable: boolean;
  message: string;
  /** A 429's Retry-After, in milliseconds. */
  retryAfterMs?: number;
}

type Attempt = { ok: true; vectors: Float32Array[] } | { ok: false; failure: RequestFailure };

/** The body of an error answer, cut to a line: OpenAI's `{error: {message}}`, else the text. */
function errorDetail(text: string): string {
  let detail = text;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const message = typeof body.error === 'string' ? body.error : (body.error?.message ?? body.message);
    if (typeof message === 'string') detail = message;
  } catch {
    // not JSON: the text as it is
  }
  detail = detail.replace(/\s+/g, ' ').trim();
  return detail.length > 200 ? `${detail.slice(0, 200)}...` : detail;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Any OpenAI-compatible embeddings API (`POST {url}/embeddings`): inputs in batches, each request
 * bounded in time and retried with exponential backoff while the failure may pass (network,
 * timeout, 429, 5xx). An answer is checked strictly (one vector per input, each index once, the
 * configured dimension count) and normalised to unit length, since compatible servers do not all
 * return unit vectors.
 */
export class OpenAiEmbedder implements Embedder {
  readonly kind = 'openai';
  private readonly endpoint: string;
  private readonly modelName: string;
  private readonly apiKey: string | undefined;
  private readonly requestedDimensions: number | undefined;
  private learnedDimensions: number | undefined;
  private readonly batchSize: number;
  private readonly timeoutMs: number;
  private readonly attempts: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  /** Aborted by `close()`: ends requests in flight and waits between retries. */
  private readonly closing = new AbortController();
  /** The request learning the dimension count, while one runs (`ready`). */
  private learning: Promise<EmbedderModel> | null = null;
  private lastProbeFailure: { at: number; message: string } | null = null;

  constructor(options: OpenAiEmbedderOptions) {
    this.endpoint = `${options.url.replace(/\/+$/, '')}/embeddings`;
    this.modelName = options.model;
    this.apiKey = options.apiKey;
    this.requestedDimensions = options.dimensions;
    this.batchSize = options.batchSize ?? 64;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.attempts = Math.max(1, options.attempts ?? 4);
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 8_000;
  }

  /** The configured dimension count, else the one the endpoint's first answer gave; null before that. */
  get dimensions(): number | null {
    return this.requestedDimensions ?? this.learnedDimensions ?? null;
  }

  /** `openai:<model>@<dimensions>`; null while the dimension count is not known. */
  get model(): string | null {
    const dimensions = this.dimensions;
    return dimensions === null ? null : `openai:${this.modelName}@${dimensions}`;
  }

  /**
   * The boot check: embeds one text, once, and tells in one line what is wrong (the URL, the
   * endpoint, the key, the answer or the dimension count). Learns the dimension count when none
   * was configured; resolves with it.
   */
  async probe(): Promise<number> {
    const attempt = await this.attempt(['dimension probe'], this.requestedDimensions);
    if (!attempt.ok) throw new EmbedderProbeError(attempt.failure.message);
    const got = attempt.vectors[0]?.length as number;
    if (this.requestedDimensions === undefined) this.learnedDimensions = got;
    return got;
  }

  /**
   * The model, learning the dimension count from one request when it is not known yet: one such
   * request at a time, and none within `READY_RETRY_MS` of a failed one (recall asks on every
   * call while the endpoint is down).
   */
  ready(): Promise<EmbedderModel> {
    const known = this.known();
    if (known) return Promise.resolve(known);
    if (this.closing.signal.aborted) return Promise.reject(new EmbedderUnavailableError('openai embedder closed'));
    if (this.learning) return this.learning;
    if (this.lastProbeFailure && performance.now() - this.lastProbeFailure.at < READY_RETRY_MS) {
      return Promise.reject(new EmbedderUnavailableError(this.lastProbeFailure.message));
    }
    this.learning = this.probe()
      .then(() => this.known() as EmbedderModel)
      .catch((error: Error) => {
        this.lastProbeFailure = { at: performance.now(), message: error.message };
        throw new EmbedderUnavailableError(error.message, { cause: error });
      })
      .finally(() => {
        this.learning = null;
      });
    return this.learning;
  }

  private known(): EmbedderModel | null {
    const model = this.model;
    const dimensions = this.dimensions;
    return model === null || dimensions === null ? null : { model, dimensions };
  }

  async embed(
    texts: readonly string[],
    _purpose: 'document' | 'query',
    options: EmbedOptions = {},
  ): Promise<Float32Array[]> {
    // Requests run side by side on the endpoint, so a query never queues behind documents here.
    if (this.closing.signal.aborted) throw new EmbedderUnavailableError('openai embedder closed');
    const { signal } = options;
    if (signal?.aborted) throw abandoned(signal);
    const { dimensions } = await this.ready();
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      vectors.push(...(await this.request(texts.slice(start, start + this.batchSize), dimensions, signal)));
    }
    return vectors;
  }

  async close(): Promise<void> {
    this.closing.abort();
  }

  /** One batch, tried up to `attempts` times while the failure may pass. */
  private async request(inputs: readonly string[], expected: number, signal?: AbortSignal): Promise<Float32Array[]> {
    const stop = signal ? AbortSignal.any([this.closing.signal, signal]) : this.closing.signal;
    let failure: RequestFailure | undefined;
    for (let tried = 0; tried < this.attempts; tried++) {
      if (failure) {
        const backoff = Math.min(this.maxRetryDelayMs, this.retryDelayMs * 2 ** (tried - 1));
        await sleep(Math.min(this.maxRetryDelayMs, Math.max(backoff, failure.retryAfterMs ?? 0)), stop);
      }
      if (this.closing.signal.aborted) throw new EmbedderUnavailableError('openai embedder closed');
      if (signal?.aborted) throw abandoned(signal);
      const attempt = await this.attempt(inputs, expected, signal);
      if (signal?.aborted) throw abandoned(signal);
      if (attempt.ok) return attempt.vectors;
      failure = attempt.failure;
      if (!failure.retryable) break;
    }
    const tries = failure?.retryable ? ` (after ${this.attempts} tries)` : '';
    throw new EmbedderUnavailableError(`${failure?.message ?? 'no answer'}${tries}`);
  }

  /** One request and the strict reading of its answer. */
  private async attempt(
    inputs: readonly string[],
    expected: number | undefined,
    signal?: AbortSignal,
  ): Promise<Attempt> {
    const where = `embeddings endpoint ${this.endpoint}`;
    const fail = (retryable: boolean, message: string, retryAfterMs?: number): Attempt => ({
      ok: false,
      failure: { retryable, message, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) },
    });
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const body = JSON.stringify({
      model: this.modelName,
      // OpenAI refuses an empty input; a blank has no meaning to encode either way.
      input: inputs.map((text) => (text === '' ? ' ' : text)),
      ...(this.requestedDimensions === undefined ? {} : { dimensions: this.requestedDimensions }),
    });
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await fetch(this.endpoint, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.any([timeout, this.closing.signal, ...(signal ? [signal] : [])]),
      });
      text = await response.text();
    } catch (error) {
      if (this.closing.signal.aborted) return fail(false, 'openai embedder closed');
      if (signal?.aborted) return fail(false, 'the caller stopped waiting for the embedding');
      if (timeout.aborted) return fail(true, `${where} did not answer within ${this.timeoutMs} ms`);
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      return fail(true, `${where} is unreachable (${reason})`);
    }

    if (!response.ok) {
      const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
      const detail = errorDetail(text);
      const said = detail ? `: ${detail}` : '';
      if (response.status === 429) {
        const seconds = Number(response.headers.get('retry-after'));
        return fail(true, `${where} answered ${status}${said}`, Number.isFinite(seconds) ? seconds * 1000 : undefined);
      }
      if (response.status >= 500) return fail(true, `${where} answered ${status}${said}`);
      if (response.status === 401 || response.status === 403) {
        return fail(false, `${where} refused the key (${status}; check EMBEDDINGS_API_KEY)${said}`);
      }
      if (response.status === 404 || response.status === 405) {
        return fail(false, `${where} answered ${status}: is EMBEDDINGS_URL the API's base URL (ending /v1)?${said}`);
      }
      return fail(false, `${where} answered ${status}${said}`);
    }

    const problem = (what: string): Attempt => fail(false, `${where} gave an unusable answer: ${what}`);
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      return problem('not JSON');
    }
    const data = (answer as { data?: unknown } | null)?.data;
    if (!Array.isArray(data)) return problem('no `data` array');
    if (data.length !== inputs.length) return problem(`${data.length} embeddings for ${inputs.length} inputs`);
    const vectors: (Float32Array | undefined)[] = new Array(inputs.length);
    for (const item of data as { index?: unknown; embedding?: unknown }[]) {
      const index = item?.index;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= inputs.length) {
        return problem(`an embedding with index ${JSON.stringify(index)}`);
      }
      if (vectors[index]) return problem(`index ${index} twice`);
      const embedding = item.embedding;
      if (!Array.isArray(embedding)) return problem(`embedding ${index} is not an array of numbers`);
      const size = expected ?? vectors.find((v) => v)?.length ?? embedding.length;
      if (embedding.length !== size) {
        const configured = this.requestedDimensions === undefined ? '' : ' (EMBEDDINGS_DIMENSIONS)';
        return problem(`${embedding.length} dimensions where ${size} were expected${configured}`);
      }
      const vector = new Float32Array(size);
      let sum = 0;
      for (let i = 0; i < size; i++) {
        const x = embedding[i];
        if (typeof x !== 'number' || !Number.isFinite(x)) return problem(`embedding ${index} holds a non-number`);
        vector[i] = x;
        sum += x * x;
      }
      if (sum === 0) return problem(`embedding ${index} is all zeros`);
      const norm = Math.sqrt(sum);
      for (let i = 0; i < size; i++) vector[i] = (vector[i] as number) / norm;
      vectors[index] = vector;
    }
    return { ok: true, vectors: vectors as Float32Array[] };
  }
}
