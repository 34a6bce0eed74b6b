import crypto from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseCoding, matchesIfNoneMatch } from '../src/http/hashed-assets';
import { type Harness, startHarness } from './harness';

/**
 * GraphiQL over plain HTTP (node:http, no cache of its own): the page is a small `no-store`
 * shell; its assets are named by content hash, compressed, cacheable for a year and
 * revalidated with ETag/304. Every byte the server sends is counted on the sockets.
 */

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A client on its own keep-alive agent that counts the bytes its sockets received. */
class CountingClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  private readonly sockets = new Set<Socket>();
  private readBefore = 0;

  constructor(private readonly baseUrl: string) {}

  request(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = http.request(new URL(path, this.baseUrl), { method, headers, agent: this.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      });
      req.on('socket', (socket: Socket) => this.sockets.add(socket));
      req.on('error', reject);
      req.end();
    });
  }

  /** Bytes received (status lines, headers and bodies) since the last call. */
  takeBytesRead(): number {
    let total = 0;
    for (const socket of this.sockets) total += socket.bytesRead;
    const delta = total - this.readBefore;
    this.readBefore = total;
    return delta;
  }

  close(): void {
    this.agent.destroy();
  }
}

const HTML = { accept: 'text/html,application/xhtml+xml' };
const BROWSER_CODINGS = { 'accept-encoding': 'gzip, deflate, br, zstd' };

function assetUrls(html: string): string[] {
  return [...html.matchAll(/\/graphql\/assets\/[A-Za-z0-9._-]+/g)].map((m) => m[0]);
}

function decode(answer: Answer): Buffer {
  const coding = answer.headers['content-encoding'];
  if (coding === 'br') return zlib.brotliDecompressSync(answer.body);
  if (coding === 'gzip') return zlib.gunzipSync(answer.body);
  expect(coding).toBeUndefined();
  return answer.body;
}

const hashInName = (url: string) => /\.([0-9a-f]{20})\.[a-z]+$/.exec(url)?.[1];

