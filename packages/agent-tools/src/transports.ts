import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/**
 * Answer one Streamable HTTP request (stateless: no session id, a server per request, plain
 * JSON responses instead of an SSE stream). `parsedBody` is the already read and parsed JSON-RPC
 * message or batch; the server and transport are closed when the response is done.
 */
export async function serveHttpRequest(
  server: Server,
  req: IncomingMessage,
  res: ServerResponse,
  parsedBody: unknown,
): Promise<void> {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.once('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, parsedBody);
}

/**
 * Serve MCP over this process's stdin and stdout until stdin ends (the client went away) or
 * the transport closes. Nothing else may write to stdout meanwhile.
 */
export async function serveStdio(server: Server): Promise<void> {
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.once('end', () => void server.close());
  });
  await server.connect(transport);
  await closed;
}
