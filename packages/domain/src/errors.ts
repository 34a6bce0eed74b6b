import type { ErrorCode } from '@tms/catalog';

/** An expected failure with one of the spec's error codes; transports render it. */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    readonly retryAfterSeconds: number | null = null,
    /**
     * The caller is told `detail` although the code is not `invalid_input` (a held key names its
     * holder, decisions §12); every other detail stays in the logs (decisions §7).
     */
    readonly detailShown = false,
  ) {
    super(detail ? `${code}: ${detail}` : code);
    this.name = 'DomainError';
  }
}

export const fail = (code: ErrorCode, detail?: string): never => {
  throw new DomainError(code, detail);
};

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '57014', // query_canceled (statement_timeout)
  '53300', // too_many_connections
  '3D000', // invalid_catalog_name: the database was dropped or renamed under a running service
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
]);

/** Whether an error means the database is unreachable or timed out (answered `unavailable`). */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CONNECTION_ERRORS.has(code)) return true;
    const message = (current as { message?: unknown }).message;
    if (
      typeof message === 'string' &&
      /PGlite is closed|connection terminated|write CONNECTION_CLOSED/i.test(message)
    ) {
      return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
