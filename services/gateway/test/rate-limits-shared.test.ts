import crypto from 'node:crypto';
import { Ledger } from '@tms/ledger';
import { ApiClient, createTestDatabase, type TestDatabase, TestIssuer } from '@tms/testkit';
import { type GatewayProcess, startGatewayProcess } from '@tms/testkit/processes';
import { redisKeyPrefix, SHARED_REDIS_URL } from '@tms/testkit/redis-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './shapes';

// RATE_LIMIT_REDIS_URL: two real gateway processes over one Postgres database and one Redis
// (the shared server, under a key prefix of this test's own) count one budget per principal and
// operation, whichever process a call reaches.
const LIMIT = 4;
const RATE_LIMITS = `*=1000/60,memories.get=${LIMIT}/60`;

describe('rate limits shared in Redis by two gateway processes', () => {
  let database: TestDatabase;
  let issuer: TestIssuer;
  const gateways: GatewayProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    issuer = await TestIssuer.start();
    database = await createTestDatabase('tms_rate_shared');
    const ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: 1 });
    try {
      await ledger.migrate();
    } finally {
      await ledger.close();
    }
    env = {
      DATABASE_URL: database.url,
      ...issuer.env(),
      RATE_LIMITS,
      RATE_LIMIT_REDIS_URL: SHARED_REDIS_URL,
      RATE_LIMIT_REDIS_PREFIX: redisKeyPrefix('gateways'),
      // A loaded test machine must not make either process fall back to counting alone.
      RATE_LIMIT_REDIS_TIMEOUT_MS: '2000',
    };
    gateways.push(...(await Promise.all([startGatewayProcess('A', env), startGatewayProcess('B', env)])));
  }, 180_000);

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await issuer?.close();
    await database?.drop();
  }, 60_000);

  /** A freshly enrolled principal with a workspace and one memory in it, made on gateway A. */
  async function principalWithMemory(): Promise<{ token: string; workspace: string; memory: string }> {
    const subject = `limited-${crypto.randomBytes(4).toString('hex')}`;
    const ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: 1 });
    try {
      await ledger.stores.directory.enroll(issuer.sessionIssuer, subject, Date.now() / 1000);
    } finally {
      await ledger.close();
    }
    const token = await issuer.sessionToken(subject);
    const [a] = gateways as [GatewayProcess];
    const created = await new ApiClient(a.url, token).post('/v1/workspaces', { name: 'shared limits' });
    expect(created.status, created.text).toBe(200);
    const api = new ApiClient(a.url, token, created.body.workspace.id);
    const ns = await api.post('/v1/namespaces', { parent_id: null, name: 'limits' });
    expect(ns.status, ns.text).toBe(200);
    const memory = await api.post('/v1/memories', {
      namespace_id: ns.body.namespace.id,
      kind: 'claim',
      text: 'One budget across gateways.',
      valid_from: 0,
    });
    expect(memory.status, memory.text).toBe(200);
    return { token, workspace: created.body.workspace.id, memory: memory.body.memory.id };
  }

  it('refuses the (limit+1)th call of a principal spread over both processes with 429 and Retry-After', async () => {
    const alice = await principalWithMemory();
    const bob = await principalWithMemory();
    const [a, b] = gateways as [GatewayProcess, GatewayProcess];
    const on = (gateway: GatewayProcess, who: { token: string; workspace: string }) =>
      new ApiClient(gateway.url, who.token, who.workspace);

    // Alternating A, B, A, B: each process alone has seen only half the limit.
    for (let i = 0; i < LIMIT; i += 1) {
      const res = await on(i % 2 === 0 ? a : b, alice).get(`/v1/memories/${alice.memory}`);
      expect(res.status, `call ${i + 1}: ${res.text}`).toBe(200);
    }
    for (const gateway of [a, b]) {
      const refused = await on(gateway, alice).get(`/v1/memories/${alice.memory}`);
      expect(refused.status, refused.text).toBe(429);
      const seconds = refused.body.error.retry_after_seconds;
      // LIMIT per 60 s: a token is back within 60 / LIMIT seconds.
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(60 / LIMIT);
      expectError(refused, 'rate_limited', { retryAfterSeconds: seconds });
      expect(refused.headers.get('retry-after')).toBe(String(seconds));
    }

    // Bob's budget is his own, and so is each operation's.
    for (let i = 0; i < LIMIT; i += 1) {
      expect((await on(i % 2 === 0 ? b : a, bob).get(`/v1/memories/${bob.memory}`)).status).toBe(200);
    }
    expect((await on(b, alice).get('/v1/me')).status).toBe(200);

    // Neither process fell back to counting alone.
    for (const gateway of gateways) {
      expect(gateway.logs.filter((entry) => entry.rate_limit_store !== undefined)).toEqual([]);
    }
  });
});
