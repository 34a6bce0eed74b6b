import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseBearer } from '@tms/auth';
import { OPERATION_LIMITS } from '@tms/catalog';
import { type Domain, DomainError } from '@tms/domain';
import type { Logger } from 'pino';
import type { RequestScope } from '../http/request-scope';
import { readBody } from '../rest/body';
import type { GraphQLContext } from './context';
import { type GraphiqlOptions, graphiqlPage } from './graphiql';
import {
  ASSET_CACHE_CONTROL,
  chooseCoding,
  GRAPHIQL_ASSETS_PATH,
  graphiqlAssets,
  matchesIfNoneMatch,
} from './graphiql-assets';
import { createGraphQLServer, type GraphQLServer } from './yoga';

export interface GraphqlOptions {
  graphiql: GraphiqlOptions;
  /** NODE_ENV=production (no field suggestions). */
  production: boolean;
}

export interface GraphqlDependencies {
  domain: Domain;
  logger: Logger;
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

  constructor(
    private readonly deps: GraphqlDependencies,
    private readonly options: GraphqlOptions,
  ) {
    this.server = createGraphQLServer({ production: options.production });
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
      throw new DomainError('budget_exceeded', 'query string too large');
    }
    const caller = await scope.deadline.race(
      this.deps.domain.authenticate(parseBearer(header(req, 'authorization') ?? undefined)),
    );
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
    };

    // Yoga's own Fetch API (the @whatwg-node ponyfill): Node's global Request (undici) costs
    // about a millisecond of CPU per request in web streams and IDL checks.
    const fetchAPI = this.server.fetchAPI;
    const headers = new fetchAPI.Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    const request = new fetchAPI.Request(url, {
      method,
      headers,
      body: method === 'POST' ? new Uint8Array(bytes) : undefined,
    });
    const response = await this.server.handleRequest(request, context as never);
    const body = Buffer.from(await response.arrayBuffer());
    if (body.length > OPERATION_LIMITS.maxResponseBytes) throw new DomainError('budget_exceeded', 'response too large');

    const out: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    scope.code = firstErrorCode(response.headers.get('content-type'), body) ?? 'ok';
    res.writeHead(response.status, {
      ...out,
      'content-length': String(body.length),
      'cache-control': 'private, no-store',
      'x-request-id': scope.requestId,
    });
    res.end(body);
  }
}

/**
 * GET (or HEAD) /graphql/assets/<name>.<hash>.<ext>: GraphiQL's static files, public and
 * unauthenticated like any page asset (they hold no data). The body is brotli or gzip as
 * `Accept-Encoding` allows, compressed once per process; each coding has its own strong ETag and
 * a matching `If-None-Match` is answered 304. A name or hash the running version does not
 * serve is `not_found`, as is every asset when GRAPHIQL=0.
 */
export async function serveGraphiqlAsset(
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
  enabled: boolean,
): Promise<void> {
  scope.operation = 'graphiql_asset';
  const method = req.method ?? 'GET';
  const file = (req.url ?? '').split('?')[0]?.slice(GRAPHIQL_ASSETS_PATH.length) ?? '';
  if (!enabled) throw new DomainError('not_found');
  if (method !== 'GET' && method !== 'HEAD') {
    scope.allow = ['GET', 'HEAD'];
    throw new DomainError('method_not_allowed');
  }
  const asset = (await graphiqlAssets()).find(file);
  if (!asset) throw new DomainError('not_found');

  const coding = chooseCoding(header(req, 'accept-encoding') ?? undefined);
  const etag = asset.etag(coding);
  const headers: Record<string, string> = {
    'cache-control': ASSET_CACHE_CONTROL,
    etag,
    vary: 'Accept-Encoding',
    'x-content-type-options': 'nosniff',
    'x-request-id': scope.requestId,
  };
  if (matchesIfNoneMatch(header(req, 'if-none-match') ?? undefined, etag)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const body = await asset.body(coding);
  res.writeHead(200, {
    ...headers,
    'content-type': asset.contentType,
    'content-length': String(body.length),
    ...(coding === 'identity' ? {} : { 'content-encoding': coding }),
  });
  res.end(method === 'HEAD' ? undefined : body);
}

/** The code of the answer's first error, for metrics and the request log. */
function firstErrorCode(contentType: string | null, body: Buffer): string | null {
  if (!contentType?.includes('json')) return null;
  // Most answers carry no error: skip parsing them again (a text that merely contains the
  // word is parsed, as before).
  if (!body.includes('"errors"')) return null;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { errors?: { extensions?: { code?: string } }[] };
    return parsed.errors?.[0]?.extensions?.code ?? null;
  } catch {
    return null;
  }
}
