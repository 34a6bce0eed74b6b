import { createTestDatabase, type TestDatabase, TestIssuer } from '@tms/testkit';
import { connectSql } from '@tms/testkit/postgres-server';
import { delay, type GatewayProcess, startGatewayProcess } from '@tms/testkit/processes';
import { PrivateRedis, redisKeyPrefix, redisKeys } from '@tms/testkit/redis-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTargets, prepareLedger, seriousOutput, verifyLedger, Workload } from './workload';

// The rate limits' Redis (RATE_LIMIT_REDIS_URL) stopped and started again, then frozen, under
// load: a private redis-server of this test's own, with a password. Nothing is lost and nothing
// answers 5xx: while Redis is gone or hangs, the gateway counts the limits in process; it warns
// once per outage (naming the URL without the password) and says once when Redis answers again.
const STEP_ANSWERS = 20;
const PHASE_TIMEOUT_MS = 60_000;
const PASSWORD = 'redis-password-of-the-test';

describe('the rate limits’ Redis restarted and frozen under load', () => {
  let issuer: TestIssuer;
  let database: TestDatabase;
  let redis: PrivateRedis;
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    issuer = await TestIssuer.start();
    database = await createTestDatabase('tms_redis_restart');
    redis = await PrivateRedis.create({ password: PASSWORD });
  });

  afterAll(async () => {
    await gateway?.stop();
    await issuer?.close();
    await database?.drop();
    await redis?.destroy();
  });

  it('loses no request, answers no 5xx, and logs the fallback and the recovery once each', async () => {
    const subject = await prepareLedger(database.url, issuer);
    const keyPrefix = redisKeyPrefix('restart');
    gateway = await startGatewayProcess('redis-restart', {
      DATABASE_URL: database.url,
      ...issuer.env(),
      // Shared, and far above what the load spends: no call is refused here.
      RATE_LIMITS: '*=1000000/60',
      RATE_LIMIT_REDIS_URL: redis.url(),
      RATE_LIMIT_REDIS_PREFIX: keyPrefix,
      // Past the stalls of a loaded test machine: only the freeze below should time out.
      RATE_LIMIT_REDIS_TIMEOUT_MS: '1000',
    });
    const running = gateway;
    const token = await issuer.sessionToken(subject, { expiresIn: 3600 });
    const targets = await createTargets(running.url, token, 2);
    const workload = new Workload({
      url: () => running.url,
      targets,
      writersPerTarget: 2,
      readers: 2,
      networkErrorsExpected: false,
    }).start();

    const answered = () => workload.tally.ok + workload.tally.unavailable + workload.anomalies.length;
    const storeLines = (level: 'warn' | 'info') =>
      running.logs.filter(
        (entry) => entry.rate_limit_store !== undefined && entry.level === (level === 'warn' ? 40 : 30),
      );
    async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
      const deadline = Date.now() + PHASE_TIMEOUT_MS;
      while (!(await condition())) {
        if (running.exit) throw new Error(`the gateway exited waiting for ${what}:\n${running.output.join('\n')}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await delay(20);
      }
    }
    /** Wait for STEP_ANSWERS more answers. */
    const moreAnswers = async (what: string) => {
      const before = answered();
      await until(what, () => answered() >= before + STEP_ANSWERS);
    };
    const keysInRedis = async () => (await redisKeys(redis.url(), keyPrefix)).length;

    try {
      await moreAnswers('answers before the restart');
      expect(await keysInRedis()).toBeGreaterThan(0);

      // Stopped: one warning, and the load goes on, counted in process.
      await redis.stop();
      await until('the fallback warning', () => storeLines('warn').length > 0);
      await moreAnswers('answers while Redis is down');
      await redis.start();
      await until('the recovery line', () => storeLines('info').length > 0);
      // The restarted Redis is empty (no persistence): the buckets are made again there.
      await moreAnswers('answers after the restart');
      expect(await keysInRedis()).toBeGreaterThan(0);
      expect(storeLines('warn')).toHaveLength(1);
      expect(storeLines('info')).toHaveLength(1);

      // Frozen: commands time out, the load goes on, one more warning; then one more recovery.
      redis.pause();
      try {
        await until('the second fallback warning', () => storeLines('warn').length > 1);
        await moreAnswers('answers while Redis hangs');
      } finally {
        redis.resume();
      }
      await until('the second recovery line', () => storeLines('info').length > 1);
      await moreAnswers('answers after Redis woke');
    } finally {
      await workload.stop();
    }

    expect(running.exit).toBeNull();
    expect(seriousOutput(running)).toEqual([]);
    expect(workload.anomalies).toEqual([]);
    expect(workload.unresolved).toEqual([]);
    expect(workload.tally.unavailable).toBe(0);
    expect(workload.tally.networkErrors).toBe(0);

    const warnings = storeLines('warn');
    expect(warnings).toHaveLength(2);
    expect(storeLines('info')).toHaveLength(2);
    expect(warnings[1]?.reason).toMatch(/timed out/i);
    for (const line of [...warnings, ...storeLines('info')]) {
      expect(line.rate_limit_store).toBe(`redis://127.0.0.1:${redis.port}`);
      expect(JSON.stringify(line)).not.toContain(PASSWORD);
    }
    expect(running.output.join('\n')).not.toContain(PASSWORD);

    const sql = connectSql(database.url);
    try {
      expect(await verifyLedger(sql, running.url, workload)).toEqual([]);
    } finally {
      await sql.end({ timeout: 1 });
    }
    console.info(
      `Redis restarted and frozen: ${workload.acknowledged.length} acknowledged writes, answers ${JSON.stringify(workload.tally)}`,
    );
  });
});
