import { errorFromResponse, type TmsError, TmsNetworkError } from './errors';
import {
  type ClientMethods,
  OPERATION_TABLE,
  type OperationName,
  type Operations,
  type RecallInput,
  type RecallOutput,
} from './generated';
import type { CallOptions } from './options';
import { type AttemptFailure, backoffMs, mayRetry, type RetryOptions, retryPolicy, sleep } from './retry';

export interface ClientOptions {
  /** Where the service listens, e.g. `https://tms.example.com` (the `/v1` paths are appended). */
  baseUrl: string;
  /** A bearer token: session, OAuth access token, installation credential or service key. */
  token?: string;
  /** Called before every attempt instead of `token`, so a refreshed token is picked up on retries. */
  getToken?: () => string | Promise<string>;
  /** The workspace (`ws_...`) sent as `X-Service-Workspace` to every operation that takes one. */
  workspace?: string | null;
  /** The fetch to use; the global one by default. */
  fetch?: typeof fetch;
  /** Retry bounds, or `false` for a single attempt. */
  retry?: RetryOptions | false;
  /** Told before each retry waits (for logs and metrics). */
  onRetry?: (event: RetryEvent) => void;
}

export interface RetryEvent {
  operation: OperationName;
  /** The attempt that failed (1 for the first). */
  attempt: number;
  delayMs: number;
  failure: AttemptFailure;
}

type OperationEntry = (typeof OPERATION_TABLE)[OperationName];

/** Operations whose answers page, by the table's pager. */
export type PagedOperationName = {
  [N in OperationName]: (typeof OPERATION_TABLE)[N]['pager'] extends null ? never : N;
}[OperationName];

type PagerOf<N extends PagedOperationName> = Exclude<(typeof OPERATION_TABLE)[N]['pager'], null>;

/** One item of a paged operation's answer. */
export type PageItem<N extends PagedOperationName> = Operations[N]['output'] extends infer Output
  ? PagerOf<N>['items'] extends keyof Output
    ? Output[PagerOf<N>['items']] extends ReadonlyArray<infer Item>
      ? Item
      : never
    : never
  : never;

/** The TmsError an operation can throw: its codes are those of the statuses its OpenAPI entry lists. */
export type OperationError<N extends OperationName> = TmsError<Operations[N]['errors']>;

/** A commit (anything with a `sequence`) or a bare sequence number. */
export type SequenceRef = number | { sequence: number };

export interface RecallWhenIndexedOptions extends CallOptions {
  /** Give up waiting for the indexer after this long and return the `pending` answer. Default 30000. */
  timeoutMs?: number;
}

export interface TmsClient extends ClientMethods {
  /** The bound workspace, or null. */
  readonly workspace: string | null;
  /** The same client bound to another workspace (or to none). */
  withWorkspace(workspace: string | null): TmsClient;
  /** Call an operation by its catalog name. */
  call<N extends OperationName>(
    name: N,
    input?: Operations[N]['input'],
    options?: CallOptions,
  ): Promise<Operations[N]['output']>;
  /** Every item of a paged listing, following the cursor page after page. */
  paginate<N extends PagedOperationName>(
    name: N,
    input?: Operations[N]['input'],
    options?: CallOptions,
  ): AsyncIterableIterator<PageItem<N>>;
  /**
   * Recall once the index has caught up with `after` (a write's commit or its sequence): asks with
   * `min_sequence` and `wait_ms`, again while the answer is `pending`, until `timeoutMs` has passed.
   */
  recallWhenIndexed(
    input: Omit<RecallInput, 'min_sequence' | 'wait_ms'>,
    after: SequenceRef,
    options?: RecallWhenIndexedOptions,
  ): Promise<RecallOutput>;
}

/** The longest `wait_ms` recall accepts (decisions.md §5). */
const RECALL_MAX_WAIT_MS = 10_000;

type Fields = Record<string, unknown>;

function newIdempotencyKey(): string {
  // 128 random bits as hex: within the key format `[A-Za-z0-9][A-Za-z0-9._:-]*`, and getRandomValues
  // works in browsers outside secure contexts, where randomUUID does not.
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return `tms-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}

function queryValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Split a flat input into the URL and the body: path parameters fill the path, declared query
 * parameters the query string, and every other field goes to the body (or, without one, to the
 * query string, where the service rejects an unknown name as `invalid_input`).
 */
function requestParts(name: string, entry: OperationEntry, baseUrl: string, input: Fields) {
  const pathParams: readonly string[] = entry.pathParams;
  const queryNames: readonly string[] = entry.query;
  let path: string = entry.path;
  for (const param of pathParams) {
    const value = input[param];
    if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${name}: input.${param} is required`);
    path = path.replace(`{${param}}`, encodeURIComponent(value));
  }
  const query = new URLSearchParams();
  const body: Fields = {};
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined || pathParams.includes(key)) continue;
    if (entry.body && !queryNames.includes(key)) {
      body[key] = value;
    } else if (Array.isArray(value)) {
      for (const item of value) query.append(key, queryValue(item));
    } else {
      query.append(key, queryValue(value));
    }
  }
  const search = query.toString();
  return { url: `${baseUrl}${path}${search ? `?${search}` : ''}`, body: entry.body ? JSON.stringify(body) : undefined };
}

