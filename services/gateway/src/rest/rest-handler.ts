import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseBearer } from '@tms/auth';
import { OPERATION_LIMITS } from '@tms/catalog';
import { type Domain, DomainError } from '@tms/domain';
import type { RequestScope } from '../http/request-scope';
import { readBody } from './body';
import { parseBody, parseQuery } from './parse';
import { RouteTable } from './routes';

const routes = new RouteTable();

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/** The /v1 mirror: every route comes from the catalog and goes straight to the domain. */
export async function handleRest(
  domain: Domain,
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const match = routes.match(req.method ?? 'GET', url.pathname);
  if (match.kind === 'none') throw new DomainError('not_found', 'no such path');
  if (match.kind === 'bad_path')
    throw new DomainError('invalid_input', 'path: malformed percent-encoding or not UTF-8');
  if (match.kind === 'method_not_allowed') {
    scope.allow = match.allow;
    throw new DomainError('method_not_allowed');
  }
  const { operation, params } = match;
  scope.operation = operation.name;

  const { deadline } = scope;
  const bytes = await readBody(req, OPERATION_LIMITS.maxRequestBytes, deadline);
  const caller = await deadline.race(domain.authenticate(parseBearer(header(req, 'authorization') ?? undefined)));
  const query = parseQuery(operation, url.search);
  const body = parseBody(operation, header(req, 'content-type') ?? undefined, bytes);
  const result = await domain.execute(
    operation,
    { params, query, body },
    {
      caller,
      requestId: scope.requestId,
      selectedWorkspaceId: header(req, 'x-service-workspace'),
      idempotencyKey: operation.idempotent ? header(req, 'idempotency-key') : null,
      deadline,
    },
  );
  scope.send(res, 200, result.json);
}
