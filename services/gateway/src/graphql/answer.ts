import type { ServerResponse } from 'node:http';
import { ERROR_TABLE, type ErrorCode, OPERATION_LIMITS } from '@tms/catalog';
import { boundDetail, overLimit } from '@tms/domain';
import type { ExecutionResult } from 'graphql';
import { type FetchAPI, getSSEProcessor, isAsyncIterable, mapAsyncIterator, processRegularResult } from 'graphql-yoga';
import { ERROR_DETAIL_HEADER, type RequestScope } from '../http/request-scope';
import type { GraphQLContext } from './context';
import { shapeError } from './errors';
import type { GraphQLError } from './graphql-js';

/** What Yoga's pipeline hands back: one result, or a subscription's stream of them. */
export type GraphQLResult = ExecutionResult | AsyncIterable<ExecutionResult>;

/**
 * The answer as one of Yoga's result processors built it (`processRegularResult`,
 * `getSSEProcessor`, both public): they call `new fetchAPI.Response(body, init)`, and this
 * stands in for that Response, keeping the body and the status and headers as given, so the
 * bytes written are the ones Yoga's Fetch API Response would have carried, without building one
 * (the Fetch API layer costs about as much CPU as a whole `/v1` read).
 */
class ProcessedAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(
    readonly body: string | ReadableStream<Uint8Array> | null,
    init: { status?: number; headers?: Record<string, string> } = {},
  ) {
    this.status = init.status ?? 200;
    this.headers = init.headers ?? {};
  }
}

/** The Fetch API the result processors are handed: the stand-in Response, and Node's own streams. */
const PROCESSOR_FETCH_API = { Response: ProcessedAnswer, ReadableStream, TextEncoder } as unknown as FetchAPI;

const processSse = getSSEProcessor();

/**
 * Yoga's result processors that this server answers with, in the order Yoga tries them
 * (`useResultProcessors`): server-sent events, then the regular JSON answer. Yoga also offers
 * `multipart/mixed`, for incremental delivery (`@defer`, `@stream`), which this schema has not;
 * a request accepting only that is answered 406 (docs/graphql.md, "Requests").
 */
const PROCESSORS = [
  { kind: 'sse', mediaTypes: ['text/event-stream'], streams: true },
  { kind: 'regular', mediaTypes: ['application/graphql-response+json', 'application/json'], streams: false },
] as const;

type Negotiated = { kind: 'sse' | 'regular'; mediaType: string } | { kind: 'none'; acceptable: string[] };

/**
 * The processor and media type for an `Accept` header, exactly as Yoga negotiates them: the
 * header's media types in reverse order (no header or an empty one is `*∕*`; any charset but
 * utf-8 is skipped), and the last match of every processor's type against every asked type wins.
 */
export function negotiate(accept: string | null, stream: boolean): Negotiated {
  // A client sends the same few headers again and again.
  const key = `${stream ? 's' : 'r'}${accept ?? ''}`;
  let negotiated = negotiations.get(key);
  if (negotiated === undefined) {
    negotiated = negotiateAfresh(accept, stream);
    if (negotiations.size >= MAX_NEGOTIATIONS) negotiations.clear();
    negotiations.set(key, negotiated);
  }
  return negotiated;
}

/** Negotiations remembered, by `Accept` header and kind of result (at most this many headers). */
const MAX_NEGOTIATIONS = 100;
const negotiations = new Map<string, Negotiated>();

function negotiateAfresh(accept: string | null, stream: boolean): Negotiated {
  const asked: string[] = [];
  for (const entry of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType, ...params] = entry.split(';');
    const charset = params.find((param) => param.includes('charset=')) ?? 'charset=utf-8';
    if (mediaType !== undefined && charset === 'charset=utf-8') asked.push(mediaType);
  }
  asked.reverse();
  let chosen: Negotiated | null = null;
  const acceptable: string[] = [];
  for (const processor of PROCESSORS) {
    if (stream && !processor.streams) continue;
    for (const askedType of asked) {
      for (const offered of processor.mediaTypes) {
        acceptable.push(offered);
        if (matches(askedType, offered)) chosen = { kind: processor.kind, mediaType: offered };
      }
    }
  }
  return chosen ?? { kind: 'none', acceptable };
}

/** Whether an offered media type satisfies an asked one (`*` in the asked one matches anything). */
function matches(asked: string, offered: string): boolean {
  const [askedType, askedSubtype] = asked.split('/');
  const [type, subtype] = offered.split('/');
  return (askedType === '*' || askedType === type) && (askedSubtype === '*' || askedSubtype === subtype);
}

/** Every error of a result as the spec's error object (`shapeError`). */
function shaped(result: ExecutionResult, context: GraphQLContext): ExecutionResult {
  if (!result.errors?.length) return result;
  return { ...result, errors: result.errors.map((error) => shapeError(error, context.requestId, context.logger)) };
}

