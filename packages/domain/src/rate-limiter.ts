import { OPERATIONS_BY_NAME } from '@tms/catalog';
import { DomainError } from './errors';

/**
 * Counts the operations a principal executes. `Domain.execute` calls `take` once per catalog
 * operation, before anything else, so a GraphQL document or an MCP call spends one token for
 * each operation it runs. `take` throws (or its promise rejects with)
 * DomainError('rate_limited', ..., retryAfterSeconds) when the bucket is empty. The in-process
 * buckets answer at once (no promise, so no extra turn of the event loop); a shared store
 * answers with a promise.
 */
export interface RateLimiter {
  take(principal: string, operation: string): void | Promise<void>;
  /** Releases what the limiter holds open (a connection to its store). */
  close?(): Promise<void>;
}

/** `count` operations per `windowSeconds`, refilled continuously. */
export interface RateLimit {
  count: number;
  windowSeconds: number;
}

/**
 * What RATE_LIMITS configures: a limit per operation name, and `default` for every operation not
 * named. A null limit means not limited.
 */
export interface RateLimitPolicy {
  default: RateLimit | null;
  operations: ReadonlyMap<string, RateLimit | null>;
}

/** RATE_LIMITS when unset: generous enough that no ordinary client meets it. */
export const DEFAULT_RATE_LIMITS = '*=1200/60';
const DEFAULT_LIMIT: RateLimit = { count: 1200, windowSeconds: 60 };

const MAX_COUNT = 1_000_000;
const MAX_WINDOW_SECONDS = 86_400;
const MAX_RETRY_AFTER_SECONDS = 3600;
/** Absorbs floating-point error in the refill sum (the shared store's script uses the same). */
export const TOKEN_EPSILON = 1e-9;

/** Whether a bucket holding `tokens` (refilled up to now) has one to spend. */
export function hasToken(tokens: number): boolean {
  return tokens >= 1 - TOKEN_EPSILON;
}

/**
 * The `rate_limited` error of a bucket holding `tokens` (< 1): it asks to wait the whole seconds
 * until one token is back (1..3600).
 */
export function rateLimited(operation: string, limit: RateLimit, tokens: number): DomainError {
  const seconds = Math.ceil(((1 - tokens) * limit.windowSeconds) / limit.count - TOKEN_EPSILON);
  return new DomainError(
    'rate_limited',
    `${operation}: ${limit.count} per ${limit.windowSeconds}s`,
    Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, seconds)),
  );
}

export type ParsedRateLimits = { ok: true; policy: RateLimitPolicy | null } | { ok: false; problems: string[] };

/**
 * Parse RATE_LIMITS: `off`, or comma-separated `name=count/seconds` entries where `name` is a
 * catalog operation or `*` (every operation not named) and an entry's value may be `off`.
 * Without a `*` entry, unnamed operations keep the default `*` limit. `off` yields a null policy.
 */
export function parseRateLimits(text: string): ParsedRateLimits {
  const trimmed = text.trim();
  if (trimmed === 'off') return { ok: true, policy: null };
  const problems: string[] = [];
  const operations = new Map<string, RateLimit | null>();
  let fallback: RateLimit | null | undefined;
  if (trimmed === '') problems.push('is empty (use "off" to disable rate limits)');
  for (const raw of trimmed === '' ? [] : trimmed.split(',')) {
    const entry = raw.trim();
    const match = /^([^=\s]+)\s*=\s*(?:(off)|(\d+)\s*\/\s*(\d+))$/.exec(entry);
    if (!match) {
      problems.push(`"${entry}" is not name=count/seconds or name=off (example: ${DEFAULT_RATE_LIMITS},recall=60/60)`);
      continue;
    }
    const [, name = '', off, countText, windowText] = match;
    if (name !== '*' && !OPERATIONS_BY_NAME.has(name)) {
      problems.push(`"${name}" is not an operation name (or * for every other operation)`);
      continue;
    }
    if (name === '*' ? fallback !== undefined : operations.has(name)) {
      problems.push(`"${name}" is given more than once`);
      continue;
    }
    let limit: RateLimit | null = null;
    if (!off) {
      const count = Number(countText);
      const windowSeconds = Number(windowText);
      if (count < 1 || count > MAX_COUNT) {
        problems.push(`"${entry}": the count must be between 1 and ${MAX_COUNT}`);
        continue;
      }
      if (windowSeconds < 1 || windowSeconds > MAX_WINDOW_SECONDS) {
        problems.push(`"${entry}": the window must be between 1 and ${MAX_WINDOW_SECONDS} seconds`);
        continue;
      }
      limit = { count, windowSeconds };
    }
    if (name === '*') fallback = limit;
    else operations.set(name, limit);
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, policy: { default: fallback === undefined ? DEFAULT_LIMIT : fallback, operations } };
}

