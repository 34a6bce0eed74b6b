import { Redis } from 'ioredis';
import {
  type RateLimit,
  type RateLimiter,
  type RateLimitPolicy,
  rateLimited,
  TOKEN_EPSILON,
  type TokenBucketOptions,
  TokenBucketRateLimiter,
} from './rate-limiter';

/**
 * The token bucket of `TokenBucketRateLimiter`, kept in Redis: one hash per (operation,
 * principal) holding its tokens (`t`) and when they were counted (`a`, ms of the Redis server's
 * clock, so gateways with different clocks agree). One script call takes a token from each bucket
 * of a batch, atomically and in order (a bucket named twice is spent twice); a hash expires once
 * it would be full again. Refused calls spend nothing. KEYS are the buckets, ARGV their count and
 * window (ms) in pairs; the answer holds, per bucket, whether the call may run and the tokens
 * left (as text: a Lua number reply would be truncated to an integer).
 */
const TAKE_TOKENS_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local answers = {}
for i, key in ipairs(KEYS) do
  local count = tonumber(ARGV[2 * i - 1])
  local window_ms = tonumber(ARGV[2 * i])
  local tokens = count
  local bucket = redis.call('HMGET', key, 't', 'a')
  if bucket[1] and bucket[2] then
    local elapsed = math.max(0, now - tonumber(bucket[2]))
    tokens = math.min(count, tonumber(bucket[1]) + elapsed * count / window_ms)
  end
  local allowed = 0
  if tokens >= 1 - ${TOKEN_EPSILON} then
    allowed = 1
    tokens = math.max(0, tokens - 1)
  end
  local left = string.format('%.17g', tokens)
  redis.call('HSET', key, 't', left, 'a', string.format('%.17g', now))
  redis.call('PEXPIRE', key, window_ms)
  answers[2 * i - 1] = allowed
  answers[2 * i] = left
end
return answers
`;

/** Buckets asked in one script call at most (the rest of a turn's calls go in further calls). */
const MAX_BATCH = 128;

interface TokenCommands {
  /** `numberOfKeys`, then the keys, then (count, windowMs) per key. */
  takeRateTokens(numberOfKeys: number, ...keysThenLimits: (string | number)[]): Promise<(number | string)[]>;
}

interface PendingTake {
  principal: string;
  operation: string;
  limit: RateLimit;
  resolve(): void;
  reject(error: unknown): void;
}

/** What RATE_LIMIT_REDIS_PREFIX is when unset. */
export const DEFAULT_RATE_LIMIT_REDIS_PREFIX = 'tms:rate:';

export interface RedisRateLimiterOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://` (TLS). */
  url: string;
  /** Put before every key, so that deployments (or tests) sharing one Redis keep apart. */
  keyPrefix?: string;
  /**
   * A command unanswered this long is given up and the call counted in process (a Redis that
   * hangs must not stall requests).
   */
  commandTimeoutMs?: number;
  /** While Redis is unreachable it is asked (PING) this often whether it is back. */
  probeIntervalMs?: number;
  /** Told once each time Redis becomes unreachable: the limits are per process until it is back. */
  onUnreachable?: (event: { url: string; reason: string }) => void;
  /** Told once each time Redis answers again after `onUnreachable`. */
  onRecovered?: (event: { url: string }) => void;
  /** For the in-process buckets used while Redis is unreachable. */
  fallback?: TokenBucketOptions;
}

/** The URL without its user and password, for logs. */
export function redisUrlForLogs(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(unparseable Redis URL)';
  }
}

