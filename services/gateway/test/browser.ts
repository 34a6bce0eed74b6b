import fs from 'node:fs';
import net from 'node:net';
import { type Browser, type BrowserContext, chromium, type LaunchOptions } from 'playwright-core';

/**
 * Debian's chromium for the browser tests, driven by playwright-core (`apt-get install chromium`;
 * CHROMIUM_PATH overrides /usr/bin/chromium), and a relay that counts the bytes a page moves.
 */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_OPTIONS: LaunchOptions = {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
};

function requireChromium(): void {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no browser at ${CHROMIUM}: apt-get install -y chromium`);
}

/** A browser whose contexts each keep their own HTTP cache in memory. */
export function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch(CHROMIUM_OPTIONS);
}

/** One context with an on-disk profile (its HTTP cache survives pages, as a person's does). */
export function launchPersistentChromium(userDataDir: string): Promise<BrowserContext> {
  requireChromium();
  return chromium.launchPersistentContext(userDataDir, { ...CHROMIUM_OPTIONS, viewport: { width: 1400, height: 900 } });
}

/**
 * Counts complete HTTP/1.1 messages on one connection. Every message here is framed by
 * Content-Length (the gateway sets it on every answer; a 304 and a GET have no body).
 */
function messageCounter(): { count: number; push(chunk: Buffer): void } {
  let pending = Buffer.alloc(0);
  let bodyLeft = 0;
  const counter = {
    count: 0,
    push(chunk: Buffer) {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (bodyLeft > 0) {
          const take = Math.min(bodyLeft, pending.length);
          bodyLeft -= take;
          pending = pending.subarray(take);
          if (bodyLeft > 0) return;
          counter.count += 1;
          continue;
        }
        const end = pending.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = pending.subarray(0, end).toString('latin1');
        pending = pending.subarray(end + 4);
        const length = /^HTTP\/1\.1 304/.test(head) ? 0 : Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (length === 0) counter.count += 1;
        else bodyLeft = length;
      }
    },
  };
  return counter;
}

/**
 * A loopback TCP relay in front of the gateway: counts every byte the browser receives, whichever
 * part of Chromium (page or worker) asked for it, and the HTTP messages each way, so that a load
 * is over when every request sent has its whole answer back.
 */
export class ByteCountingRelay {
  received = 0;
  private readonly connections = new Set<{ requests: { count: number }; answers: { count: number } }>();
  private readonly server: net.Server;

  private constructor(gatewayPort: number) {
    this.server = net.createServer((browserSide) => {
      const gatewaySide = net.connect(gatewayPort, '127.0.0.1');
      const connection = { requests: messageCounter(), answers: messageCounter() };
      this.connections.add(connection);
      browserSide.on('data', (chunk: Buffer) => connection.requests.push(chunk));
      gatewaySide.on('data', (chunk: Buffer) => {
        this.received += chunk.length;
        connection.answers.push(chunk);
      });
      browserSide.pipe(gatewaySide).pipe(browserSide);
      // A connection the browser closes (e.g. a fetch it gave up) no longer waits for anything.
      const closeBoth = () => {
        this.connections.delete(connection);
        browserSide.destroy();
        gatewaySide.destroy();
      };
      browserSide.on('close', closeBoth);
      gatewaySide.on('close', closeBoth);
      browserSide.on('error', closeBoth);
      gatewaySide.on('error', closeBoth);
    });
  }

  static async start(gatewayUrl: string): Promise<ByteCountingRelay> {
    const relay = new ByteCountingRelay(Number(new URL(gatewayUrl).port));
    await new Promise<void>((resolve) => relay.server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  /** Whether every request sent on an open connection has its whole answer. */
  settled(): boolean {
    return [...this.connections].every(({ requests, answers }) => requests.count === answers.count);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