export function createClient(options: ClientOptions): TmsClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const policy = retryPolicy(options.retry);
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const workspace = options.workspace ?? null;

  async function headersFor(entry: OperationEntry, hasBody: boolean, callOptions: CallOptions, key: string | null) {
    const headers: Record<string, string> = { Accept: 'application/json' };
    const token = options.getToken ? await options.getToken() : options.token;
    if (token) headers.Authorization = `Bearer ${token}`;
    if (hasBody) headers['Content-Type'] = 'application/json';
    if (entry.workspace && workspace) headers['X-Service-Workspace'] = workspace;
    if (key) headers['Idempotency-Key'] = key;
    if (callOptions.requestId) headers['X-Request-Id'] = callOptions.requestId;
    return headers;
  }

  async function call<N extends OperationName>(
    name: N,
    input: Operations[N]['input'] | undefined,
    callOptions: CallOptions = {},
  ): Promise<Operations[N]['output']> {
    const entry: OperationEntry = OPERATION_TABLE[name];
    if (!entry) throw new TypeError(`unknown operation ${name}`);
    const { url, body } = requestParts(name, entry, baseUrl, (input ?? {}) as Fields);
    // One key for the whole call: every retry presents it, so the service executes the write once.
    const key = entry.idempotent ? (callOptions.idempotencyKey ?? newIdempotencyKey()) : null;
    const started = Date.now();
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await attemptOnce(name, entry, url, body, callOptions, key);
      if (outcome.ok) return outcome.value as Operations[N]['output'];
      const failure = outcome.failure;
      const last = () =>
        failure.kind === 'answer' ? failure.error : new TmsNetworkError(name, attempt, failure.cause);
      if (attempt >= policy.maxAttempts || !mayRetry(entry, failure)) throw last();
      const delayMs = backoffMs(policy, attempt, failure, Math.random);
      if (Date.now() - started + delayMs > policy.maxElapsedMs) throw last();
      options.onRetry?.({ operation: name, attempt, delayMs, failure });
      await sleep(delayMs, callOptions.signal);
    }
  }

  async function attemptOnce(
    name: OperationName,
    entry: OperationEntry,
    url: string,
    body: string | undefined,
    callOptions: CallOptions,
    key: string | null,
  ): Promise<{ ok: true; value: unknown } | { ok: false; failure: AttemptFailure }> {
    let answer: { status: number; headers: Headers; text: string };
    try {
      const signals = [AbortSignal.timeout(policy.attemptTimeoutMs)];
      if (callOptions.signal) signals.push(callOptions.signal);
      const response = await fetchImpl(url, {
        method: entry.method,
        headers: await headersFor(entry, body !== undefined, callOptions, key),
        body,
        signal: AbortSignal.any(signals),
      });
      // Reading the body is part of the attempt: a connection cut mid-answer is a network failure.
      answer = { status: response.status, headers: response.headers, text: await response.text() };
    } catch (cause) {
      if (callOptions.signal?.aborted) throw callOptions.signal.reason;
      return { ok: false, failure: { kind: 'network', cause } };
    }
    if (answer.status >= 200 && answer.status < 300) return { ok: true, value: JSON.parse(answer.text) };
    return {
      ok: false,
      failure: { kind: 'answer', error: errorFromResponse(name, answer.status, answer.headers, answer.text) },
    };
  }

  async function* paginate<N extends PagedOperationName>(
    name: N,
    input?: Operations[N]['input'],
    callOptions?: CallOptions,
  ): AsyncIterableIterator<PageItem<N>> {
    const pager = OPERATION_TABLE[name].pager as { param: string; next: string; items: string } | null;
    if (!pager) throw new TypeError(`${name} does not page`);
    let position = (input as Fields | undefined)?.[pager.param];
    for (;;) {
      const page = (await call(
        name,
        { ...input, [pager.param]: position } as Operations[N]['input'],
        callOptions,
      )) as Fields;
      yield* page[pager.items] as PageItem<N>[];
      const next = page[pager.next];
      // Lists end on a null cursor; a feed that has caught up answers the position it was given.
      if (next === null || next === undefined || next === position) return;
      position = next;
    }
  }

  async function recallWhenIndexed(
    input: Omit<RecallInput, 'min_sequence' | 'wait_ms'>,
    after: SequenceRef,
    { timeoutMs = 30_000, ...callOptions }: RecallWhenIndexedOptions = {},
  ): Promise<RecallOutput> {
    const sequence = typeof after === 'number' ? after : after.sequence;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const remaining = Math.max(0, deadline - Date.now());
      const answer = await call(
        'recall',
        { ...input, min_sequence: sequence, wait_ms: Math.min(RECALL_MAX_WAIT_MS, remaining) },
        callOptions,
      );
      if (answer.status !== 'pending' || remaining === 0) return answer;
    }
  }

  const methods: Record<string, unknown> = {};
  for (const name of Object.keys(OPERATION_TABLE) as OperationName[]) {
    const segments = name.split('.');
    let at = methods;
    for (const segment of segments.slice(0, -1)) {
      at[segment] ??= {};
      at = at[segment] as Record<string, unknown>;
    }
    at[segments[segments.length - 1] as string] = (input?: Fields, callOptions?: CallOptions) =>
      call(name, input as Operations[typeof name]['input'], callOptions);
  }

  return Object.assign(methods as unknown as ClientMethods, {
    workspace,
    withWorkspace: (next: string | null) => createClient({ ...options, workspace: next }),
    call,
    paginate,
    recallWhenIndexed,
  });
}
