import { Writable } from 'node:stream';
import { Ledger } from '@tms/ledger';
import { createLogger } from '@tms/telemetry';
import { createTestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';

const SECRET = 'Ana told me her door code is 4471';

/** What `logger.error({ err: error })` writes, as the gateway logs errors. */
function logged(error: unknown): string {
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

/** The error of a statement that must fail; it carries the secret somewhere (or the test could not fail). */
async function failure(statement: Promise<unknown>): Promise<Error> {
  const error = await statement.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  const cause = (error as { cause?: unknown }).cause;
  expect(`${(error as Error).message} ${JSON.stringify(error)} ${JSON.stringify(cause)} ${String(cause)}`).toContain(
    SECRET,
  );
  return error as Error;
}

/**
 * Statements that fail with the secret in them, logged as the gateway logs errors (the driver's
 * error wrapped by Drizzle, and the driver's own): bound as a parameter, quoted back by a failed
 * cast, and quoted back in a unique violation's detail.
 */
async function loggedFailures(ledger: Ledger): Promise<string[]> {
  const db = ledger.handle.db;
  const lines: string[] = [];
  const bound = await failure(db.execute(sql`select ${SECRET} as text from no_such_table`));
  lines.push(logged(bound));
  const cast = await failure(db.execute(sql`select ${SECRET}::int as n`));
  lines.push(logged(cast), logged((cast as { cause?: unknown }).cause));
  await db.execute(sql`create temporary table if not exists secrets (value text primary key)`);
  await db.execute(sql`insert into secrets values (${SECRET}) on conflict do nothing`);
  const duplicate = await failure(db.execute(sql`insert into secrets values (${SECRET})`));
  lines.push(logged(duplicate), logged((duplicate as { cause?: unknown }).cause));
  expect(lines.join('\n')).toContain('select $1 as text from no_such_table');
  return lines;
}

async function expectRedacted(ledger: Ledger): Promise<void> {
  for (const line of await loggedFailures(ledger)) {
    expect(line).not.toContain(SECRET);
    expect(line).toContain('[Redacted]');
  }
}

describe('logs never carry the values of a failed statement', () => {
  it('on PGlite', async () => {
    const ledger = await Ledger.open({ dataDir: 'memory://' });
    try {
      await expectRedacted(ledger);
    } finally {
      await ledger.close();
    }
  });

  it('on Postgres', async () => {
    const database = await createTestDatabase('tms_log_redaction');
    const ledger = await Ledger.open({ databaseUrl: database.url });
    try {
      await expectRedacted(ledger);
    } finally {
      await ledger.close();
      await database.drop();
    }
  });
});
