import http from 'node:http';
import { ERROR_TABLE, type ErrorCode, idSchema, OPERATIONS_BY_NAME } from '@tms/catalog';
import type { CallResult } from '@tms/testkit';
import { expect } from 'vitest';

/** The exact field set of an error object (interface.md, Errors). */
export const ERROR_FIELDS = ['code', 'message', 'retry_after_seconds', 'retryable', 'request_id', 'status'];

/** Every /v1 answer is private JSON carrying its request id (interface.md, Authentication 11; decisions §7). */
export function expectPrivateJson(res: Pick<CallResult, 'headers' | 'text'>): void {
  expect(res.headers.get('content-type'), res.text.slice(0, 300)).toMatch(/^application\/json\b/);
  const cacheControl = (res.headers.get('cache-control') ?? '').toLowerCase();
  expect(cacheControl).toContain('private');
  expect(cacheControl).toContain('no-store');
  expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/);
}

/**
 * A 200 answer of `operation`: private JSON whose body passes the catalog's strict output
 * schema (exact field sets, bounds) and is returned unchanged by it (no default filled in).
 */
// biome-ignore lint/suspicious/noExplicitAny: the body is checked against the catalog schema at run time.
export function expectShape<T = any>(res: CallResult<T>, operation: string): T {
  const spec = OPERATIONS_BY_NAME.get(operation);
  if (!spec) throw new Error(`no operation ${operation} in the catalog`);
  expect(res.status, `${operation}: ${res.text.slice(0, 500)}`).toBe(200);
  expectPrivateJson(res);
  const parsed = spec.output.safeParse(res.body);
  if (!parsed.success) {
    throw new Error(
      `${operation} answer does not match its catalog output schema:\n${parsed.error.message}\n${res.text.slice(0, 1000)}`,
    );
  }
  expect(parsed.data).toEqual(res.body);
  return res.body;
}

export interface ErrorExpectation {
  /** `retry_after_seconds` (null unless stated). */
  retryAfterSeconds?: number | null;
  /** The request id the answer must carry (header and body). */
  requestId?: string;
  /** For 405: the exact methods of the `Allow` header. */
  allow?: string[];
  /**
   * For 400 `invalid_input`, 413 `budget_exceeded` and a `conflict` over a held memory key
   * (decisions §12): the exact `X-Error-Detail`, or a pattern it must match.
   */
  detail?: string | RegExp;
}

/** A header-safe `X-Error-Detail`: printable ASCII, at most 300 characters. */
export const HEADER_SAFE_DETAIL = /^[\x20-\x7e]{1,300}$/;

/**
 * A structured error: exactly `{error: {code, message, status, retryable, request_id,
 * retry_after_seconds}}` with message, status and retryable from the error table, private
 * JSON headers, `X-Request-Id` equal to `error.request_id`, `WWW-Authenticate: Bearer` on
 * 401 (only), `Allow` on 405, `Retry-After` when `retry_after_seconds` is set, and
 * `X-Error-Detail` (header-safe) on `invalid_input`, on `budget_exceeded` (stating the limit), and
 * on a `conflict` whose detail the expectation names (a held key's holder) only.
 */
