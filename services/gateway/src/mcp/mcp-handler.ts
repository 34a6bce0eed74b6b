import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AgentLogger, createAgentServer, serveHttpRequest } from '@tms/agent-tools';
import { parseBearer } from '@tms/auth';
import { OPERATION_LIMITS } from '@tms/catalog';
import { type Domain, DomainError } from '@tms/domain';
import type { RequestScope } from '../http/request-scope';
import { readBody } from '../rest/body';

export interface McpDependencies {
  domain: Domain;
  logger: AgentLogger;
  timeoutMs: number;
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  if (value === undefined) return null;
  return Array.isArray(value) ? (value[0] ?? null) : value;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

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
  const bytes = await readBody(req, OPERATION_LIMITS.maxRequestBytes);
  const caller = await deps.domain.authenticate(parseBearer(header(req, 'authorization') ?? undefined));

  let message: unknown;
  try {
    message = JSON.parse(utf8.decode(bytes));
  } catch {
    scope.code = 'invalid_input';
    scope.send(res, 400, JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
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
      timeoutMs: deps.timeoutMs,
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