describe('GraphiQL assets over HTTP (pglite, DEV_AUTH=1)', () => {
  let h: Harness;
  let client: CountingClient;

  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite', env: { DEV_AUTH: '1' } });
    client = new CountingClient(h.url);
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await h?.close();
  });

  it('a first load fetches compressed, immutable assets; a second, conditional one moves under 100 KB', async () => {
    // First load: the shell, then every asset it names, as a browser with an empty cache would.
    const page = await client.request('/graphql', { ...HTML, ...BROWSER_CODINGS });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('private, no-store');
    expect(page.body.length).toBeLessThan(8_192);
    const html = page.body.toString('utf8');
    expect(html).toContain('Bearer ey'); // the dev token: why the shell itself is never cached
    const urls = assetUrls(html);
    expect(urls.filter((u) => u.endsWith('.js'))).toHaveLength(4); // the bundle and three workers
    expect(urls.some((u) => u.endsWith('.css'))).toBe(true);
    expect(urls.some((u) => u.endsWith('.ico'))).toBe(true);

    const etags = new Map<string, string>();
    let assetBytes = 0;
    let decodedBytes = 0;
    for (const url of urls) {
      const answer = await client.request(url, BROWSER_CODINGS);
      expect(answer.status, url).toBe(200);
      expect(answer.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(answer.headers['content-encoding']).toBe('br');
      expect(answer.headers.vary).toBe('Accept-Encoding');
      expect(answer.headers['x-request-id']).toMatch(/^req_/);
      expect(Number(answer.headers['content-length'])).toBe(answer.body.length);
      const bytes = decode(answer);
      // The name is the content's hash: a changed asset gets a new URL.
      expect(
        crypto
          .createHash('sha256')
          .update(bytes)
          .digest('hex')
          .startsWith(hashInName(url) ?? '-'),
      ).toBe(true);
      expect(answer.body.length).toBeLessThan(bytes.length);
      etags.set(url, answer.headers.etag as string);
      assetBytes += answer.body.length;
      decodedBytes += bytes.length;
    }
    expect(decodedBytes).toBeGreaterThan(8_000_000); // the ~9 MB GraphiQL used to inline on every load
    expect(assetBytes).toBeLessThan(decodedBytes / 3);
    const firstLoad = client.takeBytesRead();
    expect(firstLoad).toBeGreaterThan(assetBytes);

    // Second load with a warm cache: the shell again, and a conditional request per asset.
    const again = await client.request('/graphql', { ...HTML, ...BROWSER_CODINGS });
    expect(again.status).toBe(200);
    for (const url of assetUrls(again.body.toString('utf8'))) {
      const etag = etags.get(url);
      expect(etag, `${url} is the same URL as on the first load`).toBeDefined();
      const answer = await client.request(url, { ...BROWSER_CODINGS, 'if-none-match': etag as string });
      expect(answer.status, url).toBe(304);
      expect(answer.body.length).toBe(0);
      expect(answer.headers.etag).toBe(etag);
      expect(answer.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    const secondLoad = client.takeBytesRead();
    console.info(`GraphiQL over HTTP: first load ${firstLoad} bytes, second (conditional) load ${secondLoad} bytes`);
    expect(secondLoad).toBeLessThan(100_000);
    expect(secondLoad).toBeGreaterThan(again.body.length);
  }, 120_000);

  it('gzip and identity are separate representations of the same bytes, each with its own ETag', async () => {
    const [script] = assetUrls((await client.request('/graphql', HTML)).body.toString('utf8'));
    if (!script) throw new Error('no asset on the page');
    const br = await client.request(script, { 'accept-encoding': 'br' });
    const gz = await client.request(script, { 'accept-encoding': 'gzip' });
    const plain = await client.request(script, {});
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(decode(gz).equals(decode(br))).toBe(true);
    expect(plain.body.equals(decode(br))).toBe(true);
    expect(new Set([br.headers.etag, gz.headers.etag, plain.headers.etag]).size).toBe(3);
    // A brotli validator does not revalidate the gzip representation.
    const cross = await client.request(script, {
      'accept-encoding': 'gzip',
      'if-none-match': br.headers.etag as string,
    });
    expect(cross.status).toBe(200);
    expect(cross.headers['content-encoding']).toBe('gzip');
    // HEAD: the same headers, no body.
    const head = await client.request(script, { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(br.headers['content-length']);
    expect(head.body.length).toBe(0);
  }, 120_000);

  it('an unknown asset name or hash is 404 not_found; other methods are 405 with Allow', async () => {
    const [script] = assetUrls((await client.request('/graphql', HTML)).body.toString('utf8'));
    if (!script) throw new Error('no asset on the page');
    const staleHash = script.replace(/\.[0-9a-f]{20}\./, `.${'0'.repeat(20)}.`);
    for (const path of [
      staleHash,
      '/graphql/assets/graphiql.js',
      '/graphql/assets/',
      '/graphql/assets/%2e%2e%2fgraphql',
    ]) {
      const answer = await client.request(path, BROWSER_CODINGS);
      expect(answer.status, path).toBe(404);
      expect(JSON.parse(answer.body.toString('utf8')).error.code).toBe('not_found');
      expect(answer.headers['cache-control']).toBe('private, no-store');
    }
    const post = await client.request(script, {}, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(JSON.parse(post.body.toString('utf8')).error.code).toBe('method_not_allowed');
  }, 60_000);

  it('with GRAPHIQL=0 neither the page nor its assets are served', async () => {
    const [script] = assetUrls((await client.request('/graphql', HTML)).body.toString('utf8'));
    if (!script) throw new Error('no asset on the page');
    expect((await client.request(script)).status).toBe(200);
    const off = await startHarness({ driver: 'pglite', env: { GRAPHIQL: '0' } });
    const offClient = new CountingClient(off.url);
    try {
      const answer = await offClient.request(script);
      expect(answer.status).toBe(404);
      expect(JSON.parse(answer.body.toString('utf8')).error.code).toBe('not_found');
      const page = await offClient.request('/graphql', HTML);
      expect(page.headers['content-type']).not.toContain('text/html');
    } finally {
      offClient.close();
      await off.close();
    }
  }, 120_000);
});

describe('content negotiation', () => {
  it('chooses the acceptable coding of highest weight, brotli first on a tie', () => {
    expect(chooseCoding('gzip, deflate, br, zstd')).toBe('br');
    expect(chooseCoding('gzip, br;q=0.5')).toBe('gzip');
    expect(chooseCoding('br;q=0, gzip')).toBe('gzip');
    expect(chooseCoding('br;q=0, gzip;q=0')).toBe('identity');
    expect(chooseCoding('*')).toBe('br');
    expect(chooseCoding('*;q=0.1, br;q=0')).toBe('gzip');
    expect(chooseCoding('deflate')).toBe('identity');
    expect(chooseCoding('')).toBe('identity');
    expect(chooseCoding(undefined)).toBe('identity');
    expect(chooseCoding('GZIP')).toBe('gzip');
  });

  it('If-None-Match matches the same tag, weak or strong, in a list, or *', () => {
    const etag = '"abc-br"';
    expect(matchesIfNoneMatch('"abc-br"', etag)).toBe(true);
    expect(matchesIfNoneMatch('W/"abc-br"', etag)).toBe(true);
    expect(matchesIfNoneMatch('"x", "abc-br"', etag)).toBe(true);
    expect(matchesIfNoneMatch('*', etag)).toBe(true);
    expect(matchesIfNoneMatch('"abc"', etag)).toBe(false);
    expect(matchesIfNoneMatch('"abc-gzip"', etag)).toBe(false);
    expect(matchesIfNoneMatch(undefined, etag)).toBe(false);
  });
});