/**
 * The code of the answer's first error, for metrics and the request log, and the message of its
 * first error that carries a detail (already bounded, see `shapeError`) for `X-Error-Detail`: an
 * `invalid_input`, or another error whose message is not its code's fixed one (a `budget_exceeded`
 * stating its limit, a held key's `conflict` naming its holder).
 */
function errorsOf(result: ExecutionResult): { code: string | null; detail: string | null } {
  const errors: readonly GraphQLError[] = result.errors ?? [];
  const codeOf = (error: GraphQLError) => error.extensions?.code as string | undefined;
  const detailed = errors.find((error) => {
    const code = codeOf(error);
    if (code === 'invalid_input') return true;
    return typeof code === 'string' && code in ERROR_TABLE && error.message !== ERROR_TABLE[code as ErrorCode].message;
  });
  return {
    code: (errors[0] && codeOf(errors[0])) ?? null,
    detail: detailed ? boundDetail(detailed.message) : null,
  };
}

/**
 * The HTTP answer to a GraphQL result, the one place every `/graphql` answer is written: each
 * error shaped (`errors.ts`), then the result processor Yoga would choose for the request's
 * `Accept` writes it (statuses, content types and bodies byte for byte as Yoga's own handler,
 * which `graphql-answers.test.ts` holds this against), then the response cap and the headers
 * every answer carries. A stream (server-sent events) is written as its events come.
 */
export function writeAnswer(
  res: ServerResponse,
  scope: RequestScope,
  accept: string | null,
  result: GraphQLResult,
  context: GraphQLContext,
): Promise<void> | undefined {
  const stream = isAsyncIterable(result);
  const negotiated = negotiate(accept, stream);
  if (negotiated.kind === 'none') {
    // Yoga's own refusal (`processResult`): no body, the types it could have answered with.
    writeWhole(res, scope, 406, { accept: negotiated.acceptable.join('; charset=utf-8, ') }, '');
    return;
  }
  if (negotiated.kind === 'regular' && !stream) {
    const single = shaped(result, context);
    const answer = processRegularResult(
      single,
      PROCESSOR_FETCH_API,
      negotiated.mediaType,
    ) as unknown as ProcessedAnswer;
    const errors = errorsOf(single);
    scope.code = errors.code ?? 'ok';
    const headers =
      errors.detail === null ? answer.headers : { ...answer.headers, [ERROR_DETAIL_HEADER]: errors.detail };
    writeWhole(res, scope, answer.status, headers, (answer.body as string | null) ?? '');
    return;
  }
  const events = stream
    ? mapAsyncIterator(result, (event: ExecutionResult) => shaped(event, context))
    : shaped(result, context);
  return Promise.resolve(processSse(events, PROCESSOR_FETCH_API, negotiated.mediaType)).then((answer) =>
    streamEvents(answer as unknown as ProcessedAnswer, res, scope, clientGone(res)),
  );
}

/**
 * A whole answer, after `headers` (the processor's own, in its order): the response cap, then
 * the length and the headers every answer carries.
 */
function writeWhole(
  res: ServerResponse,
  scope: RequestScope,
  status: number,
  headers: Record<string, string>,
  body: string,
): void {
  const length = Buffer.byteLength(body, 'utf8');
  if (length > OPERATION_LIMITS.maxResponseBytes) {
    throw overLimit('response', 'the answer', OPERATION_LIMITS.maxResponseBytes);
  }
  res.writeHead(status, {
    ...headers,
    'content-length': String(length),
    'cache-control': 'private, no-store',
    'x-request-id': scope.requestId,
  });
  // A string: Node sends it in one write with the head.
  res.end(body, 'utf8');
}

/** Aborted when the client goes away before its answer was written whole (which ends a subscription stream). */
function clientGone(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  // Made after the client already left (while the answer was being computed): gone at once.
  if (res.closed && !res.writableFinished) gone.abort();
  else {
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
  }
  return gone.signal;
}

/**
 * Server-sent events, written as they come. Each event is one page of changes (far below the
 * response cap); the stream as a whole has no size cap, and no operation deadline (each batch
 * has its own). Ends when the stream completes or the client goes away (which cancels the
 * processor's stream, and so ends the subscription).
 */
async function streamEvents(
  answer: ProcessedAnswer,
  res: ServerResponse,
  scope: RequestScope,
  gone: AbortSignal,
): Promise<void> {
  res.writeHead(answer.status, {
    ...answer.headers,
    'cache-control': 'private, no-store',
    'x-request-id': scope.requestId,
    // Proxies that buffer (nginx) would hold events back.
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  const reader = typeof answer.body === 'object' ? answer.body?.getReader() : undefined;
  if (!reader) {
    res.end();
    return;
  }
  const cancel = () => {
    reader.cancel().catch(() => {});
  };
  gone.addEventListener('abort', cancel, { once: true });
  // A client that left before the stream began gets no `abort` event any more.
  if (gone.aborted) cancel();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value) && !res.closed) {
        await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
      }
    }
  } catch {
    // The client went away mid-stream: nothing left to tell it.
  } finally {
    gone.removeEventListener('abort', cancel);
    res.end();
  }
}
