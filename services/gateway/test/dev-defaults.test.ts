import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnv } from '../src/env';
import { type Harness, startHarness } from './harness';
import { expectError } from './shapes';

/*
 * Safe defaults a newcomer gets without asking: the dev issuer's gateway listens on loopback
 * unless HOST says otherwise, and /metrics can leave the public port for a port of its own.
 */

describe('DEV_AUTH=1 listens on 127.0.0.1 unless HOST is set', () => {
  it('the parsed environment', () => {
    expect(parseEnv({ DEV_AUTH: '1' }).HOST).toBe('127.0.0.1');
    expect(parseEnv({ DEV_AUTH: '1', HOST: '0.0.0.0' }).HOST).toBe('0.0.0.0');
    expect(parseEnv({}).HOST).toBeUndefined();
  });

  it('the address the gateway listens on', { timeout: 240_000 }, async () => {
    const dev = await startHarness({ driver: 'pglite', env: { DEV_AUTH: '1', HOST: undefined } });
    const open = await startHarness({ driver: 'pglite', env: { HOST: undefined } });
    try {
      expect(dev.gateway.host).toBe('127.0.0.1');
      // Without DEV_AUTH and HOST: every interface, as before.
      expect(['::', '0.0.0.0']).toContain(open.gateway.host);
    } finally {
      await Promise.all([dev.close(), open.close()]);
    }
  });
});

describe('METRICS_PORT', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite', env: { METRICS_PORT: '0' } });
  });
  afterAll(() => h?.close());

  it('serves /metrics on its own port, and the API port answers /metrics not_found', async () => {
    const port = h.gateway.metricsPort;
    expect(port).toBeTypeOf('number');
    expect(port).not.toBe(h.gateway.port);
    const scraped = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await scraped.text()).toMatch(/^# TYPE tms_requests_total counter$/m);

    expectError(await h.api.get('/metrics'), 'not_found');
    // The API itself is unchanged.
    expect((await h.api.get('/healthz')).status).toBe(200);
  });

  it('the metrics port serves only /metrics', async () => {
    const base = `http://127.0.0.1:${h.gateway.metricsPort}`;
    for (const path of ['/healthz', '/readyz', '/v1/me', '/graphql', '/mcp', '/metrics/x']) {
      const res = await fetch(`${base}${path}`);
      const body = await res.json();
      expect(res.status, path).toBe(404);
      expect(body.error.code, path).toBe('not_found');
    }
    const post = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('must differ from PORT', () => {
    expect(() => parseEnv({ PORT: '9000', METRICS_PORT: '9000' })).toThrow(/METRICS_PORT: must differ from PORT/);
  });
});
