import { OPERATIONS } from '@tms/catalog';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../src/errors';
import {
  DEFAULT_RATE_LIMITS,
  parseRateLimits,
  type RateLimitPolicy,
  rateLimiterFor,
  TokenBucketRateLimiter,
} from '../src/rate-limiter';

/** A clock the test moves by hand, in milliseconds. */
function manualClock() {
  let ms = 1_000_000;
  return {
    now: () => ms,
    advance(seconds: number) {
      ms += seconds * 1000;
    },
  };
}

function policy(text: string): RateLimitPolicy {
  const parsed = parseRateLimits(text);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  if (!parsed.policy) throw new Error('no policy');
  return parsed.policy;
}

/** The error `take` throws, or null when it lets the call through. */
function attempt(limiter: TokenBucketRateLimiter, principal: string, operation: string): DomainError | null {
  try {
    limiter.take(principal, operation);
    return null;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
}

function spend(limiter: TokenBucketRateLimiter, principal: string, operation: string, times: number): void {
  for (let i = 0; i < times; i += 1) expect(attempt(limiter, principal, operation)).toBeNull();
}

describe('token bucket', () => {
  it('lets count calls through, then refuses with the seconds until one token is back', () => {
    const clock = manualClock();
    const limiter = new TokenBucketRateLimiter(policy('*=off,memories.get=3/60'), { now: clock.now });
    spend(limiter, 'p1', 'memories.get', 3);
    const refused = attempt(limiter, 'p1', 'memories.get');
    expect(refused?.code).toBe('rate_limited');
    // 3 per 60 s: one token every 20 s.
    expect(refused?.retryAfterSeconds).toBe(20);

    clock.advance(5);
    expect(attempt(limiter, 'p1', 'memories.get')?.retryAfterSeconds).toBe(15);
    clock.advance(14.5);
    // 0.5 s left is rounded up to a whole second.
    expect(attempt(limiter, 'p1', 'memories.get')?.retryAfterSeconds).toBe(1);
    clock.advance(0.5);
    spend(limiter, 'p1', 'memories.get', 1);
    expect(attempt(limiter, 'p1', 'memories.get')?.retryAfterSeconds).toBe(20);
  });

  it('refills continuously up to the capacity and no further', () => {
    const clock = manualClock();
    const limiter = new TokenBucketRateLimiter(policy('*=off,recall=4/60'), { now: clock.now });
    spend(limiter, 'p', 'recall', 4);
    expect(attempt(limiter, 'p', 'recall')).not.toBeNull();
    clock.advance(30); // half a window: two tokens
    spend(limiter, 'p', 'recall', 2);
    expect(attempt(limiter, 'p', 'recall')).not.toBeNull();
    clock.advance(3600); // far more than a window: full, not more
    spend(limiter, 'p', 'recall', 4);
    expect(attempt(limiter, 'p', 'recall')).not.toBeNull();
  });

  it('keeps one bucket per principal and per operation', () => {
    const clock = manualClock();
    const limiter = new TokenBucketRateLimiter(policy('*=2/60'), { now: clock.now });
    spend(limiter, 'alice', 'memories.get', 2);
    expect(attempt(limiter, 'alice', 'memories.get')).not.toBeNull();
    // Another operation of the same principal and the same operation of another principal.
    spend(limiter, 'alice', 'memories.create', 2);
    spend(limiter, 'bob', 'memories.get', 2);
    expect(attempt(limiter, 'alice', 'memories.create')).not.toBeNull();
    expect(attempt(limiter, 'bob', 'memories.get')).not.toBeNull();
  });

  it('does not count refused calls against the bucket', () => {
    const clock = manualClock();
    const limiter = new TokenBucketRateLimiter(policy('*=1/10'), { now: clock.now });
    spend(limiter, 'p', 'recall', 1);
    for (let i = 0; i < 5; i += 1) expect(attempt(limiter, 'p', 'recall')?.retryAfterSeconds).toBe(10);
    clock.advance(10);
    spend(limiter, 'p', 'recall', 1);
  });

  it('caps retry-after at 3600 seconds and answers at least 1', () => {
    const clock = manualClock();
    const limiter = new TokenBucketRateLimiter(policy('*=1/86400,recall=1000/1'), { now: clock.now });
    spend(limiter, 'p', 'memories.get', 1);
    expect(attempt(limiter, 'p', 'memories.get')?.retryAfterSeconds).toBe(3600);
    spend(limiter, 'p', 'recall', 1000);
    // One token per millisecond: still a whole second.
    expect(attempt(limiter, 'p', 'recall')?.retryAfterSeconds).toBe(1);
  });

  it('leaves operations with an `off` limit alone', () => {
    const limiter = new TokenBucketRateLimiter(policy('*=1/60,recall=off'), { now: manualClock().now });
    spend(limiter, 'p', 'recall', 5000);
    expect(limiter.size).toBe(0);
  });

  it('drops buckets that have filled up again', () => {
    const clock = manualClock();
    const limiter = new TokenBucketRateLimiter(policy('*=5/60,recall=1/10'), { now: clock.now });
    for (let i = 0; i < 1000; i += 1) limiter.take(`principal-${i}`, 'memories.get');
    expect(limiter.size).toBe(1000);
    clock.advance(59);
    limiter.take('late', 'recall');
    expect(limiter.size).toBe(1001);
    clock.advance(1); // the first 1000 are a full window old: full again
    limiter.take('another', 'memories.get');
    expect(limiter.size).toBe(2);
    // A dropped bucket starts full, as it would have been.
    spend(limiter, 'principal-0', 'memories.get', 5);
  });

  it('never holds more than maxBuckets, dropping the least recently used', () => {
    const clock = manualClock();
    const limiter = new TokenBucketRateLimiter(policy('*=2/60'), { now: clock.now, maxBuckets: 100 });
    spend(limiter, 'kept', 'recall', 2);
    for (let i = 0; i < 10_000; i += 1) {
      limiter.take(`p-${i}`, 'memories.get');
      if (i % 50 === 0) expect(attempt(limiter, 'kept', 'recall')).not.toBeNull(); // recently used
      expect(limiter.size).toBeLessThanOrEqual(100);
    }
    expect(limiter.size).toBe(100);
  });
});

describe('RATE_LIMITS', () => {
  it('defaults to 1200 per minute for every operation', () => {
    const parsed = policy(DEFAULT_RATE_LIMITS);
    expect(parsed.default).toEqual({ count: 1200, windowSeconds: 60 });
    expect(parsed.operations.size).toBe(0);
  });

  it('reads per-operation limits, keeping the default for the others unless * is given', () => {
    const parsed = policy(' recall = 60/60 , memories.create=300/60');
    expect(parsed.default).toEqual({ count: 1200, windowSeconds: 60 });
    expect(parsed.operations.get('recall')).toEqual({ count: 60, windowSeconds: 60 });
    expect(parsed.operations.get('memories.create')).toEqual({ count: 300, windowSeconds: 60 });
    expect(policy('*=off,recall=10/1').default).toBeNull();
    expect(policy('*=10/1,recall=off').operations.get('recall')).toBeNull();
  });

  it('accepts every catalog operation name', () => {
    const text = OPERATIONS.map((op) => `${op.name}=1/1`).join(',');
    expect(policy(text).operations.size).toBe(OPERATIONS.length);
  });

  it('turns limits off', () => {
    expect(parseRateLimits('off')).toEqual({ ok: true, policy: null });
    expect(rateLimiterFor(null)).toBeNull();
    expect(rateLimiterFor(policy('*=off'))).toBeNull();
    expect(rateLimiterFor(policy('*=off,recall=1/1'))).toBeInstanceOf(TokenBucketRateLimiter);
  });

  it('lists every problem of a bad value', () => {
    const cases: [string, RegExp][] = [
      ['foo', /"foo" is not name=count\/seconds/],
      ['', /empty/],
      ['recall=60', /"recall=60" is not name=count\/seconds/],
      ['recall=1.5/60', /is not name=count\/seconds/],
      ['memories.nope=1/60', /"memories.nope" is not an operation name/],
      ['recall=0/60', /count must be between 1 and/],
      ['recall=1/0', /window must be between 1 and/],
      ['recall=1/60,recall=2/60', /"recall" is given more than once/],
      ['*=1/60,*=off', /"\*" is given more than once/],
    ];
    for (const [text, message] of cases) {
      const parsed = parseRateLimits(text);
      expect(parsed.ok, text).toBe(false);
      if (!parsed.ok) expect(parsed.problems.join('\n'), text).toMatch(message);
    }
    const several = parseRateLimits('foo,nope=1/1,recall=1/60');
    expect(several.ok).toBe(false);
    if (!several.ok) expect(several.problems).toHaveLength(2);
  });
});
