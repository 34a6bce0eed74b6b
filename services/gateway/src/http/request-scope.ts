import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ErrorCode, errorObject, idSchema, OPERATION_LIMITS } from '@tms/catalog';
import { Deadline } from '@tms/domain';

const REQUEST_ID_BYTES = 12;
/** Random bytes drawn for many request ids at once: one `randomFillSync` per request cost ~2% of a get's CPU. */
const requestIdPool = Buffer.alloc(REQUEST_ID_BYTES * 256);
let requestIdPoolOffset = requestIdPool.length;

export function freshRequestId(): string {
  if (requestIdPoolOffset + REQUEST_ID_BYTES > requestIdPool.length) {
    crypto.randomFillSync(requestIdPool);
    requestIdPoolOffset = 0;
  }
  const start = requestIdPoolOffset;
  requestIdPoolOffset += REQUEST_ID_BYTES;
  return `req_${requestIdPool.toString('hex', start, start + REQUEST_ID_BYTES)}`;
}

/** The response header naming what was wrong with an `invalid_input` request (decisions §7), or the limit a `budget_exceeded` one passed. */
export const ERROR_DETAIL_HEADER = 'x-error-detail';

/** Per-request bookkeeping shared by every route: id, operation label, error rendering. */
export class RequestScope {
  readonly requestId: string;
  readonly startedAt = performance.now();
  operation = 'none';
  code = 'ok';
  /** Why the request was refused, for its log line: an `unauthenticated` request's reason. */
  reason: string | null = null;
  allow: string[] | null = null;
  /**
   * The operation deadline, counted from the request's arrival (its headers; the header phase
   * has the server's own `headersTimeout`), so reading the body spends it too.
   */
  readonly deadline: Deadline;

  constructor(
    private readonly req: IncomingMessage,
    timeoutMs: number = OPERATION_LIMITS.timeoutMs,
  ) {
    const given = req.headers['x-request-id'];
    const candidate = Array.isArray(given) ? given[0] : given;
    this.requestId = candidate && idSchema.safeParse(candidate).success ? candidate : freshRequestId();
    this.deadline = new Deadline(timeoutMs);
  }

  send(res: ServerResponse, status: number, json: string, extraHeaders: Record<string, string> = {}): void {
    const body = Buffer.from(json, 'utf8');
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': String(body.length),
      'cache-control': 'private, no-store',
      'x-request-id': this.requestId,
      ...extraHeaders,
    });
    res.end(body);
  }

  /**
   * The spec's error body. `detail` (one `publicDetail` gives: an `invalid_input`'s, a
   * `budget_exceeded`'s limit, a held key's holder; or an `unauthenticated` request's reason, see
   * `authFailureReason`) goes in `X-Error-Detail`; the
   * body stays the exact error object. A 401 challenges with `Bearer`, naming `invalid_token` and
   * the reason when a token was given (RFC 6750 §3), nothing more when none was (§3.1).
   */
  sendError(
    res: ServerResponse,
    code: ErrorCode,
    retryAfterSeconds: number | null = null,
    detail: string | null = null,
  ): void {
    this.code = code;
    const error = errorObject(code, this.requestId, retryAfterSeconds);
    const headers: Record<string, string> = {};
    if (detail !== null && code !== 'unauthenticated') headers[ERROR_DETAIL_HEADER] = detail;
    if (code === 'unauthenticated') {
      headers['www-authenticate'] = bearerChallenge(detail);
      if (detail !== null) {
        headers[ERROR_DETAIL_HEADER] = detail;
        this.reason = detail;
      }
    }
    if (code === 'method_not_allowed' && this.allow) headers.allow = this.allow.join(', ');
    if (retryAfterSeconds !== null) headers['retry-after'] = String(Math.ceil(retryAfterSeconds));
    // A body left unread (too large, or the deadline passed while it arrived) ends the connection.
    if (code === 'budget_exceeded' || !this.req.complete) headers.connection = 'close';
    this.send(res, error.status, JSON.stringify({ error }), headers);
  }
}

/**
 * The `WWW-Authenticate` challenge of a 401 (RFC 6750 §3): plain `Bearer` without a token,
 * else `invalid_token` with the reason as `error_description` (a quoted-string: the reasons are
 * fixed ASCII texts; `"` and `\` are dropped should one ever appear).
 */
export function bearerChallenge(reason: string | null): string {
  if (reason === null) return 'Bearer';
  return `Bearer error="invalid_token", error_description="${reason.replace(/["\\]/g, '')}"`;
}
