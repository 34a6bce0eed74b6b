import { describe, expect, it } from 'vitest';
import { errorFromResponse, TmsError } from '../src/errors';
import { type AttemptFailure, backoffMs, DEFAULT_RETRY, mayRetry, retryPolicy } from '../src/retry';

/*
 * The retry decision and the parsing of error answers as pure functions. The gateway tests cover
 * them end to end; these cover the cases a real gateway cannot be made to produce: a write without
 * an idempotency key (the catalog has none today), and answers from something in front of the service.
 */

function answer(code: TmsError['code'], status: number, retryable: boolean, retryAfter: number | null = null) {
  const error = new TmsError('test.op', {
    code,
    message: 'm',
    status,
    retryable,
    request_id: 'req-1',
    retry_after_seconds: retryAfter,
    detail: null,
  });
  return { kind: 'answer', error } as const satisfies AttemptFailure;
}

const network: AttemptFailure = { kind: 'network', cause: new TypeError('fetch failed') };
const read = { idempotent: false, mutates: false };
const idempotentWrite = { idempotent: true, mutates: true };
const plainWrite = { idempotent: false, mutates: true };

describe('mayRetry', () => {
  it('retries reads and idempotent writes after a network failure or a retryable error', () => {
    for (const op of [read, idempotentWrite]) {
      expect(mayRetry(op, network)).toBe(true);
      expect(mayRetry(op, answer('unavailable', 503, true))).toBe(true);
      expect(mayRetry(op, answer('projection_pending', 409, true))).toBe(true);
      expect(mayRetry(op, answer('rate_limited', 429, true, 3))).toBe(true);
    }
  });

  it('never retries an error the service marks not retryable', () => {
    for (const op of [read, idempotentWrite, plainWrite]) {
      expect(mayRetry(op, answer('conflict', 409, false))).toBe(false);
      expect(mayRetry(op, answer('internal', 500, false))).toBe(false);
      expect(mayRetry(op, answer('invalid_input', 400, false))).toBe(false);
    }
  });

  it('retries a write without a key only when the service refused it before executing (rate_limited)', () => {
    expect(mayRetry(plainWrite, network)).toBe(false);
    expect(mayRetry(plainWrite, answer('unavailable', 503, true))).toBe(false);
    expect(mayRetry(plainWrite, answer('rate_limited', 429, true, 1))).toBe(true);
  });
});

describe('backoffMs', () => {
  const policy = retryPolicy({ baseDelayMs: 100, maxDelayMs: 1000 });

  it('draws below a ceiling that doubles per retry and stops at maxDelayMs', () => {
    const top = () => 0.999999;
    expect([1, 2, 3, 4, 5, 6].map((retry) => backoffMs(policy, retry, network, top))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(backoffMs(policy, 3, network, () => 0)).toBe(0);
  });

  it('waits at least retry_after_seconds, even beyond maxDelayMs', () => {
    expect(backoffMs(policy, 1, answer('rate_limited', 429, true, 2), () => 0)).toBe(2000);
    expect(backoffMs(policy, 1, answer('rate_limited', 429, true, 5), () => 0.5)).toBe(5000);
  });
});

describe('retryPolicy', () => {
  it('fills defaults, turns retries off with false, and refuses nonsense', () => {
    expect(retryPolicy(undefined)).toEqual(DEFAULT_RETRY);
    expect(retryPolicy(false).maxAttempts).toBe(1);
    expect(retryPolicy({ maxAttempts: 2 })).toEqual({ ...DEFAULT_RETRY, maxAttempts: 2 });
    expect(() => retryPolicy({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => retryPolicy({ maxElapsedMs: -1 })).toThrow(RangeError);
    expect(() => retryPolicy({ baseDelayMs: Number.NaN })).toThrow(RangeError);
  });
});

/** The service's error body, as the gateway writes it. */
function errorBody(code: string, status: number, retryable: boolean, requestId: string): string {
  const message = code === 'invalid_input' ? 'The request is invalid.' : 'The service is temporarily unavailable.';
  return JSON.stringify({
    error: { code, message, status, retryable, request_id: requestId, retry_after_seconds: null },
  });
}

describe('errorFromResponse', () => {
  it('reads the error body and takes detail from X-Error-Detail', () => {
    const body = errorBody('invalid_input', 400, false, 'req-9');
    const error = errorFromResponse(
      'namespaces.create',
      400,
      new Headers({ 'x-error-detail': 'body.name: too long', 'x-request-id': 'req-9' }),
      body,
    );
    expect(error).toBeInstanceOf(TmsError);
    expect({ ...error, message: error.message }).toMatchObject({
      code: 'invalid_input',
      status: 400,
      retryable: false,
      request_id: 'req-9',
      retry_after_seconds: null,
      detail: 'body.name: too long',
      operation: 'namespaces.create',
      message: 'The request is invalid.',
    });
  });

  it('takes Retry-After when the body gives no retry_after_seconds', () => {
    const body = errorBody('unavailable', 503, true, 'r');
    expect(errorFromResponse('me.get', 503, new Headers({ 'retry-after': '7' }), body).retry_after_seconds).toBe(7);
  });

  it("maps an answer that is not the service's (a proxy's error page) to unavailable or internal", () => {
    const gateway = errorFromResponse('me.get', 502, new Headers(), '<html>Bad Gateway</html>');
    expect(gateway).toMatchObject({ code: 'unavailable', status: 502, retryable: true, request_id: null });
    const teapot = errorFromResponse('me.get', 418, new Headers({ 'x-request-id': 'r-2' }), 'no');
    expect(teapot).toMatchObject({ code: 'internal', status: 418, retryable: false, request_id: 'r-2' });
  });
});
