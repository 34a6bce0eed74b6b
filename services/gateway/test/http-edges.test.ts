import net from 'node:net';
import { type CallResult, freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnv } from '../src/env';
import { DRIVERS, type Harness, startHarness } from './harness';
import { expectError, expectShape } from './shapes';

/** Give up on an answer after this long (a bound on the test, not a timing assertion). */
const ANSWER_BOUND_MS = 5000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A client on a raw socket, for requests an HTTP client would refuse to send or send too
 * politely. `answer()` is the first response read from the socket (headers and a body of
 * Content-Length bytes, or up to the close), or rejects when none came within the bound.
 */
class RawClient {
  readonly socket: net.Socket;
  private received = Buffer.alloc(0);
  private closed = false;
  private readonly waiters = new Set<() => void>();
  readonly connected: Promise<void>;

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.socket = net.connect({ host: hostname, port: Number(port) });
    this.connected = new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('error', reject);
    });
    this.socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.notify();
    });
    // The server may reset a connection it refuses; what arrived before still counts.
    this.socket.on('error', () => {});
    this.socket.on('close', () => {
      this.closed = true;
      this.notify();
    });
  }

  private notify(): void {
    for (const waiter of this.waiters) waiter();
  }

  write(data: string | Buffer): void {
    if (!this.socket.destroyed && this.socket.writable) this.socket.write(data);
  }

  /** Resolves once the server closed the connection (false when it stayed open within `ms`). */
  closedWithin(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.closed) return resolve(true);
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        resolve(false);
      }, ms);
      const check = () => {
        if (!this.closed) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(true);
      };
      this.waiters.add(check);
    });
  }

  answer(): Promise<CallResult> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no answer within ${ANSWER_BOUND_MS} ms; received: ${this.received.toString('latin1')}`));
      }, ANSWER_BOUND_MS);
      const check = () => {
        const parsed = parseResponse(this.received, this.closed);
        if (!parsed && !this.closed) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        if (parsed) resolve(parsed);
        else reject(new Error(`connection closed without an answer; received: ${this.received.toString('latin1')}`));
      };
      this.waiters.add(check);
      check();
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

function parseResponse(bytes: Buffer, closed: boolean): CallResult | null {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers = new Headers();
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const length = headers.get('content-length');
  const rest = bytes.subarray(end + 4);
  if (length === null ? !closed : rest.length < Number(length)) return null;
  const text = rest.subarray(0, length === null ? rest.length : Number(length)).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body, text } as CallResult;
}

async function rawRequest(url: string, data: string | Buffer): Promise<CallResult> {
  const client = new RawClient(url);
  try {
    await client.connected;
    client.write(data);
    return await client.answer();
  } finally {
    client.close();
  }
}

async function counterValue(h: Harness, operation: string, code: string): Promise<number> {
  const text = (await h.api.get('/metrics')).text;
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`tms_requests_total{operation="${operation}",code="${code}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('requests the HTTP parser refuses', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite' });
  });
  afterAll(async () => {
    await h?.close();
  });

  const cases: { name: string; request: string; code: 'invalid_input' | 'budget_exceeded' }[] = [
    {
      name: 'headers over the 16 KB limit',
      request: `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\n\r\n`,
      code: 'budget_exceeded',
    },
    {
      name: 'a bad byte in a header',
      request: 'GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n',
      code: 'invalid_input',
    },
    {
      name: 'a header name with a space',
      request: 'GET /v1/me HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n',
      code: 'invalid_input',
    },
    {
      name: 'Content-Length and Transfer-Encoding together',
      request:
        'POST /v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      code: 'invalid_input',
    },
    { name: 'a malformed request line', request: 'NOT A REQUEST LINE\r\n\r\n', code: 'invalid_input' },
  ];

  for (const { name, request, code } of cases) {
    it(`answers ${name} with the spec's error body and a request id`, async () => {
      const before = await counterValue(h, 'none', code);
      const res = await rawRequest(h.url, request);
      // What Node's parser refused is named too (its error code), and the limit headers passed.
      const detail =
        code === 'budget_exceeded'
          ? 'request: the headers are over the limit of 16384 bytes (HPE_HEADER_OVERFLOW)'
          : /^request: malformed HTTP request \(HPE_[A-Z_]+\)$/;
      expectError(res, code, { detail });
      expect(res.headers.get('connection')).toBe('close');
      // Counted and logged like any other request.
      expect(await counterValue(h, 'none', code)).toBe(before + 1);
      const requestId = res.body.error.request_id as string;
      expect(h.logs.some((line) => line.includes(requestId) && line.includes('"msg":"request"'))).toBe(true);
    });
  }
});

