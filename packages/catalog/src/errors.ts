/** The closed error table of interface.md (codes and messages) and decisions.md §7 (status, retryable). */
export const ERROR_TABLE = {
  invalid_input: { message: 'The request is invalid.', status: 400, retryable: false },
  unauthenticated: { message: 'Authentication is required.', status: 401, retryable: false },
  forbidden: { message: 'This operation is not permitted.', status: 403, retryable: false },
  enrollment_required: { message: 'Workspace creation requires pilot enrollment.', status: 403, retryable: false },
  not_found: { message: 'The resource was not found.', status: 404, retryable: false },
  method_not_allowed: { message: 'This method is not supported.', status: 405, retryable: false },
  conflict: { message: 'The resource changed. Reload before retrying.', status: 409, retryable: false },
  idempotency_conflict: {
    message: 'The idempotency key was used for a different request.',
    status: 409,
    retryable: false,
  },
  idempotency_required: { message: 'An idempotency key is required.', status: 400, retryable: false },
  budget_exceeded: { message: 'The request exceeds an operation limit.', status: 413, retryable: false },
  rate_limited: { message: 'Too many requests. Retry later.', status: 429, retryable: true },
  projection_pending: { message: 'The search projection is catching up.', status: 409, retryable: true },
  unavailable: { message: 'The service is temporarily unavailable.', status: 503, retryable: true },
  internal: { message: 'The request could not be completed.', status: 500, retryable: false },
} as const;

export type ErrorCode = keyof typeof ERROR_TABLE;

export const ERROR_CODES = Object.keys(ERROR_TABLE) as ErrorCode[];

export interface ErrorObject {
  code: ErrorCode;
  message: string;
  status: number;
  retryable: boolean;
  request_id: string;
  retry_after_seconds: number | null;
}

export function errorObject(code: ErrorCode, requestId: string, retryAfterSeconds: number | null = null): ErrorObject {
  const row = ERROR_TABLE[code];
  return {
    code,
    message: row.message,
    status: row.status,
    retryable: row.retryable,
    request_id: requestId,
    retry_after_seconds: retryAfterSeconds,
  };
}