export function expectError(res: CallResult, code: ErrorCode, expected: ErrorExpectation = {}): void {
  const row = ERROR_TABLE[code];
  const context = `${code} expected, got ${res.status}: ${res.text.slice(0, 500)}`;
  expect(res.status, context).toBe(row.status);
  expectPrivateJson(res);
  expect(res.body, context).toBeTypeOf('object');
  expect(Object.keys(res.body), context).toEqual(['error']);
  const error = res.body.error;
  expect(Object.keys(error).sort(), context).toEqual([...ERROR_FIELDS].sort());
  expect(error, context).toEqual({
    code,
    message: row.message,
    status: row.status,
    retryable: row.retryable,
    request_id: expected.requestId ?? error.request_id,
    retry_after_seconds: expected.retryAfterSeconds === undefined ? null : expected.retryAfterSeconds,
  });
  expect(idSchema.safeParse(error.request_id).success, context).toBe(true);
  expect(res.headers.get('x-request-id')).toBe(error.request_id);

  if (code === 'unauthenticated') expectBearerChallenge(res, context);
  else expect(res.headers.get('www-authenticate')).toBeNull();

  if (code === 'method_not_allowed') {
    if (!expected.allow) throw new Error('a 405 expectation names its Allow methods');
    const allow = (res.headers.get('allow') ?? '').split(',').map((m) => m.trim());
    expect(allow.sort()).toEqual([...expected.allow].sort());
  } else {
    expect(res.headers.get('allow')).toBeNull();
  }
  if (error.retry_after_seconds !== null) {
    expect(res.headers.get('retry-after')).toBe(String(Math.ceil(error.retry_after_seconds)));
  }
  const detail = res.headers.get('x-error-detail');
  if (code === 'unauthenticated') {
    // Checked against the challenge by expectBearerChallenge.
  } else if (
    code === 'invalid_input' ||
    code === 'budget_exceeded' ||
    (code === 'conflict' && expected.detail !== undefined)
  ) {
    expect(detail, context).toMatch(HEADER_SAFE_DETAIL);
    if (code === 'budget_exceeded') expect(detail, context).toMatch(/\blimit\b.*\d/);
    if (typeof expected.detail === 'string') expect(detail, context).toBe(expected.detail);
    else if (expected.detail) expect(detail, context).toMatch(expected.detail);
  } else {
    expect(detail, context).toBeNull();
  }
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
  /** Send the body with `Transfer-Encoding: chunked` (no `Content-Length`), in chunks of this size. */
  chunkSize?: number;
}

/**
 * One request over node:http, for what fetch does not do: a chunked body without
 * Content-Length. An answer that arrives before the upload ends still counts.
 */
export function sendRaw(baseUrl: string, request: RawRequest): Promise<CallResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(request.headers ?? {}) };
    const body = request.body;
    if (body && request.chunkSize === undefined) headers['content-length'] = String(body.length);
    let answered = false;
    const req = http.request(new URL(request.path, baseUrl), { method: request.method, headers }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const responseHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: parsed, text });
      });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    if (body && request.chunkSize !== undefined) {
      for (let at = 0; at < body.length; at += request.chunkSize) req.write(body.subarray(at, at + request.chunkSize));
    } else if (body) {
      req.write(body);
    }
    req.end();
  });
}

const UNAUTHENTICATED = {
  code: 'unauthenticated',
  message: 'Authentication is required.',
  status: 401,
  retryable: false,
  retry_after_seconds: null,
};

const INVALID_TOKEN_CHALLENGE = /^Bearer error="invalid_token", error_description="([\x20\x21\x23-\x5b\x5d-\x7e]+)"$/;

/**
 * A 401's challenge (RFC 6750 §3): plain `Bearer` and no `X-Error-Detail` when no token was
 * given, else `invalid_token` with a description that `X-Error-Detail` repeats. Returns the
 * reason, or null for a plain challenge.
 */
export function expectBearerChallenge(res: CallResult, why: string): string | null {
  const challenge = res.headers.get('www-authenticate');
  const detail = res.headers.get('x-error-detail');
  if (challenge === 'Bearer') {
    expect(detail, why).toBeNull();
    return null;
  }
  const description = INVALID_TOKEN_CHALLENGE.exec(challenge ?? '')?.[1];
  expect(description, `${why}: WWW-Authenticate ${challenge}`).toBeTypeOf('string');
  expect(detail, why).toBe(description);
  return description ?? null;
}

/**
 * The one answer to any token or secret that is not provably valid (decisions §7): the exact
 * body, and a challenge naming `reason` (null: no token, a plain `Bearer`) when one is given.
 */
export function expectUnauthenticated(res: CallResult, why: string, reason?: string | null): void {
  expect(res.status, `${why}: ${res.text}`).toBe(401);
  expect(res.body, why).toEqual({ error: { ...UNAUTHENTICATED, request_id: expect.any(String) } });
  const given = expectBearerChallenge(res, why);
  if (reason !== undefined) expect(given, why).toBe(reason);
  expect(res.headers.get('cache-control'), why).toBe('private, no-store');
}
