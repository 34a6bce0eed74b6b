import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ToolSet } from '@tms/agent-tools';
import { type ErrorCode, errorObject, OPERATION_LIMITS } from '@tms/catalog';
import {
  authFailureReason,
  boundDetail,
  DETAILED_CODES,
  type Domain,
  DomainError,
  isDatabaseUnavailable,
  publicDetail,
} from '@tms/domain';
import { type Ledger, NOT_READY } from '@tms/ledger';
import { type ServerSpan, startServerSpan } from '@tms/telemetry';
import type { Logger } from 'pino';
import { CONSOLE_PATH, type ConsoleOptions, serveConsole } from './console/console-page';
import { GRAPHIQL_ASSETS_PATH } from './graphql/graphiql-assets';
import { GraphqlHandler, type GraphqlOptions, serveGraphiqlAsset } from './graphql/http';
import { ERROR_DETAIL_HEADER, freshRequestId, RequestScope } from './http/request-scope';
import { handleMcp } from './mcp/mcp-handler';
import type { GatewayMetrics } from './metrics';
import { handleRest } from './rest/rest-handler';

export interface AppDependencies {
  domain: Domain;
  ledger: Ledger;
  metrics: GatewayMetrics;
  logger: Logger;
  /**
   * Operation deadline, counted from a request's arrival with its body included; past it the
   * request is answered `unavailable` and nothing it asked for is committed.
   */
  timeoutMs?: number;
  /** The HTTP server's own limits (defaults: `DEFAULT_HTTP_LIMITS`). */
  httpLimits?: HttpLimits;
  /** /graphql: GraphiQL and introspection (on unless GRAPHIQL=0), production hardening. */
  graphql?: GraphqlOptions;
  /** /console: the browser console (on unless CONSOLE=off). */
  console?: ConsoleOptions;
  /** The agent tools /mcp lists and accepts (MCP_TOOLS; default `memory`). */
  mcpTools?: ToolSet;
  /** False when /metrics has its own port (METRICS_PORT): the API port then answers it `not_found`. */
  metricsOnApiPort?: boolean;
}

export interface HttpLimits {
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /** Time to receive a whole request (headers and body); at least `headersTimeoutMs`. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** Open connections at most; further ones are closed at once. */
  maxConnections: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
};

/**
 * A request Node's HTTP parser refused (or that timed out before it was whole) never reaches
 * the routes; it is still answered with the spec's error body: oversized headers as
 * `budget_exceeded` (the spec's size code; it has no 431), a receive timeout as `unavailable`,
 * anything else malformed as `invalid_input`.
 */
function clientErrorCode(error: NodeJS.ErrnoException): ErrorCode {
  if (error.code === 'HPE_HEADER_OVERFLOW') return 'budget_exceeded';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'unavailable';
  return 'invalid_input';
}

/** What Node's parser refused, for `X-Error-Detail` (its codes are ASCII names like `HPE_INVALID_METHOD`). */
function clientErrorDetail(error: NodeJS.ErrnoException): string {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return boundDetail(`request: the headers are over the limit of ${http.maxHeaderSize} bytes (${error.code})`);
  }
  return boundDetail(`request: malformed HTTP request (${error.code ?? 'unparsable'})`);
}

