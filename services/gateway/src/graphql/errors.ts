import { ERROR_TABLE, type ErrorCode, errorObject } from '@tms/catalog';
import { boundDetail, DomainError, isDatabaseUnavailable, publicDetail } from '@tms/domain';
import type { Logger } from 'pino';
import { GraphQLError } from './graphql-js';

/**
 * Errors in GraphQL answers carry the spec's error object as `extensions` (decisions §7): the
 * same codes, fixed messages, `retryable` and `request_id` as `/v1`. Field errors from the
 * domain keep their code; request errors (syntax, validation, variables) are `invalid_input`;
 * queries over a limit are `budget_exceeded`; anything unexpected is masked as `internal`
 * (a lost database or a timeout as `unavailable`) and logged.
 */

/** Errors raised before execution by this gateway's own checks, with the code they stand for. */
const refusals = new WeakMap<GraphQLError, ErrorCode>();

/**
 * A request-level refusal (no data). `status` is the GraphQL-over-HTTP status for
 * `application/graphql-response+json` (400 like any request error unless given);
 * `application/json` clients get 200, as that spec asks.
 */
export function refusal(code: ErrorCode, message: string, status = 400): GraphQLError {
  const error = new GraphQLError(message, { extensions: { http: { status, spec: true } } });
  refusals.set(error, code);
  return error;
}

/** Mark an error raised by a limit plugin (graphql-armor) as `budget_exceeded`. */
export function markOverLimit(error: GraphQLError): void {
  refusals.set(error, 'budget_exceeded');
}

/**
 * What the error was caused by outside GraphQL: the first cause down the `originalError` chain
 * that is no GraphQLError (a domain error, a database error, a defect), or undefined when every
 * link is a GraphQL error (a variable of the wrong type, a bad enum, a scalar's own refusal).
 */
function rootCause(error: GraphQLError): unknown {
  let cause: unknown = error.originalError;
  while (cause instanceof GraphQLError) cause = cause.originalError;
  return cause ?? undefined;
}

/** A gateway refusal anywhere down the chain (GraphQL wraps errors it rethrows). */
function refusalOf(error: GraphQLError): ErrorCode | undefined {
  let current: unknown = error;
  while (current instanceof GraphQLError) {
    const refused = refusals.get(current);
    if (refused) return refused;
    current = current.originalError;
  }
  return undefined;
}

function classify(error: GraphQLError): { code: ErrorCode; retryAfter: number | null; unexpected: unknown } {
  const cause = rootCause(error);
  if (cause instanceof DomainError) return { code: cause.code, retryAfter: cause.retryAfterSeconds, unexpected: null };
  if (cause !== undefined && isDatabaseUnavailable(cause))
    return { code: 'unavailable', retryAfter: 1, unexpected: cause };
  const refused = refusalOf(error);
  if (refused) return { code: refused, retryAfter: null, unexpected: null };
  // Past validation (a field's path) only the domain fails expectedly; before it, only GraphQL's
  // own checks of the request do, and those carry no cause but GraphQL errors.
  if (cause !== undefined || error.path !== undefined)
    return { code: 'internal', retryAfter: null, unexpected: cause ?? error };
  const status = (error.extensions.http as { status?: number } | undefined)?.status;
  if (status === 403) return { code: 'forbidden', retryAfter: null, unexpected: null };
  if (status === 405) return { code: 'method_not_allowed', retryAfter: null, unexpected: null };
  if (status === 413) return { code: 'budget_exceeded', retryAfter: null, unexpected: null };
  return { code: 'invalid_input', retryAfter: null, unexpected: null };
}

/**
 * The error as answered: an `invalid_input` names what was wrong in its message (decisions §7:
 * the domain's detail, or GraphQL's own description of the request, bounded), a
 * `budget_exceeded` the limit it passed, and a `conflict` over a held key its holder (§12);
 * other request errors keep GraphQL's message; other field errors get the spec's fixed message,
 * so no other detail of the domain leaks.
 */
export function shapeError(error: GraphQLError, requestId: string, logger: Logger): GraphQLError {
  const { code, retryAfter, unexpected } = classify(error);
  if (unexpected !== null) {
    const level = code === 'unavailable' ? 'warn' : 'error';
    logger[level]({ request_id: requestId, err: unexpected, path: error.path }, `graphql ${code}`);
  }
  const isFieldError = error.path !== undefined;
  let message = isFieldError || unexpected !== null ? ERROR_TABLE[code].message : error.message;
  const shown = publicDetail(rootCause(error));
  if (code === 'invalid_input') {
    message = shown ?? boundDetail(error.message);
    logger.debug({ request_id: requestId, operation: 'graphql', detail: message }, 'invalid_input');
  } else if (shown !== null) {
    message = shown;
    logger.debug({ request_id: requestId, operation: 'graphql', detail: message }, code);
  } else if (code === 'budget_exceeded' && !isFieldError) {
    // A limit's own refusal (complexity, depth) states the limit already.
    message = boundDetail(error.message);
  }
  // A request error without a status of its own (a limit's) is a 400, like a validation error.
  const http = error.extensions.http ?? (isFieldError ? undefined : { status: 400, spec: true });
  return new GraphQLError(message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...errorObject(code, requestId, retryAfter), ...(http ? { http } : {}) },
  });
}

/**
 * A thrown error as a result's error, as Yoga's handler turns what its pipeline throws into one
 * (errors unmasked here: `shapeError` masks them): a GraphQL error as it is, anything else
 * wrapped with its message and kept as the cause (so it is logged and masked as `internal`).
 */
export function asGraphQLError(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : 'Unexpected error.';
  return new GraphQLError(message, { originalError: error instanceof Error ? error : undefined });
}
