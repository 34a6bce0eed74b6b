import { spawn } from 'node:child_process';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// postgres.js 3.4.9 is patched (patches/postgres@3.4.9.patch, porsager/postgres#1208): a write
// on a connection whose backend is gone must reject the caller's query with CONNECTION_CLOSED,
// never throw from a timer callback and end the process. The scenarios run in a child process
// (test/fixtures/terminated-backend.mjs) so that such a crash shows as its exit, not as an
// error the test runner swallows.
const FIXTURE = path.join(import.meta.dirname, 'fixtures/terminated-backend.mjs');
const TYPES_FIXTURE = path.join(import.meta.dirname, 'fixtures/types-query-cancelled.mjs');
const BUFFERED_WRITE_FIXTURE = path.join(import.meta.dirname, 'fixtures/write-buffered-at-close.mjs');

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runFixture(databaseUrl: string, fixture = FIXTURE): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fixture, databaseUrl], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('postgres.js when a backend is terminated under its connection', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('rejects with CONNECTION_CLOSED, keeps the process alive and the pool serving', async () => {
    const run = await runFixture(database.url);
    expect(run.stderr).not.toMatch(/TypeError|reading 'write'/);
    expect({ code: run.code, signal: run.signal }, run.stderr).toEqual({ code: 0, signal: null });

    const report = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const closed = { code: 'CONNECTION_CLOSED', message: expect.stringMatching(/^write CONNECTION_CLOSED /) };
    expect(report).toEqual([
      // The transaction's statement and postgres.js's own ROLLBACK on the dead connection.
      { scenario: 'transaction', ...closed },
      // The statement in flight, then the next one written on the reserved, dead connection.
      { scenario: 'reserved', first: closed, next: closed },
      // A new session serves; the dead backend's FATAL does not fail its first query.
      { scenario: 'after', one: 1 },
    ]);
  });

  it("keeps the process alive when a new connection's own array-types query fails", async () => {
    const run = await runFixture(database.url, TYPES_FIXTURE);
    expect({ code: run.code, signal: run.signal }, run.stderr).toEqual({ code: 0, signal: null });
    const [answer, alive] = run.stdout.trim().split('\n');
    // The caller's query meets the same 1 ms timeout, or (on a fast enough server) succeeds.
    expect([JSON.stringify({ code: '57014' }), JSON.stringify({ one: 1 })]).toContain(answer);
    expect(alive).toBe('alive');
  });

  it("sends the next session's writes after a socket closed with a write buffered", async () => {
    const run = await runFixture(database.url, BUFFERED_WRITE_FIXTURE);
    expect({ code: run.code, signal: run.signal }, run.stderr).toEqual({ code: 0, signal: null });
    const rounds = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { round: number; onClose: string[]; after: string[] });
    expect(rounds).toHaveLength(5);
    // The scenario happened: the query sent from the first close was buffered on the second
    // connection when its socket closed (it fails with it; unpatched, CONNECT_TIMEOUT follows).
    expect(rounds.some((round) => round.onClose.includes('CONNECTION_CLOSED'))).toBe(true);
    for (const round of rounds) {
      expect(round.onClose, `round ${round.round}`).toEqual([expect.stringMatching(/^(answered|CONNECTION_CLOSED)$/)]);
      // Unpatched, the connection that closed with the write buffered never sends its startup.
      expect(round.after, `round ${round.round}`).toEqual(['answered', 'answered', 'answered', 'answered']);
    }
  });
});