function clientErrorResponse(code: ErrorCode, requestId: string, detail: string): string {
  const error = errorObject(code, requestId, code === 'unavailable' ? 1 : null);
  const body = Buffer.from(JSON.stringify({ error }), 'utf8');
  const lines = [
    `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status] ?? 'Error'}`,
    'content-type: application/json',
    `content-length: ${body.length}`,
    'cache-control: private, no-store',
    `x-request-id: ${requestId}`,
    ...(code === 'unavailable' ? ['retry-after: 1'] : []),
    ...(DETAILED_CODES.has(code) ? [`${ERROR_DETAIL_HEADER}: ${detail}`] : []),
    'connection: close',
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body.toString('utf8')}`;
}

async function serveMetrics(metrics: GatewayMetrics, res: ServerResponse, scope: RequestScope): Promise<void> {
  const text = await metrics.text();
  res.writeHead(200, { 'content-type': metrics.contentType, 'x-request-id': scope.requestId });
  res.end(text);
}

/**
 * The server on METRICS_PORT: `GET /metrics` (Prometheus text) and nothing else, so that the
 * scrape port can stay private while the API port is public. Anything else is `not_found`.
 */
export function createMetricsServer(metrics: GatewayMetrics, logger: Logger): http.Server {
  async function answer(req: IncomingMessage, res: ServerResponse, scope: RequestScope): Promise<void> {
    if ((req.url ?? '/').split('?')[0] !== '/metrics') return scope.sendError(res, 'not_found');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      scope.allow = ['GET', 'HEAD'];
      return scope.sendError(res, 'method_not_allowed');
    }
    return serveMetrics(metrics, res, scope);
  }
  return http.createServer((req, res) => {
    const scope = new RequestScope(req);
    answer(req, res, scope)
      .catch((error: unknown) => {
        logger.error({ err: error, request_id: scope.requestId }, 'metrics scrape failed');
        if (!res.headersSent) scope.sendError(res, 'internal');
      })
      .finally(() => scope.deadline.clear());
  });
}

/** Where the gateway publishes the JWKS of its ledger signing key. */
export const LEDGER_KEYS_PATH = '/.well-known/ledger-keys.json';

/** The gateway's HTTP server: health, readiness and metrics, the agent tools at /mcp, then the /v1 mirror. */
export function createApp(deps: AppDependencies): http.Server {
  const { domain, ledger, metrics, logger } = deps;
  const timeoutMs = deps.timeoutMs ?? OPERATION_LIMITS.timeoutMs;
  const limits = deps.httpLimits ?? DEFAULT_HTTP_LIMITS;
  const graphqlOptions = deps.graphql ?? { production: false, graphiql: { enabled: true, devToken: null } };
  const consoleOptions = deps.console ?? { enabled: true, devToken: null };
  const graphql = new GraphqlHandler({ domain, logger, timeoutMs, metrics }, graphqlOptions);

  async function route(req: IncomingMessage, res: ServerResponse, scope: RequestScope): Promise<void> {
    const pathname = (req.url ?? '/').split('?')[0];
    switch (pathname) {
      case '/healthz':
        scope.operation = 'healthz';
        return scope.send(res, 200, '{"status":"ok"}');
      case '/readyz': {
        scope.operation = 'readyz';
        const state = await ledger.readiness().catch(() => ({ ready: false, reason: NOT_READY.unreachable }) as const);
        if (state.ready) return scope.send(res, 200, JSON.stringify({ status: 'ready' }));
        // The operator's next step, in the body and the request's log line.
        scope.code = 'unavailable';
        scope.reason = state.reason;
        return scope.send(res, 503, JSON.stringify({ status: 'not_ready', reason: state.reason }));
      }
      case LEDGER_KEYS_PATH: {
        // The public keys that sign ledger heads (docs/ledger-proofs.md): anyone may fetch them.
        scope.operation = 'ledger.keys';
        return scope.send(res, 200, JSON.stringify((await domain.ledgerKey()).jwks));
      }
      case '/metrics': {
        if (deps.metricsOnApiPort === false) throw new DomainError('not_found');
        scope.operation = 'metrics';
        return serveMetrics(metrics, res, scope);
      }
      // Every transport hands the request's deadline (`scope.deadline`) to the body reader and the
      // domain and waits for the work to settle: racing it could answer 503 for a write that
      // then commits.
      case '/graphql':
        // GraphQL (and GraphiQL) over the same domain layer.
        return graphql.handle(req, res, scope);
      case '/mcp':
        // Agent tools (MCP Streamable HTTP); every tool call of the request shares its deadline.
        return handleMcp({ domain, logger, toolSet: deps.mcpTools ?? 'memory' }, req, res, scope);
      default:
        // GraphiQL's scripts, styles and workers, named by content hash (no authentication).
        if (pathname?.startsWith(GRAPHIQL_ASSETS_PATH)) {
          return serveGraphiqlAsset(req, res, scope, graphqlOptions.graphiql.enabled);
        }
        // The console's shell and its hashed assets (no authentication: they hold no data).
        if (pathname === CONSOLE_PATH || pathname?.startsWith(`${CONSOLE_PATH}/`)) {
          return serveConsole(req, res, scope, consoleOptions);
        }
        return handleRest(domain, req, res, scope);
    }
  }

  function logRequest(fields: {
    requestId: string;
    method: string | undefined;
    operation: string;
    status: number;
    code: string;
    /** Why the request was refused (a 401's reason), when there is one to tell. */
    reason?: string | null;
    seconds: number;
  }): void {
    metrics.observe(fields.operation, fields.code, fields.seconds);
    logger.info(
      {
        request_id: fields.requestId,
        method: fields.method,
        operation: fields.operation,
        status: fields.status,
        code: fields.code,
        ...(fields.reason ? { reason: fields.reason } : {}),
        ms: Math.round(fields.seconds * 1000),
      },
      'request',
    );
  }

  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks the two receive timeouts on this interval (default 30 s, which would let a
      // 10 s header timeout run to 40 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    (req, res) => {
      const scope = new RequestScope(req, timeoutMs);
      // The request's server span (a no-op without OTEL_EXPORTER_OTLP_ENDPOINT): everything
      // below, log lines and SQL statements included, runs inside it.
      const span = startServerSpan(req.method, req.headers);
      span.run(() => serve(req, res, scope, span));
    },
  );

  function serve(req: IncomingMessage, res: ServerResponse, scope: RequestScope, span: ServerSpan): void {
    route(req, res, scope)
      .catch((error: unknown) => {
        if (res.headersSent) return;
        if (error instanceof DomainError) {
          const detail = publicDetail(error);
          if (detail !== null) {
            logger.debug({ request_id: scope.requestId, operation: scope.operation, detail }, error.code);
          }
          return scope.sendError(res, error.code, error.retryAfterSeconds, detail ?? authFailureReason(error));
        }
        if (isDatabaseUnavailable(error)) {
          logger.warn({ request_id: scope.requestId, operation: scope.operation, err: error }, 'unavailable');
          return scope.sendError(res, 'unavailable', 1);
        }
        logger.error({ request_id: scope.requestId, operation: scope.operation, err: error }, 'internal error');
        return scope.sendError(res, 'internal');
      })
      .finally(() => {
        scope.deadline.clear();
        logRequest({
          requestId: scope.requestId,
          method: req.method,
          operation: scope.operation,
          status: res.statusCode,
          code: scope.code,
          reason: scope.reason,
          seconds: (performance.now() - scope.startedAt) / 1000,
        });
        span.end({ operation: scope.operation, status: res.statusCode, code: scope.code, requestId: scope.requestId });
      });
  }
  server.maxConnections = limits.maxConnections;

  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const startedAt = performance.now();
    // The client went away, or a response to this request has already begun: nothing to say.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const code = clientErrorCode(error);
    const requestId = freshRequestId();
    socket.end(clientErrorResponse(code, requestId, clientErrorDetail(error)), () => socket.destroy());
    if (code !== 'unavailable') logger.warn({ request_id: requestId, err: error }, 'malformed request');
    logRequest({
      requestId,
      method: undefined,
      operation: 'none',
      status: errorObject(code, requestId).status,
      code,
      seconds: (performance.now() - startedAt) / 1000,
    });
  });

  return server;
}
