import http from 'node:http';
import fc from 'fast-check';
import { describeBytes } from './arbitraries';

/** One HTTP request exactly as sent: method, path with its query string, headers, body bytes. */
export class WireRequest {
  constructor(
    readonly transport: 'rest' | 'graphql' | 'mcp',
    /** The catalog operation it stands for. */
    readonly operation: string,
    /** Whether the operation writes (a refused one must leave the ledger as it was). */
    readonly mutates: boolean,
    readonly method: string,
    readonly path: string,
    readonly headers: Record<string, string>,
    readonly body: Buffer | null,
    /** What was done to the valid request. */
    readonly mutation: string,
  ) {}

  /** The transport's properties of the answer: problems found, and whether it refused the request. */
  check: (response: WireResponse) => { problems: string[]; refused: boolean } = () => ({ problems: [], refused: true });

  checkedBy(check: WireRequest['check']): this {
    this.check = check;
    return this;
  }

  describe(): string {
    const headers = Object.entries(this.headers)
      .map(([name, value]) => `${name}: ${name === 'authorization' ? `${value.slice(0, 14)}…` : value}`)
      .join('\n  ');
    const body = this.body === null ? '(no body)' : `${this.body.length} bytes: ${describeBytes(this.body)}`;
    return `[${this.transport} ${this.operation}; ${this.mutation}]\n  ${this.method} ${describeBytes(Buffer.from(this.path))}\n  ${headers}\n  ${body}`;
  }

  /** Request line and headers past Node's 16 KiB limit: the server cannot read X-Request-Id then. */
  get headOverflows(): boolean {
    return (
      this.path.length + Object.entries(this.headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0) > 16_000
    );
  }

  [fc.toStringMethod](): string {
    return this.describe();
  }
}

export interface WireResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

export function send(base: string, request: WireRequest): Promise<WireResponse> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...request.headers };
    if (request.body !== null) headers['content-length'] = String(request.body.length);
    const req = http.request(
      { host: url.hostname, port: url.port, method: request.method, path: request.path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', reject);
    req.end(request.body ?? undefined);
  });
}

export function closeAgent(): void {
  agent.destroy();
}
