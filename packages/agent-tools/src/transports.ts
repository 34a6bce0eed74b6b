import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, JSONRPCMessageSchema, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { DomainError, decodeJsonBytes } from '@tms/domain';

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

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** JSON-RPC's code for a message that is not valid JSON (or, here, not strict JSON). */
const PARSE_ERROR = -32700;

/** The id of a request that plain JSON could read, so that its refusal reaches the caller. */
function requestIdOf(line: Buffer): RequestId | null {
  try {
    const id = (JSON.parse(line.toString('utf8')) as { id?: unknown } | null)?.id;
    return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
  } catch {
    return null;
  }
}

/**
 * MCP over newline-delimited JSON on a pair of streams, with each line decoded by the strict
 * decoder every transport uses (decisions §7: exact UTF-8, no duplicate key, bounded depth). The
 * SDK's stdio transport parses with plain `JSON.parse`, which keeps the last of duplicate keys.
 * A refused line is answered with a JSON-RPC parse error naming what was wrong, carrying the
 * request's id when plain JSON can read one (the caller's request then fails at once instead of
 * waiting), else id null as JSON-RPC prescribes.
 */
export class StrictStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private pending: Buffer[] = [];
  private closed = false;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
  ) {}

  private readonly onData = (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      this.pending.push(chunk.subarray(start, nl));
      const line = Buffer.concat(this.pending);
      this.pending = [];
      start = nl + 1;
      this.receive(line.at(-1) === CARRIAGE_RETURN ? line.subarray(0, -1) : line);
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
  };

  private readonly onInputError = (error: Error) => this.onerror?.(error);

  private receive(line: Buffer): void {
    if (line.length === 0) return;
    let message: JSONRPCMessage;
    try {
      const parsed = JSONRPCMessageSchema.safeParse(decodeJsonBytes(line, 'message'));
      if (!parsed.success) throw new DomainError('invalid_input', 'message: not a JSON-RPC 2.0 message');
      message = parsed.data;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const detail = error.detail ?? 'message is not JSON';
      void this.send({
        jsonrpc: '2.0',
        id: requestIdOf(line),
        error: { code: PARSE_ERROR, message: `Parse error: ${detail}` },
      } as unknown as JSONRPCMessage);
      return;
    }
    this.onmessage?.(message);
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    this.input.pause();
    this.pending = [];
    this.onclose?.();
  }
}

/**
 * Serve MCP over this process's stdin and stdout until stdin ends (the client went away) or
 * the transport closes. Nothing else may write to stdout meanwhile.
 */
export async function serveStdio(server: Server): Promise<void> {
  const transport = new StrictStdioTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.once('end', () => void server.close());
  });
  await server.connect(transport);
  await closed;
}
