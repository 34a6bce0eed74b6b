/**
 * Errors as a model sees them. A tool's failure reaches the model as the error's message, so the
 * message carries what the service said (`invalid_input: body.valid_from: must be Unix seconds …`)
 * rather than the service's fixed text alone; the service's own error stays the `cause`.
 */

/** The fields of a `TmsError` the tools read (matched by shape: an ESM and a CommonJS copy of the client are two classes). */
export interface ServiceErrorShape {
  name: string;
  code: string;
  status: number;
  message: string;
  detail: string | null;
  retryable: boolean;
}

export function isServiceError(error: unknown): error is ServiceErrorShape {
  if (typeof error !== 'object' || error === null) return false;
  const fields = error as Partial<ServiceErrorShape>;
  return (
    fields.name === 'TmsError' &&
    typeof fields.code === 'string' &&
    typeof fields.status === 'number' &&
    'detail' in fields
  );
}

/** A memory tool's failure: the service's code and detail, with the service's error as `cause`. */
export class MemoryToolError extends Error {
  readonly code: string;
  readonly detail: string | null;

  constructor(code: string, detail: string | null, options?: { cause?: unknown }) {
    super(detail ? `${code}: ${detail}` : code, options);
    this.name = 'MemoryToolError';
    this.code = code;
    this.detail = detail;
  }
}

/** The error a tool reports: a service error keeps its code and detail; anything else is rethrown as it is. */
export function toToolError(error: unknown): unknown {
  if (!isServiceError(error)) return error;
  return new MemoryToolError(error.code, error.detail ?? error.message, { cause: error });
}
