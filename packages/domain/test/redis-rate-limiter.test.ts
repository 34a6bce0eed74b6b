import { freePort } from '@tms/testkit';
import { PrivateRedis, redisKeyPrefix, SHARED_REDIS_URL } from '@tms/testkit/redis-server';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../src/errors';
import { parseRateLimits, type RateLimitPolicy, TokenBucketRateLimiter } from '../src/rate-limiter';
import { RedisRateLimiter, type RedisRateLimiterOptions, redisUrlForLogs } from '../src/redis-rate-limiter';

// RATE_LIMIT_REDIS_URL: the in-process token buckets kept in a real Redis (the shared server on
// 6379, each test under a key prefix of its own), and what happens when that Redis is gone or
// hangs (a private redis-server this file stops and freezes).

function policy(text: string): RateLimitPolicy {
  const parsed = parseRateLimits(text);
  if (!parsed.ok || !parsed.policy) throw new Error(parsed.ok ? 'no policy' : parsed.problems.join('; '));
  return parsed.policy;
}

/** The error a `take` refuses with, or null when it lets the call through. */
async function attempt(
  limiter: { take(p: string, o: string): void | Promise<void> },
  principal: string,
  operation: string,
): Promise<DomainError | null> {
  try {
    await limiter.take(principal, operation);
    return null;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
}

async function spend(limiter: RedisRateLimiter, principal: string, operation: string, times: number): Promise<void> {
  for (let i = 0; i < times; i += 1) expect(await attempt(limiter, principal, operation)).toBeNull();
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Events {
  unreachable: { url: string; reason: string }[];
  recovered: { url: string }[];
}

const opened: RedisRateLimiter[] = [];

/** A connected limiter; `events` collects what it reports. */
async function limiterOn(
  text: string,
  options: Partial<RedisRateLimiterOptions> & { url?: string },
  events: Events = { unreachable: [], recovered: [] },
): Promise<RedisRateLimiter> {
  const limiter = new RedisRateLimiter(policy(text), {
    url: SHARED_REDIS_URL,
    // Generous: a loaded test machine may leave a reply unread for a while, and only the test
    // that freezes Redis means to go past it.
    commandTimeoutMs: 2000,
    ...options,
    onUnreachable: (event) => events.unreachable.push(event),
    onRecovered: (event) => events.recovered.push(event),
  });
  opened.push(limiter);
  await limiter.connect();
  return limiter;
}

let inspect: Redis;
beforeAll(() => {
  inspect = new Redis(SHARED_REDIS_URL);
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((limiter) => limiter.close()));
});
afterAll(async () => {
  await inspect?.quit();
});

describe('shared buckets in Redis', () => {
  it('lets count calls through, then refuses with the seconds the in-process bucket names', async () => {
    const keyPrefix = redisKeyPrefix('semantics');
    const events: Events = { unreachable: [], recovered: [] };
    const limiter = await limiterOn('*=off,memories.get=3/60', { keyPrefix }, events);
    const local = new TokenBucketRateLimiter(policy('*=off,memories.get=3/60'));
    await spend(limiter, 'p1', 'memories.get', 3);
    for (let i = 0; i < 3; i += 1) local.take('p1', 'memories.get');

    const refused = await attempt(limiter, 'p1', 'memories.get');
    expect(refused?.code).toBe('rate_limited');
    expect(refused?.retryAfterSeconds).toBe((await attempt(local, 'p1', 'memories.get'))?.retryAfterSeconds);
    // 3 per 60 s: one token every 20 s.
    expect(refused?.retryAfterSeconds).toBe(20);
    expect(refused?.message).toBe((await attempt(local, 'p1', 'memories.get'))?.message);

    // Another principal, and another operation of the same principal, have buckets of their own;
    // an operation the policy leaves unlimited never reaches Redis.
    await spend(limiter, 'p2', 'memories.get', 3);
    await spend(limiter, 'p1', 'recall', 10);
    expect((await inspect.keys(`${keyPrefix}*`)).sort()).toEqual(
      [`${keyPrefix}memories.get:p1`, `${keyPrefix}memories.get:p2`].sort(),
    );
    // A bucket is dropped once it would be full again: at most one window after its last use.
    const ttl = await inspect.pttl(`${keyPrefix}memories.get:p1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(limiter.shared).toBe(true);
    expect(events).toEqual({ unreachable: [], recovered: [] });
  });

  it('is one budget for every limiter on the same Redis and prefix, and none for another prefix', async () => {
    const keyPrefix = redisKeyPrefix('shared');
    const a = await limiterOn('*=4/60', { keyPrefix });
    const b = await limiterOn('*=4/60', { keyPrefix });
    const elsewhere = await limiterOn('*=4/60', { keyPrefix: redisKeyPrefix('shared-other') });
    await spend(a, 'alice', 'memories.get', 2);
    await spend(b, 'alice', 'memories.get', 2);
    expect((await attempt(a, 'alice', 'memories.get'))?.code).toBe('rate_limited');
    expect((await attempt(b, 'alice', 'memories.get'))?.code).toBe('rate_limited');
    await spend(elsewhere, 'alice', 'memories.get', 4);
  });

  it('takes exactly count tokens from calls made at once from several limiters', async () => {
    const keyPrefix = redisKeyPrefix('concurrent');
    const limiters = await Promise.all([1, 2, 3].map(() => limiterOn('*=25/60', { keyPrefix })));
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, i) => attempt(limiters[i % 3] as RedisRateLimiter, 'bob', 'recall')),
    );
    expect(outcomes.filter((outcome) => outcome === null)).toHaveLength(25);
    expect(outcomes.filter((outcome) => outcome?.code === 'rate_limited')).toHaveLength(35);
  });

  it('refills continuously: a token is back after count/window seconds, not at the end of the window', async () => {
    const keyPrefix = redisKeyPrefix('refill');
    // 2 per second: one token every 500 ms.
    const limiter = await limiterOn('*=2/1', { keyPrefix });
    await spend(limiter, 'carol', 'recall', 2);
    const refused = await attempt(limiter, 'carol', 'recall');
    expect(refused?.retryAfterSeconds).toBe(1);
    await sleep(650);
    // About 1.3 tokens: one call, then the next is refused again.
    expect(await attempt(limiter, 'carol', 'recall')).toBeNull();
    expect((await attempt(limiter, 'carol', 'recall'))?.code).toBe('rate_limited');
  });
});

describe('when Redis is unreachable', () => {
  it('counts in process, reports it once with the URL without credentials, and never fails otherwise', async () => {
    const port = await freePort();
    const events: Events = { unreachable: [], recovered: [] };
    const limiter = await limiterOn(
      '*=3/60',
      { url: `redis://user:sekrit@127.0.0.1:${port}/2`, keyPrefix: redisKeyPrefix('down') },
      events,
    );
    expect(limiter.shared).toBe(false);
    await spend(limiter, 'dave', 'memories.get', 3);
    expect((await attempt(limiter, 'dave', 'memories.get'))?.code).toBe('rate_limited');
    await sleep(300);
    expect(events.unreachable).toHaveLength(1);
    expect(events.unreachable[0]?.url).toBe(`redis://127.0.0.1:${port}/2`);
    expect(JSON.stringify(events)).not.toContain('sekrit');
    expect(events.recovered).toEqual([]);
  });

  it('names the URL without user or password in logs', () => {
    expect(redisUrlForLogs('rediss://admin:p%40ss@cache.example.com:6380/1')).toBe('rediss://cache.example.com:6380/1');
    expect(redisUrlForLogs('redis://127.0.0.1:6379')).toBe('redis://127.0.0.1:6379');
  });
});

describe('a private Redis that hangs, stops and comes back', () => {
  let server: PrivateRedis;
  beforeAll(async () => {
    server = await PrivateRedis.create({ password: 'pw-of-the-test' });
  });
  afterAll(async () => {
    await server?.destroy();
  });

  it('gives up on a frozen Redis after the command timeout, counts in process, and shares again once it answers', async () => {
    const events: Events = { unreachable: [], recovered: [] };
    const keyPrefix = redisKeyPrefix('hang');
    // A day's window: what refills during the test is far below one token.
    const limiter = await limiterOn(
      '*=1000/86400',
      { url: server.url(), keyPrefix, probeIntervalMs: 100, commandTimeoutMs: 300 },
      events,
    );
    await spend(limiter, 'erin', 'memories.get', 5);
    expect(limiter.shared).toBe(true);

    server.pause();
    try {
      // Every call is answered (by the in-process buckets) while Redis answers nothing.
      await spend(limiter, 'erin', 'memories.get', 20);
      expect(limiter.shared).toBe(false);
      expect(events.unreachable).toHaveLength(1);
      expect(events.unreachable[0]?.reason).toMatch(/timed out/i);
    } finally {
      server.resume();
    }
    while (!limiter.shared) await sleep(50);
    expect(events.recovered).toHaveLength(1);
    await spend(limiter, 'erin', 'memories.get', 1);
    // Back in Redis: 5 before the pause, the one that timed out (sent, then run once Redis woke:
    // it was counted in process too) and this one; the calls made meanwhile were counted in process.
    const remote = new Redis(server.url());
    try {
      const tokens = Number(await remote.hget(`${keyPrefix}memories.get:erin`, 't'));
      expect(Math.round(1000 - tokens)).toBe(7);
    } finally {
      await remote.quit();
    }

    await server.stop();
    await spend(limiter, 'erin', 'memories.get', 5);
    expect(limiter.shared).toBe(false);
    await server.start();
    while (!limiter.shared) await sleep(50);
    await spend(limiter, 'erin', 'memories.get', 1);
    expect(events.unreachable).toHaveLength(2);
    expect(events.recovered).toHaveLength(2);
    expect(JSON.stringify(events)).not.toContain('pw-of-the-test');
  });
});
