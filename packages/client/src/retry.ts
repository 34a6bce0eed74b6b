import type { TmsError } from './errors';

/** How hard the client tries before it gives up (every bound applies; `retry: false` disables retries). */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 5. */
  maxAttempts?: number;
  /** No retry starts later than this after the call began. Default 60000. */
  maxElapsedMs?: number;
  /** First backoff ceiling; it doubles with each retry. Default 250. */
  baseDelayMs?: number;
  /** Backoff ceiling (a `Retry-After` from the service may ask for more, and is honoured). Default 10000. */
  maxDelayMs?: number;
  /** One attempt is abandoned (and counts as a network failure) after this long. Default 30000. */
  attemptTimeoutMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 5,
  maxElapsedMs: 60_000,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  attemptTimeoutMs: 30_000,
};

export function retryPolicy(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { ...DEFAULT_RETRY, maxAttempts: 1 };
  const policy = { ...DEFAULT_RETRY, ...options };
  for (const [key, value] of Object.entries(policy)) {
    if (!Number.isFinite(value) || value < 0) throw new RangeError(`retry.${key} must be a non-negative number`);
  }
  if (policy.maxAttempts < 1) throw new RangeError('retry.maxAttempts must be at least 1');
  return policy;
}

/** What went wrong with one attempt. */
export type AttemptFailure =
  /** No answer: the connection failed or was cut, or the attempt timed out. The request may have arrived. */
  | { kind: 'network'; cause: unknown }
  /** The service (or a proxy) answered with an error. */
  | { kind: 'answer'; error: TmsError };

/** What the retry decision needs to know about an operation. */
export interface RetryTraits {
  idempotent: boolean;
  mutates: boolean;
}

/**
 * Whether a failed attempt may be repeated. Reads and idempotent writes (whose key makes a repeat
 * replay the first result) retry every retryable error and every network failure. A write without
 * an idempotency key retries only `rate_limited`, which the service answers before executing
 * anything: after any other failure the first attempt may have taken effect.
 */
export function mayRetry(op: RetryTraits, failure: AttemptFailure): boolean {
  const repeatable = op.idempotent || !op.mutates;
  if (failure.kind === 'network') return repeatable;
  if (!failure.error.retryable) return false;
  return repeatable || failure.error.code === 'rate_limited';
}

/**
 * Milliseconds to wait before retry number `retry` (1 for the first): full jitter, a uniform draw
 * below an exponentially growing ceiling, but never less than the service's `retry_after_seconds`.
 */
export function backoffMs(policy: RetryPolicy, retry: number, failure: AttemptFailure, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const jitter = Math.floor(random() * ceiling);
  const retryAfter = failure.kind === 'answer' ? failure.error.retry_after_seconds : null;
  return retryAfter === null ? jitter : Math.max(jitter, Math.ceil(retryAfter * 1000));
}

/** Resolve after `ms`, or reject with the signal's reason when it aborts first. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
