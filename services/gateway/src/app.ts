import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { OPERATION_LIMITS } from '@tms/catalog';
import { type Domain, DomainError, isDatabaseUnavailable } from '@tms/domain';
import type { Ledger } from '@tms/ledger';
import type { Logger } from 'pino';
import { GraphqlHandler, type GraphqlOptions } from './graphql/http';
import { RequestScope } from './http/request-scope';
import { handleMcp } from './mcp/mcp-handler';
import type { GatewayMetrics } from './metrics';
import { handleRest } from './rest/rest-handler';

export interface AppDependencies {
  domain: Domain;
  ledger: Ledger;
  metrics: GatewayMetrics;
  logger: Logger;
  /** Operation timeout; a request running longer is answered `unavailable`. */
  timeoutMs?: number;
  /** /graphql: GraphiQL and introspection (on unless GRAPHIQL=0), production hardening. */
  graphql?: GraphqlOptions;
}

class OperationTimeout extends Error {}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new OperationTimeout()), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** The gateway's HTTP server: health, readiness and metrics, the agent tools at /mcp, then the /v1 mirror. */
export function createApp(deps: AppDependencies): http.Server {
  const { domain, ledger, metrics, logger } = deps;
  const timeoutMs = deps.timeoutMs ?? OPERATION_LIMITS.timeoutMs;
  const graphql = new GraphqlHandler(
    { domain, logger },
    deps.graphql ?? { production: false, graphiql: { enabled: true, devToken: null } },
  );

  async function route(req: IncomingMessage, res: ServerResponse, scope: RequestScope): Promise<void> {
    const pathname = (req.url ?? '/').split('?')[0];
    switch (pathname) {
      case '/healthz':
        scope.operation = 'healthz';
        return scope.send(res, 200, '{"status":"ok"}');
      case '/readyz': {
        scope.operation = 'readyz';
        const ready = await ledger.ready().catch(() => false);
        return scope.send(res, ready ? 200 : 503, JSON.stringify({ status: ready ? 'ready' : 'not_ready' }));
      }
      case '/metrics': {
        scope.operation = 'metrics';
        const text = await metrics.text();
        res.writeHead(200, { 'content-type': metrics.contentType, 'x-request-id': scope.requestId });
        res.end(text);
        return;
      }
      case '/graphql':
        // GraphQL (and GraphiQL) over the same domain layer; one request has the operation timeout.
        return withTimeout(graphql.handle(req, res, scope), timeoutMs);
      case '/mcp':
        // Agent tools (MCP Streamable HTTP); each tool call has the operation timeout.
        return handleMcp({ domain, logger, timeoutMs }, req, res, scope);
      default:
        return withTimeout(handleRest(domain, req, res, scope), timeoutMs);
    }
  }

  return http.createServer((req, res) => {
    const scope = new RequestScope(req);
    route(req, res, scope)
      .catch((error: unknown) => {
        if (res.headersSent) return;
        if (error instanceof DomainError) return scope.sendError(res, error.code, error.retryAfterSeconds);
        if (error instanceof OperationTimeout || isDatabaseUnavailable(error)) {
          logger.warn({ request_id: scope.requestId, operation: scope.operation, err: error }, 'unavailable');
          return scope.sendError(res, 'unavailable', 1);
        }
        logger.error({ request_id: scope.requestId, operation: scope.operation, err: error }, 'internal error');
        return scope.sendError(res, 'internal');
      })
      .finally(() => {
        const seconds = (performance.now() - scope.startedAt) / 1000;
        metrics.observe(scope.operation, scope.code, seconds);
        logger.info(
          {
            request_id: scope.requestId,
            method: req.method,
            operation: scope.operation,
            status: res.statusCode,
            code: scope.code,
            ms: Math.round(seconds * 1000),
          },
          'request',
        );
      });
  });
}
