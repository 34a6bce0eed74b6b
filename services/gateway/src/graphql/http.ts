import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseBearer } from '@tms/auth';
import { ERROR_TABLE, type ErrorCode, OPERATION_LIMITS } from '@tms/catalog';
import { boundDetail, type Domain, DomainError, overLimit } from '@tms/domain';
import type { Logger } from 'pino';
import { serveHashedAsset } from '../http/hashed-assets';
import { ERROR_DETAIL_HEADER, type RequestScope } from '../http/request-scope';
import type { GatewayMetrics } from '../metrics';
import { readBody } from '../rest/body';
import { CompiledQueries } from './compiled-queries';
import type { GraphQLContext } from './context';
import { answerDirectly, directMediaType } from './direct-answers';
import { type GraphiqlOptions, graphiqlPage } from './graphiql';
import { GRAPHIQL_ASSETS_PATH, graphiqlAssets } from './graphiql-assets';
import { StreamSlots } from './streams';
import { createGraphQLServer, type GraphQLServer } from './yoga';

export interface GraphqlOptions {
  graphiql: GraphiqlOptions;
  /** NODE_ENV=production (no field suggestions). */
  production: boolean;
  /** Subscription streams open at once in this process (default `DEFAULT_MAX_STREAMS`). */
  maxStreams?: number;
  /**
   * Answer plain POSTed queries without Yoga's Fetch API layer (`direct-answers.ts`). On unless
   * false; tests turn it off to hold the two paths' answers against each other.
   */
  directAnswers?: boolean;
  /** Execute repeated queries by compiled code (`compiled-queries.ts`); on unless false (tests compare). */
  compiledQueries?: boolean;
}

/** Open subscription streams per process unless configured (GRAPHQL_MAX_STREAMS). */
export const DEFAULT_MAX_STREAMS = 100;

export interface GraphqlDependencies {
  domain: Domain;
  logger: Logger;
  /** The operation deadline, for each batch of a subscription. */
  timeoutMs: number;
  /**
   * Told which path answered each GraphQL request (`tms_graphql_answers_total`) and which
   * executor ran each operation (`tms_graphql_executions_total`).
   */
  metrics: Pick<GatewayMetrics, 'graphqlAnswered' | 'graphqlExecuted'>;
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

const wantsHtml = (req: IncomingMessage) => (header(req, 'accept') ?? '').includes('text/html');

/** Admins may introspect: callers holding `svc:admin` (human sessions are not scope-limited). */
const isAdmin = (scopes: readonly string[] | null) => scopes === null || scopes.includes('svc:admin');

/**
 * /graphql on the gateway's port. Like /v1: the body is capped at 262144 bytes, then the
 * bearer token is verified (401 with the /v1 error body and `WWW-Authenticate: Bearer`), then
 * the request goes to the GraphQL server with a fresh per-request context (caller, workspace
 * selection from `X-Service-Workspace`, batch loaders). An answer past 1048576 bytes is
 * refused like /v1's. A browser asking for HTML gets GraphiQL (unless GRAPHIQL=0).
 */
export class GraphqlHandler {
  private readonly server: GraphQLServer;
  private readonly compiledQueries: CompiledQueries;
  private readonly streams: StreamSlots;

  constructor(
    private readonly deps: GraphqlDependencies,
    private readonly options: GraphqlOptions,
  ) {
    this.compiledQueries = new CompiledQueries({
      enabled: options.compiledQueries !== false,
      onExecution: (executor) => deps.metrics.graphqlExecuted(executor),
    });
    this.server = createGraphQLServer({ production: options.production, compiledQueries: this.compiledQueries });
    this.streams = new StreamSlots(options.maxStreams ?? DEFAULT_MAX_STREAMS);
  }

  async handle(req: IncomingMessage, res: ServerResponse, scope: RequestScope): Promise<void> {
    scope.operation = 'graphql';
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'POST') {
      scope.allow = ['GET', 'POST'];
      throw new DomainError('method_not_allowed');
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (method === 'GET' && wantsHtml(req) && this.options.graphiql.enabled) {
      scope.operation = 'graphiql';
      const html = Buffer.from(await graphiqlPage(url, this.options.graphiql), 'utf8');
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': String(html.length),
        'cache-control': 'private, no-store',
        'x-request-id': scope.requestId,
      });
      res.end(html);
      return;
    }

    const bytes = await readBody(req, OPERATION_LIMITS.maxRequestBytes, scope.deadline);
    if (Buffer.byteLength(url.search) > OPERATION_LIMITS.maxRequestBytes) {
      throw overLimit('request', 'the query string', OPERATION_LIMITS.maxRequestBytes);
    }
    const authenticate = () => this.deps.domain.authenticate(parseBearer(header(req, 'authorization') ?? undefined));
    const caller = await scope.deadline.race(authenticate());
    const selectedWorkspaceId = header(req, 'x-service-workspace');
    const context: GraphQLContext = {
      domain: this.deps.domain,
      caller,
      requestId: scope.requestId,
      selectedWorkspaceId,
      loaders: this.deps.domain.loaders({ caller, requestId: scope.requestId, selectedWorkspaceId }),
      introspection: this.options.graphiql.enabled && isAdmin(caller.scopes),
      logger: this.deps.logger,
      deadline: scope.deadline,
      reauthenticate: authenticate,
      timeoutMs: this.deps.timeoutMs,
      streams: this.streams,
    };

