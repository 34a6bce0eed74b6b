import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';

/**
 * /console over plain HTTP: a small `no-store` shell (it carries the dev token with DEV_AUTH=1)
 * naming a script and a stylesheet by content hash, served compressed, immutable and revalidated
 * with ETag/304 (the mechanism GraphiQL's assets use). CONSOLE=off answers `not_found` for all of it.
 */

async function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
  const response = await fetch(url, { method, headers: { 'accept-encoding': 'br', ...headers } });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

describe('/console over HTTP (pglite)', () => {
  let h: Harness;
  let off: Harness;

  beforeAll(async () => {
    [h, off] = await Promise.all([
      startHarness({ driver: 'pglite', env: { DEV_AUTH: '1' } }),
      startHarness({ driver: 'pglite', env: { CONSOLE: 'off' } }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([h?.close(), off?.close()]);
  });

  it('serves a small no-store shell and hashed, compressed, immutable assets', async () => {
    const page = await get(`${h.url}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('private, no-store');
    // What may run beside the token: the console's own script, from this origin, nothing inline.
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = page.body.toString('utf8');
    expect(html).toContain('"devToken":"ey'); // why the shell itself is never cached
    // The shell without its token stays within 2 KB.
    expect(Buffer.byteLength(html.replace(/"devToken":"[^"]+"/, '"devToken":null'))).toBeLessThan(2_048);
    const urls = [...html.matchAll(/\/console\/assets\/console\.([0-9a-f]{20})\.(js|css)/g)];
    expect(urls.map((m) => m[2]).sort()).toEqual(['css', 'js']);

    for (const [url, hash] of urls.map((m) => [m[0], m[1]] as const)) {
      // fetch decodes the body; the raw length is in content-length.
      const answer = await fetch(`${h.url}${url}`, { headers: { 'accept-encoding': 'br' } });
      const bytes = Buffer.from(await answer.arrayBuffer());
      expect(answer.status, url).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(answer.headers.get('content-encoding')).toBe('br');
      expect(Number(answer.headers.get('content-length'))).toBeLessThan(bytes.length);
      expect(
        crypto
          .createHash('sha256')
          .update(bytes)
          .digest('hex')
          .startsWith(hash ?? '-'),
      ).toBe(true);
      const etag = answer.headers.get('etag') ?? '';
      expect(etag).toBe(`"${hash}-br"`);
      const again = await get(`${h.url}${url}`, { 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
    }
    expect((await get(`${h.url}/console/assets/console.00000000000000000000.js`)).status).toBe(404);
    expect((await get(`${h.url}/console/other`)).status).toBe(404);
    const post = await get(`${h.url}/console`, {}, 'POST');
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('with CONSOLE=off neither the shell nor an asset is served', async () => {
    const page = await get(`${off.url}/console`);
    expect(page.status).toBe(404);
    expect(JSON.parse(page.body.toString('utf8')).error.code).toBe('not_found');
    const shell = (await get(`${h.url}/console`)).body.toString('utf8');
    const script = /\/console\/assets\/console\.[0-9a-f]{20}\.js/.exec(shell)?.[0] ?? '';
    expect((await get(`${off.url}${script}`)).status).toBe(404);
  });
});
