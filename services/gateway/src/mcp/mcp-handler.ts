import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AgentLogger, createAgentServer, serveHttpRequest, type ToolSet } from '@tms/agent-tools';
import { parseBearer } from '@tms/auth';
import { OPERATION_LIMITS } from '@tms/catalog';
import { type Domain, DomainError, decodeJsonBody, publicDetail } from '@tms/domain';
import { ERROR_DETAIL_HEADER, type RequestScope } from '../http/request-scope';
import { readBody } from '../rest/body';

export interface McpDependencies {
  domain: Domain;
  logger: AgentLogger;
  /** The tools /mcp lists and accepts (MCP_TOOLS). */
  toolSet: ToolSet;
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

/**
 * /mcp: the agent tools over Streamable HTTP, stateless. The bearer token and
 * `X-Service-Workspace` of each HTTP request decide the caller and the default workspace;
 * transport-level failures (size, method, authentication) answer like /v1.
 */
export async function handleMcp(
  deps: McpDependencies,
  req: IncomingMessage,
  res: ServerResponse,
  scope: RequestScope,
): Promise<void> {
  scope.operation = 'mcp';
  // Stateless: no standalone SSE stream (GET) and no session to end (DELETE).
  if (req.method !== 'POST') {
    scope.allow = ['POST'];
    throw new DomainError('method_not_allowed');
  }
  // Authenticate before reading a byte of the body (an anonymous client holds no socket
  // while it trickles one in), then read it under the request's deadline.
  const { deadline } = scope;
  const caller = await deadline.race(deps.domain.authenticate(parseBearer(header(req, 'authorization') ?? undefined)));
  const bytes = await readBody(req, OPERATION_LIMITS.maxRequestBytes, deadline);

  // The strict decoder of every transport (content type, UTF-8, duplicate keys, depth), answered
  // in JSON-RPC's shape: a parse error naming what was wrong.
  let message: unknown;
  try {
    message = decodeJsonBody(header(req, 'content-type'), bytes);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    scope.code = 'invalid_input';
    const detail = publicDetail(error) ?? 'body: not JSON';
    deps.logger.debug?.({ request_id: scope.requestId, operation: 'mcp', detail }, 'invalid_input');
    const parseError = { code: -32700, message: `Parse error: ${detail}` };
    scope.send(res, 400, JSON.stringify({ jsonrpc: '2.0', error: parseError, id: null }), {
      [ERROR_DETAIL_HEADER]: detail,
    });
    return;
  }

  const server = createAgentServer(
    deps.domain,
    {
      caller: async () => caller,
      workspaceId: header(req, 'x-service-workspace'),
      requestId: () => scope.requestId,
    },
    {
      logger: deps.logger,
      toolSet: deps.toolSet,
      // Every call of this request shares the request's deadline (body reading included).
      deadline,
      onToolCall(event) {
        scope.operation = `mcp:${event.operation}`;
        scope.code = event.code;
      },
    },
  );
  res.setHeader('cache-control', 'private, no-store');
  res.setHeader('x-request-id', scope.requestId);
  await serveHttpRequest(server, req, res, message);
}