export interface TokenBucketOptions {
  /** Milliseconds from any fixed origin, never decreasing; `performance.now` unless given (tests). */
  now?: () => number;
  /** The most buckets kept; past it the least recently used bucket is dropped. */
  maxBuckets?: number;
}

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms of the clock). */
  at: number;
}

/**
 * A token bucket per (principal, operation): `count` tokens, refilled at `count` per
 * `windowSeconds`; each operation spends one. A bucket that has filled up again is the same as
 * none, so buckets untouched for the longest window are dropped, and `maxBuckets` caps the rest
 * (the least recently used is dropped first, which at worst forgets a partly spent bucket).
 * State is in memory, per process.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly now: () => number;
  private readonly maxBuckets: number;
  /** A bucket untouched this long is full whatever its limit. */
  private readonly idleMs: number;

  constructor(
    readonly policy: RateLimitPolicy,
    options: TokenBucketOptions = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    this.maxBuckets = options.maxBuckets ?? 100_000;
    if (!(this.maxBuckets >= 1)) throw new RangeError('maxBuckets must be at least 1');
    const windows = [policy.default, ...policy.operations.values()].map((limit) => limit?.windowSeconds ?? 0);
    this.idleMs = Math.max(0, ...windows) * 1000;
  }

  /** The number of buckets held (tests). */
  get size(): number {
    return this.buckets.size;
  }

  limitFor(operation: string): RateLimit | null {
    const named = this.policy.operations.get(operation);
    return named === undefined ? this.policy.default : named;
  }

  take(principal: string, operation: string): void {
    const limit = this.limitFor(operation);
    if (!limit) return;
    const now = this.now();
    this.dropIdle(now);
    const key = `${operation}\u0000${principal}`;
    const windowMs = limit.windowSeconds * 1000;
    const found = this.buckets.get(key);
    let tokens = limit.count;
    if (found) {
      tokens = Math.min(limit.count, found.tokens + (Math.max(0, now - found.at) * limit.count) / windowMs);
      // Re-inserted below, so the map stays in order of last use.
      this.buckets.delete(key);
    } else if (this.buckets.size >= this.maxBuckets) {
      const oldest = this.buckets.keys().next();
      if (!oldest.done) this.buckets.delete(oldest.value);
    }
    const allowed = hasToken(tokens);
    this.buckets.set(key, { tokens: allowed ? Math.max(0, tokens - 1) : tokens, at: now });
    if (!allowed) throw rateLimited(operation, limit, tokens);
  }

  /** Drop buckets untouched for the longest window: they are full again. Oldest come first. */
  private dropIdle(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (now - bucket.at < this.idleMs) break;
      this.buckets.delete(key);
    }
  }
}

/** The limiter RATE_LIMITS asks for: none when it is `off` or limits nothing. */
export function rateLimiterFor(policy: RateLimitPolicy | null, options: TokenBucketOptions = {}): RateLimiter | null {
  if (!policy) return null;
  if (policy.default === null && [...policy.operations.values()].every((limit) => limit === null)) return null;
  return new TokenBucketRateLimiter(policy, options);
}