describe('HTTP server limits (configured through the environment)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      driver: 'pglite',
      env: {
        HTTP_HEADERS_TIMEOUT_MS: '300',
        HTTP_REQUEST_TIMEOUT_MS: '600',
        HTTP_KEEPALIVE_TIMEOUT_MS: '200',
        HTTP_MAX_CONNECTIONS: '3',
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('answers a client that never finishes its headers with 503 unavailable, then closes', async () => {
    const client = new RawClient(h.url);
    try {
      await client.connected;
      client.write('GET /v1/me HTTP/1.1\r\nHost: x\r\n');
      const res = await client.answer();
      expectError(res, 'unavailable', { retryAfterSeconds: 1 });
      expect(await client.closedWithin(ANSWER_BOUND_MS)).toBe(true);
    } finally {
      client.close();
    }
  });

  it('closes an idle keep-alive connection', async () => {
    const client = new RawClient(h.url);
    try {
      await client.connected;
      client.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expect((await client.answer()).status).toBe(200);
      expect(await client.closedWithin(ANSWER_BOUND_MS)).toBe(true);
    } finally {
      client.close();
    }
  });

  it('refuses connections beyond the cap', async () => {
    const held = [new RawClient(h.url), new RawClient(h.url), new RawClient(h.url)];
    const extra = new RawClient(h.url);
    try {
      for (const client of held) {
        await client.connected;
        // An unfinished request holds its connection open (keep-alive idling would end it).
        client.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      }
      await extra.connected.catch(() => {});
      extra.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      await expect(extra.answer()).rejects.toThrow(/closed without an answer/);
    } finally {
      for (const client of [...held, extra]) client.close();
    }
  });

  it('rejects a header timeout longer than the request timeout at boot', () => {
    expect(() => parseEnv({ HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_REQUEST_TIMEOUT_MS: '1000', DEV_AUTH: '1' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS/,
    );
  });
});

describe('/mcp authenticates before reading the body', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite' });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('answers an anonymous request 401 without waiting for its body', async () => {
    const client = new RawClient(h.url);
    try {
      await client.connected;
      // Announce a body and never send it: the answer must not depend on it.
      client.write(
        'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n',
      );
      const res = await client.answer();
      expectError(res, 'unauthenticated');
    } finally {
      client.close();
    }
  });
});

const TIMEOUT_MS = 300;

