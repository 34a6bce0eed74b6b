import { Writable } from 'node:stream';
import { Ledger } from '@tms/ledger';
import { createLogger } from '@tms/telemetry';
import { createTestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';

const SECRET = 'Ana told me her door code is 4471';

/**
 * A statement that fails with the secret bound as a parameter, logged as the gateway logs errors.
 * (A server message that quotes a value itself, such as a failed cast, is not covered here.)
 */
async function loggedFailure(ledger: Ledger): Promise<string> {
  const error = await ledger.handle.db.execute(sql`select ${SECRET} as text from no_such_table`).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  // Without redaction the error itself carries the value: the test could fail.
  expect(`${(error as Error).message} ${JSON.stringify(error)}`).toContain(SECRET);
  let out = '';
  const logger = createLogger(
    { service: 'test', level: 'info' },
    new Writable({
      write(chunk, _encoding, done) {
        out += String(chunk);
        done();
      },
    }),
  );
  logger.error({ err: error }, 'operation failed');
  return out;
}

describe('logs never carry the parameter values of a failed statement', () => {
  it('on PGlite', async () => {
    const ledger = await Ledger.open({ dataDir: 'memory://' });
    try {
      const line = await loggedFailure(ledger);
      expect(line).not.toContain(SECRET);
      expect(line).toContain('select $1 as text from no_such_table');
      expect(line).toContain('[Redacted]');
    } finally {
      await ledger.close();
    }
  });

  it('on Postgres', async () => {
    const database = await createTestDatabase('tms_log_redaction');
    const ledger = await Ledger.open({ databaseUrl: database.url });
    try {
      const line = await loggedFailure(ledger);
      expect(line).not.toContain(SECRET);
      expect(line).toContain('[Redacted]');
    } finally {
      await ledger.close();
      await database.drop();
    }
  });
});
