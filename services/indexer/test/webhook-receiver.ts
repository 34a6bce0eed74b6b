import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  path: string;
  signature: string | undefined;
  body: string;
  /** What the receiver answered. */
  status: number;
}

/**
 * A webhook endpoint on loopback for tests: records every request, answers 500 to the next
 * `failNext` ones, and counts requests in flight per path (a delivery holds the answer briefly,
 * so that a second batch sent while one is in flight would overlap it).
 */
export class TestReceiver {
  readonly received: ReceivedDelivery[] = [];
  failNext = 0;
  /** The most requests that were open at once, per path. */
  readonly maxInFlight = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  private server: http.Server | null = null;
  port = 0;

  async start(port = this.port): Promise<void> {
    const server = http.createServer((req, res) => {
      const path = req.url ?? '/';
      const open = (this.inFlight.get(path) ?? 0) + 1;
      this.inFlight.set(path, open);
      this.maxInFlight.set(path, Math.max(this.maxInFlight.get(path) ?? 0, open));
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const status = this.failNext > 0 ? 500 : 200;
        if (status === 500) this.failNext -= 1;
        const header = req.headers['tms-signature'];
        this.received.push({
          path,
          signature: Array.isArray(header) ? header[0] : header,
          body: Buffer.concat(chunks).toString('utf8'),
          status,
        });
        setTimeout(() => {
          this.inFlight.set(path, (this.inFlight.get(path) ?? 1) - 1);
          res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'try later');
        }, 20);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /**
   * Stop listening: new connections are refused at once, while a request already received gets
   * the answer it was recorded with (its delivery is acknowledged or failed as `received` says;
   * cutting it off would let the sender resend a batch recorded here as acknowledged).
   */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    });
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The 2xx-acknowledged deliveries to `path`, parsed, in arrival order. */
  acknowledged(path: string): {
    webhook_id: string;
    changes: { sequence: number; subjects: { namespace_id: string | null }[] }[];
  }[] {
    return this.received.filter((r) => r.path === path && r.status === 200).map((r) => JSON.parse(r.body));
  }
}

export async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`not reached in time: ${what}`);
}