for (const driver of DRIVERS) {
  describe(`the operation deadline counts from the request's arrival (${driver})`, () => {
    let h: Harness;
    let ws: Awaited<ReturnType<Harness['workspace']>>;
    beforeAll(async () => {
      // svc_namespaces_create is outside the default (memory) tool set.
      h = await startHarness({ driver, timeoutMs: TIMEOUT_MS, env: { MCP_TOOLS: 'all' } });
      ws = await h.workspace();
    });
    afterAll(async () => {
      await h?.close();
    });

    async function namespaceNames(): Promise<string[]> {
      const listed = expectShape(await ws.api.get('/v1/namespaces'), 'namespaces.list');
      return listed.namespaces.map((n: { name: string }) => n.name);
    }

    /** The workspace's last commit sequence, read from the ledger itself. */
    async function headSequence(): Promise<number> {
      const head = await h.gateway.ledger.stores.commits.head(ws.id);
      return Number(head?.sequence ?? 0);
    }

    const transports = [
      {
        name: '/v1',
        path: '/v1/namespaces',
        body: (name: string) => JSON.stringify({ parent_id: null, name }),
        accept: 'application/json',
      },
      {
        name: '/graphql',
        path: '/graphql',
        body: (name: string) =>
          JSON.stringify({
            query: `mutation { createNamespace(input: {parentId: null, name: "${name}"}, idempotencyKey: "${freshKey()}") { namespace { id } } }`,
          }),
        accept: 'application/json',
      },
      {
        name: '/mcp',
        path: '/mcp',
        body: (name: string) =>
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: {
              name: 'svc_namespaces_create',
              arguments: { parent_id: null, name, idempotency_key: freshKey() },
            },
          }),
        accept: 'application/json, text/event-stream',
      },
    ];

    for (const transport of transports) {
      it(`${transport.name}: the same request sent at once executes (the control for the next test)`, async () => {
        const name = `prompt-${transport.name.replace('/', '')}`;
        const body = Buffer.from(transport.body(name), 'utf8');
        const before = await headSequence();
        const res = await rawRequest(
          h.url,
          Buffer.concat([
            Buffer.from(
              `POST ${transport.path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${await ws.owner.token()}\r\n` +
                `X-Service-Workspace: ${ws.id}\r\nIdempotency-Key: ${freshKey()}\r\nContent-Type: application/json\r\n` +
                `Accept: ${transport.accept}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
            ),
            body,
          ]),
        );
        expect(res.status, res.text).toBe(200);
        expect(res.text).not.toContain('"error');
        expect(await namespaceNames()).toContain(name);
        expect(await headSequence()).toBe(before + 1);
      });

      it(`${transport.name}: a body that finishes arriving after the deadline is 503 and never executes`, async () => {
        const name = `late-${transport.name.replace('/', '')}`;
        const body = Buffer.from(transport.body(name), 'utf8');
        const before = await headSequence();
        const client = new RawClient(h.url);
        try {
          await client.connected;
          client.write(
            `POST ${transport.path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${await ws.owner.token()}\r\n` +
              `X-Service-Workspace: ${ws.id}\r\nIdempotency-Key: ${freshKey()}\r\nContent-Type: application/json\r\n` +
              `Accept: ${transport.accept}\r\nContent-Length: ${body.length}\r\n\r\n`,
          );
          await sleep(TIMEOUT_MS * 2);
          client.write(body);
          const res = await client.answer();
          expectError(res, 'unavailable', { retryAfterSeconds: 1 });
          // Give a late execution the time to commit before looking (it must not happen at all).
          await sleep(500);
        } finally {
          client.close();
        }
        expect(await namespaceNames()).not.toContain(name);
        expect(await headSequence()).toBe(before);
      });
    }

    it('a write held past its deadline is rolled back before 503 is answered, and a retry executes once', async () => {
      const held = await namespaceNames();
      const before = await headSequence();
      // Produced for real: a transaction on the gateway's own ledger holds the workspace's head
      // row (Postgres: a row lock; PGlite: its single connection), so the write cannot commit in time.
      let release = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked = () => {};
      const lockTaken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const { sql } = await import('drizzle-orm');
      const holder = h.gateway.ledger.transaction(async (stores) => {
        await stores.db.execute(sql`select * from workspace_heads where workspace_id = ${ws.id} for update`);
        locked();
        await released;
      });
      await lockTaken;
      const key = freshKey();
      try {
        const pending = ws.api.post('/v1/namespaces', { parent_id: null, name: 'held' }, { idem: key });
        await sleep(TIMEOUT_MS * 3);
        release();
        await holder;
        expectError(await pending, 'unavailable', { retryAfterSeconds: 1 });
      } finally {
        release();
        await holder;
      }
      await sleep(300);
      expect(await namespaceNames()).toEqual(held);
      expect(await headSequence()).toBe(before);

      // Nothing was recorded under the key either: the retry executes, once.
      const retried = expectShape(
        await ws.api.post('/v1/namespaces', { parent_id: null, name: 'held' }, { idem: key }),
        'namespaces.create',
      );
      const again = await ws.api.post('/v1/namespaces', { parent_id: null, name: 'held' }, { idem: key });
      expect(again.body).toEqual(retried);
      expect((await namespaceNames()).filter((n) => n === 'held')).toHaveLength(1);
    });
  });
}
