/**
 * A loopback TCP proxy in front of Postgres that reads the frontend side of the wire protocol
 * and counts what a server sends: simple queries ('Q'), and of the extended protocol Parse
 * ('P'), Bind ('B'), Execute ('E'), Sync ('S') and Flush ('H'). Statements = Q + E; round trips
 * = Q + S + H (each waits for ReadyForQuery; a Flush is how postgres.js asks for an unprepared
 * statement's parameter types, and it waits for them before it binds); Parse shows how often Postgres has to plan a statement anew. It
 * counts exactly what went over the wire, whatever the client library, so the gateway and the
 * baseline are counted alike. Used for a separate, sequential counting pass, never while timing.
 */
import net from 'node:net';

export interface WireCounts {
  Q: number;
  P: number;
  B: number;
  E: number;
  S: number;
  H: number;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

const zero = (): WireCounts => ({ Q: 0, P: 0, B: 0, E: 0, S: 0, H: 0 });

/** Splits one client's byte stream into messages and counts the ones that matter. */
class FrontendParser {
  private pending: Buffer = Buffer.alloc(0);
  /** The startup packet (and an SSL or GSS request before it) has no type byte. */
  private untyped = true;

  /** `tally()` is read per message, so a reset between messages starts a clean count. */
  constructor(private readonly tally: () => WireCounts) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    let offset = 0;
    for (;;) {
      if (this.untyped) {
        if (this.pending.length - offset < 8) break;
        const length = this.pending.readInt32BE(offset);
        if (this.pending.length - offset < length) break;
        const code = this.pending.readInt32BE(offset + 4);
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.untyped = false;
        offset += length;
        continue;
      }
      if (this.pending.length - offset < 5) break;
      const type = String.fromCharCode(this.pending[offset] as number);
      const length = this.pending.readInt32BE(offset + 1);
      if (this.pending.length - offset < 1 + length) break;
      const counts = this.tally();
      if (type in counts) counts[type as keyof WireCounts] += 1;
      offset += 1 + length;
    }
    this.pending = this.pending.subarray(offset);
  }
}

export class PgWireCounter {
  private counts = zero();
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  /** Listens on loopback and forwards every connection to `target` (a postgres:// URL). */
  static async start(target: string): Promise<PgWireCounter> {
    const url = new URL(target);
    const upstreamPort = Number(url.port || 5432);
    const upstreamHost = url.hostname;
    let counter: PgWireCounter | null = null;
    const server = net.createServer((client) => {
      const upstream = net.connect(upstreamPort, upstreamHost);
      const self = counter as PgWireCounter;
      self.sockets.add(client);
      self.sockets.add(upstream);
      const parser = new FrontendParser(() => self.counts);
      client.on('data', (chunk: Buffer) => {
        parser.push(chunk);
        upstream.write(chunk);
      });
      upstream.pipe(client);
      const closeBoth = () => {
        client.destroy();
        upstream.destroy();
        self.sockets.delete(client);
        self.sockets.delete(upstream);
      };
      client.on('close', closeBoth);
      upstream.on('close', closeBoth);
      client.on('error', closeBoth);
      upstream.on('error', closeBoth);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    counter = new PgWireCounter(server, (server.address() as net.AddressInfo).port);
    return counter;
  }

  /** `target` with its host and port replaced by this proxy's. */
  urlFor(target: string): string {
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  reset(): void {
    this.counts = zero();
  }

  snapshot(): WireCounts {
    return { ...this.counts };
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
