import net from 'node:net';

/**
 * A TCP proxy on loopback in front of a real gateway. It forwards bytes both ways and can cut a
 * connection for real: when the answer to a matching request starts to come back, both sockets
 * are destroyed, so the request has reached (and been executed by) the gateway but the client
 * never sees the answer. It also keeps every request head it forwarded, to check what was sent.
 */
export interface CuttingProxy {
  url: string;
  /** The head (request line and headers) of every request forwarded, in order. */
  heads(): string[];
  /** The head (status line and headers) of every answer forwarded, in order. */
  responseHeads(): string[];
  /** Cut the answers of the next `count` requests whose head matches `pattern`. */
  cut(pattern: RegExp, count: number): void;
  /** Answers cut so far. */
  readonly cuts: number;
  close(): Promise<void>;
}

const HEAD = /(?:GET|POST|PUT|PATCH|DELETE) [^\r\n]+ HTTP\/1\.1\r\n[\s\S]*?\r\n\r\n/g;
const RESPONSE_HEAD = /HTTP\/1\.1 \d{3}[^\r\n]*\r\n[\s\S]*?\r\n\r\n/g;

export async function startCuttingProxy(target: string): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target);
  const transcripts: string[] = [];
  const answers: string[] = [];
  const sockets = new Set<net.Socket>();
  let pattern: RegExp | null = null;
  let remaining = 0;
  let cuts = 0;

  const server = net.createServer((down) => {
    const index = transcripts.push('') - 1;
    answers.push('');
    const up = net.connect(Number(port), hostname);
    sockets.add(down);
    sockets.add(up);
    let currentHead = '';
    down.on('data', (chunk) => {
      transcripts[index] += chunk.toString('latin1');
      const heads = transcripts[index]?.match(HEAD);
      currentHead = heads?.[heads.length - 1] ?? '';
      up.write(chunk);
    });
    up.on('data', (chunk) => {
      if (remaining > 0 && pattern?.test(currentHead)) {
        remaining -= 1;
        cuts += 1;
        down.destroy();
        up.destroy();
        return;
      }
      answers[index] += chunk.toString('latin1');
      down.write(chunk);
    });
    const closeBoth = () => {
      down.destroy();
      up.destroy();
      sockets.delete(down);
      sockets.delete(up);
    };
    down.on('close', closeBoth);
    up.on('close', closeBoth);
    down.on('error', closeBoth);
    up.on('error', closeBoth);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;

  return {
    url: `http://127.0.0.1:${address.port}`,
    heads: () => transcripts.flatMap((text) => text.match(HEAD) ?? []),
    responseHeads: () => answers.flatMap((text) => text.match(RESPONSE_HEAD) ?? []),
    cut(match, count) {
      pattern = match;
      remaining = count;
    },
    get cuts() {
      return cuts;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The value of header `name` in a request head, or null. */
export function headerOf(head: string, name: string): string | null {
  const line = head.split('\r\n').find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line ? line.slice(name.length + 1).trim() : null;
}