    const mediaType =
      method === 'POST' && this.options.directAnswers !== false ? directMediaType(header(req, 'accept')) : null;
    if (mediaType !== null) {
      const outcome = await answerDirectly(
        this.server,
        this.compiledQueries,
        header(req, 'content-type'),
        bytes,
        context,
      );
      if (outcome.kind === 'answered') {
        scope.code = 'ok';
        writeAnswer(res, scope, 200, { 'content-type': `${mediaType}; charset=utf-8` }, outcome.body);
        this.deps.metrics.graphqlAnswered(outcome.path);
        return;
      }
      if (outcome.kind === 'executed') context.executed = outcome.result;
    }

    // Yoga's own Fetch API (the @whatwg-node ponyfill): Node's global Request (undici) costs
    // about a millisecond of CPU per request in web streams and IDL checks.
    const fetchAPI = this.server.fetchAPI;
    const headers = new fetchAPI.Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    // Only an answer the client accepts as server-sent events can stream; a plain query skips
    // the signal (an AbortSignal, and its abort's DOMException, per request cost CPU).
    const gone = (header(req, 'accept') ?? '').includes('text/event-stream') ? clientGone(res) : undefined;
    const request = new fetchAPI.Request(url, {
      method,
      headers,
      body: method === 'POST' ? new Uint8Array(bytes) : undefined,
      ...(gone ? { signal: gone } : {}),
    });
    const response = await this.server.handleRequest(request, context as never);
    this.deps.metrics.graphqlAnswered('yoga');
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
      return streamEvents(response, res, scope, gone ?? clientGone(res));
    }
    const body = Buffer.from(await response.arrayBuffer());
    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    const errors = errorsOf(response.headers.get('content-type'), body);
    scope.code = errors.code ?? 'ok';
    if (errors.detail !== null) out[ERROR_DETAIL_HEADER] = errors.detail;
    writeAnswer(res, scope, response.status, out, body);
  }
}

/**
 * A GraphQL answer of either path (direct or Yoga's), after `headers` (Yoga's own, in its
 * order): the response cap, then the length and the headers every answer carries.
 */
function writeAnswer(
  res: ServerResponse,
  scope: RequestScope,
  status: number,
  headers: Record<string, string>,
  body: Buffer,
): void {
  if (body.length > OPERATION_LIMITS.maxResponseBytes) {
    throw overLimit('response', 'the answer', OPERATION_LIMITS.maxResponseBytes);
  }
  res.writeHead(status, {
    ...headers,
    'content-length': String(body.length),
    'cache-control': 'private, no-store',
    'x-request-id': scope.requestId,
  });
  res.end(body);
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
 * A subscription's server-sent events, written as they come. Each event is one page of
 * changes (far below the response cap); the stream as a whole has no size cap, and no
 * operation deadline (each batch has its own). Ends when the stream completes or the client
 * goes away.
 */
async function streamEvents(
  response: Response,
  res: ServerResponse,
  scope: RequestScope,
  gone: AbortSignal,
): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, {
    ...headers,
    'cache-control': 'private, no-store',
    'x-request-id': scope.requestId,
    // Proxies that buffer (nginx) would hold events back.
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  const reader = response.body?.getReader();
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

/**
 * The code of the answer's first error, for metrics and the request log, and the message of its
 * first error that carries a detail (already bounded, see `shapeError`) for `X-Error-Detail`: an
 * `invalid_input`, or another error whose message is not its code's fixed one (a `budget_exceeded`
 * stating its limit, a held key's `conflict` naming its holder).
 */
function errorsOf(contentType: string | null, body: Buffer): { code: string | null; detail: string | null } {
  const none = { code: null, detail: null };
  if (!contentType?.includes('json')) return none;
  // Most answers carry no error: skip parsing them again (a text that merely contains the
  // word is parsed, as before).
  if (!body.includes('"errors"')) return none;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as {
      errors?: { message?: unknown; extensions?: { code?: string } }[];
    };
    const errors = parsed.errors ?? [];
    const detailed = errors.find((error) => {
      const code = error.extensions?.code;
      if (code === 'invalid_input') return true;
      return (
        typeof code === 'string' && code in ERROR_TABLE && error.message !== ERROR_TABLE[code as ErrorCode].message
      );
    });
    return {
      code: errors[0]?.extensions?.code ?? null,
      detail: typeof detailed?.message === 'string' ? boundDetail(detailed.message) : null,
    };
  } catch {
    return none;
  }
}
/**
 * GET (or HEAD) /graphql/assets/<name>.<hash>.<ext>: GraphiQL's static files (`serveHashedAsset`).
 * Every asset is `not_found` when GRAPHIQL=0.
 */
export async function serveGraphiqlAsset(
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  enabled: boolean,
): Promise<void> {
  scope.operation = 'graphiql_asset';
  if (!enabled) throw new DomainError('not_found');
  const file = (req.url ?? '').split('?')[0]?.slice(GRAPHIQL_ASSETS_PATH.length) ?? '';
  return serveHashedAsset(req, res, scope, async () => (await graphiqlAssets()).find(file));
}
