import type { Operation } from '@tms/catalog';
import type { Caller } from './caller';
import type { Deadline } from './deadline';
import { describeIssues, invalidInput } from './error-detail';

/** What a transport hands over: the raw parts of the request, still unvalidated. */
export interface RawInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
}

export interface RequestMeta {
  caller: Caller;
  requestId: string;
  /** `X-Service-Workspace` as sent, or null. */
  selectedWorkspaceId: string | null;
  /** `Idempotency-Key` as sent, or null. */
  idempotencyKey: string | null;
  /**
   * The operation's deadline (the transport's, counted from the request's arrival). Reads
   * answer `unavailable` when it passes; a write checks it right before its commit and rolls
   * back instead, so callers must await the write rather than race it. None: no limit.
   */
  deadline?: Deadline | null;
}

/** A successful answer as exact JSON text (replays are byte for byte). */
export interface OperationResult {
  json: string;
  replayed: boolean;
  /**
   * A read's answer as its handler returned it, the value `json` was serialized from, so that
   * an in-process caller (GraphQL) need not parse `json` again. Shared: never modify it.
   */
  value?: unknown;
}

/** Validate each part against the catalog and merge them into the handler's flat input. */
export function validate(operation: Operation, raw: RawInput): Record<string, unknown> {
  const params = operation.input.params.safeParse(raw.params);
  if (!params.success) throw invalidInput(describeIssues('params', params.error.issues, raw.params));
  const query = operation.input.query.safeParse(raw.query);
  if (!query.success) throw invalidInput(describeIssues('query', query.error.issues, raw.query));
  if (!operation.input.body) {
    if (raw.body !== undefined) throw invalidInput('body: this operation takes no body');
    return { ...query.data, ...params.data };
  }
  const body = operation.input.body.safeParse(raw.body);
  if (!body.success) throw invalidInput(describeIssues('body', body.error.issues, raw.body));
  return { ...(body.data as object), ...query.data, ...params.data };
}
