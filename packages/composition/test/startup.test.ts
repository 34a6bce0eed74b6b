import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PrivateRedis, redisClients } from '@tms/testkit/redis-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { composeDomain, domainEnvShape } from '../src/index';

// A Redis of the test's own, so that CLIENT LIST shows the connections of this start alone; the
// embedded ledger in a folder of its own, which one process may open at a time.
let redis: PrivateRedis;
let dataDir: string;

beforeAll(async () => {
  redis = await PrivateRedis.create();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-composition-'));
});

afterAll(async () => {
  await redis?.destroy();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The configuration of an embedded ledger whose rate limits are counted in that Redis. */
function configWith(variables: Record<string, string>) {
  return z.object(domainEnvShape).parse({
    DATA_DIR: dataDir,
    SEARCH_PROVIDER: 'none',
    EMBEDDER: 'none',
    RATE_LIMIT_REDIS_URL: redis.url(),
    ...variables,
  });
}

describe('composeDomain', () => {
  it('closes the Redis connection and the ledger it opened when the signing key file is missing', async () => {
    const missing = path.join(dataDir, 'no-such-key.pem');
    const failure = await composeDomain(configWith({ LEDGER_SIGNING_KEY_FILE: missing }), { holder: 'test' }).then(
      () => null,
      (error: Error) => error,
    );
    expect(failure?.message).toBe(`LEDGER_SIGNING_KEY_FILE: cannot read ${missing} (ENOENT)`);
    await expect.poll(() => redisClients(redis.url())).toEqual([]);
    // The embedded ledger admits one holder at a time, this process included: it was let go.
    const again = await composeDomain(configWith({}), { holder: 'test' });
    await again.close();
  });

  it('holds one Redis connection once started, and closes it with the rest', async () => {
    const keyFile = path.join(dataDir, 'ledger-key.pem');
    const { privateKey } = crypto.generateKeyPairSync('ed25519');
    fs.writeFileSync(keyFile, privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const composed = await composeDomain(configWith({ LEDGER_SIGNING_KEY_FILE: keyFile }), { holder: 'test' });
    try {
      expect(composed.rateLimiter).not.toBeNull();
      await expect.poll(() => redisClients(redis.url())).toHaveLength(1);
      expect((await composed.domain.ledgerKey()).publicJwk.crv).toBe('Ed25519');
    } finally {
      await composed.close();
    }
    await expect.poll(() => redisClients(redis.url())).toEqual([]);
  });
});
