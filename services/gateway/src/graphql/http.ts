/**
 * `/graphql`, top to bottom; each step in its own file, each file once:
 * 1. HTTP entry (this file): the method, GraphiQL for a browser asking for HTML, the body cap,
 *    the bearer token, the per-request context, and the parameters decoded strictly from the
 *    query string or the JSON body (`strict-request.ts`).
 * 2. Yoga's plugin chain (`yoga.ts`), entered once, at `getResultForParams`: the known path of
 *    compiled queries on `onParams` (`compiled-queries.ts`), Yoga's parameter checks, the parse
 *    and validation caches (`document-caches.ts`), the limits (`limits.ts`).
 * 3. Execution, by one executor: a query's compiled code (graphql-jit) or graphql-js's.
 * 4. The answer (`answer.ts`): every error shaped as the spec's error object (`errors.ts`), then
 *    the result written by the result processor Yoga's own handler would choose (JSON or
 *    server-sent events), without building a Fetch API request or response around it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseBearer } from '@tms/auth';
import { OPERATION_LIMITS } from '@tms/catalog';
import { type Domain, DomainError, overLimit } from '@tms/domain';
import type { Logger } from 'pino';
import { serveHashedAsset } from '../http/hashed-assets';
import type { RequestScope } from '../http/request-scope';
import type { GatewayMetrics } from '../metrics';
import { readBody } from '../rest/body';
import { type GraphQLResult, writeAnswer } from './answer';
import { CompiledQueries } from './compiled-queries';
import type { GraphQLContext } from './context';
import { asGraphQLError } from './errors';
import { type GraphiqlOptions, graphiqlPage } from './graphiql';
import { GRAPHIQL_ASSETS_PATH, graphiqlAssets } from './graphiql-assets';
import { StreamSlots } from './streams';
import { requestParams } from './strict-request';
import { createGraphQLServer, type GraphQLServer } from './yoga';

export interface GraphqlOptions {
  graphiql: GraphiqlOptions;
  /** NODE_ENV=production (no field suggestions). */
  production: boolean;
  /** Subscription streams open at once in this process (default `DEFAULT_MAX_STREAMS`). */
  maxStreams?: number;
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
   * Told whether the known path answered each GraphQL request (`tms_graphql_answers_total`) and
   * which executor ran each operation (`tms_graphql_executions_total`).
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
  /** Yoga's entry, taken once (each read of it through Yoga's server adapter makes a new wrapper). */
  private readonly resultForParams: GraphQLServer['getResultForParams'];
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
    const server = createGraphQLServer({ production: options.production, compiledQueries: this.compiledQueries });
    this.resultForParams = server.getResultForParams;
    this.streams = new StreamSlots(options.maxStreams ?? DEFAULT_MAX_STREAMS);
  }

  async handle(req: IncomingMessage, res: ServerResponse, scope: RequestScope): Promise<void> {
    scope.operation = 'graphql';
    const method = req.method ?? 'GET';
    if (method !== 'GET' && method !== 'POST') {
      scope.allow = ['GET', 'POST'];
      throw new DomainError('method_not_allowed');
    }
    // Parsed only when there is a query string (a POST has none): the parse costs CPU per request.
    const rawUrl = req.url ?? '/';
    const url = rawUrl.includes('?') ? new URL(rawUrl, 'http://localhost') : null;
    if (method === 'GET' && wantsHtml(req) && this.options.graphiql.enabled) {
      scope.operation = 'graphiql';
      const html = Buffer.from(
        await graphiqlPage(url ?? new URL(rawUrl, 'http://localhost'), this.options.graphiql),
        'utf8',
      );
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
    if (url !== null && Buffer.byteLength(url.search) > OPERATION_LIMITS.maxRequestBytes) {
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

    // Yoga's plugin chain and execution. What is thrown on the way (a refused body, a parameter
    // Yoga's checks refuse) is the result's only error, as Yoga's own handler makes it.
    let result: GraphQLResult;
    try {
      const params = requestParams(
        method,
        url === null ? '' : url.search + url.hash,
        header(req, 'content-type'),
        bytes,
      );
      // Yoga's type allows no result; its pipeline always returns one.
      result = (await this.resultForParams({ params, request: REQUESTS[method] }, context as never)) ?? { data: null };
    } catch (error) {
      result = { errors: [asGraphQLError(error)] };
    }
    this.deps.metrics.graphqlAnswered(context.answeredByKnownPath ? 'known' : 'pipeline');
    return writeAnswer(res, scope, header(req, 'accept'), result, context);
  }
}

/**
 * What Yoga's pipeline is handed as the request: only its method is read there (no mutation over
 * GET, `usePreventMutationViaGET`); the route has read everything else (the body, the headers),
 * so no Fetch API request is built (its construction and body stream cost about as much CPU as a
 * `/v1` read).
 */
const REQUESTS = {
  GET: Object.freeze({ method: 'GET' }) as unknown as Request,
  POST: Object.freeze({ method: 'POST' }) as unknown as Request,
};

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