/**
 * One rate limit shared by every process using the same Redis (RATE_LIMIT_REDIS_URL): the same
 * token buckets as `TokenBucketRateLimiter`, one script call (one round trip) for the operations
 * of one turn of the event loop.
 *
 * When Redis cannot be reached, answers an error or takes longer than `commandTimeoutMs`, the
 * call is counted by in-process buckets instead, and so are the following calls without trying
 * Redis while a probe asks it every `probeIntervalMs` whether it is back: each process then
 * applies the limits alone, as without Redis, and nobody gets a 5xx or waits on a Redis that
 * hangs. `onUnreachable` and `onRecovered` are told once per change.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis & TokenCommands;
  private readonly fallback: TokenBucketRateLimiter;
  private readonly keyPrefix: string;
  private readonly probeIntervalMs: number;
  private readonly commandTimeoutMs: number;
  /** The URL as logs show it (no credentials). */
  readonly url: string;
  private reachable = true;
  /** Calls of this turn of the event loop, sent together at its end. */
  private readonly pending: PendingTake[] = [];
  private probeTimer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    readonly policy: RateLimitPolicy,
    private readonly options: RedisRateLimiterOptions,
  ) {
    this.fallback = new TokenBucketRateLimiter(policy, options.fallback);
    this.keyPrefix = options.keyPrefix ?? DEFAULT_RATE_LIMIT_REDIS_PREFIX;
    this.probeIntervalMs = options.probeIntervalMs ?? 1000;
    this.url = redisUrlForLogs(options.url);
    this.commandTimeoutMs = options.commandTimeoutMs ?? 100;
    this.redis = new Redis(options.url, {
      lazyConnect: true,
      // Fail at once while disconnected (the call is counted in process) rather than queue.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: Math.max(1000, this.commandTimeoutMs),
      // Reconnect forever, at most a second apart: the limits are shared again once it is back.
      retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
      // No auto-pipelining: each request reaches the limiter in a turn of its own, so it batched
      // nothing and cost CPU (about 1.5x per call measured with one or a few calls in flight).
      enableAutoPipelining: false,
    }) as Redis & TokenCommands;
    this.redis.defineCommand('takeRateTokens', { lua: TAKE_TOKENS_SCRIPT });
    // Connection errors come as events (and each reconnection attempt makes one): without a
    // listener ioredis prints them.
    this.redis.on('error', (error: Error) => this.unreachable(error));
    this.redis.on('close', () => {
      if (!this.closed) this.unreachable(new Error('connection closed'));
    });
  }

  /**
   * Connect, waiting at most `timeoutMs`. Never fails: an unreachable Redis is reported and the
   * limits are counted in process until it answers.
   */
  async connect(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.redis.connect(), timeout]);
    } catch (error) {
      this.unreachable(error as Error);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether the shared buckets are in use (false: counted in process until Redis is back). */
  get shared(): boolean {
    return this.reachable;
  }

  take(principal: string, operation: string): void | Promise<void> {
    const limit = this.fallback.limitFor(operation);
    if (!limit) return;
    if (!this.reachable) return this.fallback.take(principal, operation);
    return this.takeShared(principal, operation, limit);
  }

  /**
   * Queued until the end of this turn of the event loop (setImmediate runs after its I/O phase),
   * so the calls of the requests read in one turn go to Redis in one script call: one round trip
   * per operation at most, fewer under load.
   */
  private takeShared(principal: string, operation: string, limit: RateLimit): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ principal, operation, limit, resolve, reject });
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const batch = this.pending.splice(0);
    // Redis became unreachable while these waited: they are counted in process like the next ones.
    if (!this.reachable) {
      for (const take of batch) this.takeLocally(take);
      return;
    }
    for (let from = 0; from < batch.length; from += MAX_BATCH) void this.send(batch.slice(from, from + MAX_BATCH));
  }

  private async send(batch: PendingTake[]): Promise<void> {
    const keys = batch.map((take) => `${this.keyPrefix}${take.operation}:${take.principal}`);
    const limits = batch.flatMap((take) => [take.limit.count, take.limit.windowSeconds * 1000]);
    let answer: (number | string)[];
    try {
      answer = await this.answered(this.redis.takeRateTokens(batch.length, ...keys, ...limits));
    } catch (error) {
      this.unreachable(error as Error);
      for (const take of batch) this.takeLocally(take);
      return;
    }
    batch.forEach((take, i) => {
      if (answer[2 * i] === 1) take.resolve();
      else take.reject(rateLimited(take.operation, take.limit, Number(answer[2 * i + 1])));
    });
  }

  private takeLocally(take: PendingTake): void {
    try {
      this.fallback.take(take.principal, take.operation);
      take.resolve();
    } catch (error) {
      take.reject(error);
    }
  }

  /**
   * The command's answer, or a rejection when it has none after `commandTimeoutMs`. The time is
   * Redis's, not this process's: when the timer fires, the check waits for the end of the event
   * loop's I/O phase (setImmediate), so an answer that came in while this process was busy (a
   * loaded event loop runs late timers before it reads sockets) still counts.
   */
  private answered<T>(command: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(
        () =>
          setImmediate(() => {
            if (settled) return;
            settled = true;
            reject(new Error(`timed out: no answer within ${this.commandTimeoutMs} ms`));
          }),
        this.commandTimeoutMs,
      );
      command.then(
        (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  private unreachable(error: Error): void {
    if (this.closed || !this.reachable) return;
    this.reachable = false;
    this.options.onUnreachable?.({ url: this.url, reason: error.message });
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.closed || this.probeTimer) return;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      this.answered(this.redis.ping()).then(
        () => {
          if (this.closed) return;
          this.reachable = true;
          this.options.onRecovered?.({ url: this.url });
        },
        () => this.scheduleProbe(),
      );
    }, this.probeIntervalMs);
    // Waiting for Redis never keeps a process alive.
    this.probeTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
