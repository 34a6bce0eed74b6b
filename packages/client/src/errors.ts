import { ERROR_TABLE, type ErrorCode } from './generated';

/** The fields of the service's error body (`{error: {...}}`), plus what the response headers add. */
export interface TmsErrorFields<Code extends ErrorCode = ErrorCode> {
  code: Code;
  message: string;
  status: number;
  retryable: boolean;
  /** Null only when the answer did not come from the service (e.g. a proxy's error page). */
  request_id: string | null;
  retry_after_seconds: number | null;
  /** What was wrong, from `X-Error-Detail`: an `invalid_input`'s, or the holder a held memory key's `conflict` names. */
  detail: string | null;
}

/** A failure answered by the service (or, with code `unavailable`, by what stands in front of it). */
export class TmsError<Code extends ErrorCode = ErrorCode> extends Error implements TmsErrorFields<Code> {
  readonly code: Code;
  readonly status: number;
  readonly retryable: boolean;
  readonly request_id: string | null;
  readonly retry_after_seconds: number | null;
  readonly detail: string | null;
  /** The operation that failed, e.g. `memories.create`. */
  readonly operation: string;

  constructor(operation: string, fields: TmsErrorFields<Code>) {
    super(fields.message);
    this.name = 'TmsError';
    this.operation = operation;
    this.code = fields.code;
    this.status = fields.status;
    this.retryable = fields.retryable;
    this.request_id = fields.request_id;
    this.retry_after_seconds = fields.retry_after_seconds;
    this.detail = fields.detail;
  }
}

export function isTmsError(value: unknown): value is TmsError {
  return value instanceof TmsError;
}

function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_TABLE, value);
}

function retryAfterHeader(headers: Headers): number | null {
  const value = headers.get('retry-after');
  if (value === null || !/^\d+$/.test(value.trim())) return null;
  return Number(value.trim());
}

/**
 * The TmsError of a non-2xx answer. A body that is not the service's error object (a proxy or
 * load balancer answered) becomes `unavailable` for 502/503/504, which a retry may cure, and
 * `internal` otherwise.
 */
export function errorFromResponse(operation: string, status: number, headers: Headers, text: string): TmsError {
  const detail = headers.get('x-error-detail');
  const headerRequestId = headers.get('x-request-id');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const error = (body as { error?: Record<string, unknown> } | null)?.error;
  if (error && isErrorCode(error.code)) {
    return new TmsError(operation, {
      code: error.code,
      message: typeof error.message === 'string' ? error.message : ERROR_TABLE[error.code].message,
      status,
      retryable: error.retryable === true,
      request_id: typeof error.request_id === 'string' ? error.request_id : headerRequestId,
      retry_after_seconds:
        typeof error.retry_after_seconds === 'number' ? error.retry_after_seconds : retryAfterHeader(headers),
      detail,
    });
  }
  const code: ErrorCode = status === 502 || status === 503 || status === 504 ? 'unavailable' : 'internal';
  return new TmsError(operation, {
    code,
    message: ERROR_TABLE[code].message,
    status,
    retryable: ERROR_TABLE[code].retryable,
    request_id: headerRequestId,
    retry_after_seconds: retryAfterHeader(headers),
    detail,
  });
}

/** No answer came back (connection refused, reset or cut, or the attempt timed out) on the last attempt. */
export class TmsNetworkError extends Error {
  /** The operation that failed, e.g. `memories.create`. */
  readonly operation: string;
  /** Attempts made, the last one included. */
  readonly attempts: number;

  constructor(operation: string, attempts: number, cause: unknown) {
    super(`${operation}: no answer from the service after ${attempts} attempt(s)`, { cause });
    this.name = 'TmsNetworkError';
    this.operation = operation;
    this.attempts = attempts;
  }
}
