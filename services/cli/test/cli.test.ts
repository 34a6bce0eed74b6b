import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ledger } from '@tms/ledger';
import { cliLines, createTestDatabase, runSvc as svc, type TestDatabase } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ISSUER = 'https://id.example.test/';

// Each call starts a fresh process (about 2-3 s through npx and tsx, more on a busy machine).
const SLOW = { timeout: 300_000 };

describe('svc (operator CLI) on Postgres', SLOW, () => {
  let db: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase('tms_cli');
    // The gateway's session issuer, which `svc admin enroll` checks its --issuer against.
    env = {
      DATABASE_URL: db.url,
      SESSION_ISSUER: ISSUER,
      SESSION_JWKS_URI: `${ISSUER}jwks.json`,
      SESSION_AUDIENCE: 'tms',
    };
  });
  afterAll(() => db?.drop());

  it('migrate exits 0 on a fresh database and makes it ready; a second run is a no-op', async () => {
    const before = await Ledger.open({ databaseUrl: db.url });
    try {
      expect(await before.ready()).toBe(false);
    } finally {
      await before.close();
    }

    const first = await svc(['migrate'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/migrations applied/);

    const ledger = await Ledger.open({ databaseUrl: db.url });
    try {
      expect(await ledger.ready()).toBe(true);
    } finally {
      await ledger.close();
    }

    const again = await svc(['migrate'], env);
    expect(again.code, again.stderr).toBe(0);
  });

  // Once migrated, the remaining commands are independent of each other.
  describe.concurrent('after migrate', () => {
    it('admin enroll exits 0 and is idempotent', async () => {
      const subject = `alice-${process.pid}`;
      const first = await svc(['admin', 'enroll', '--issuer', ISSUER, '--subject', subject], env);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain(subject);

      const second = await svc(['admin', 'enroll', '--issuer', ISSUER, '--subject', subject], env);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/already enrolled/);

      const ledger = await Ledger.open({ databaseUrl: db.url });
      try {
        expect(await ledger.stores.directory.isEnrolled(ISSUER, subject)).toBe(true);
        expect(await ledger.stores.directory.isEnrolled(ISSUER, `${subject}-other`)).toBe(false);
      } finally {
        await ledger.close();
      }
    });

    it('admin actor prints one act_ id, the same on every call', async () => {
      const subject = `bob-${process.pid}`;
      const first = await svc(['admin', 'actor', '--issuer', ISSUER, '--subject', subject], env);
      expect(first.code, first.stderr).toBe(0);
      const id = first.stdout.trim();
      expect(id).toMatch(/^act_[0-9a-z]+$/);

      const second = await svc(['admin', 'actor', '--issuer', ISSUER, '--subject', subject], env);
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout.trim()).toBe(id);

      const ledger = await Ledger.open({ databaseUrl: db.url });
      try {
        expect((await ledger.stores.directory.findActor(ISSUER, subject))?.id).toBe(id);
      } finally {
        await ledger.close();
      }
    });

    it('admin enroll without --subject exits non-zero with a one-line reason first on stderr', async () => {
      const run = await svc(['admin', 'enroll', '--issuer', ISSUER], env);
      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      const [reason] = cliLines(run.stderr);
      expect(reason).toMatch(/^svc: .*--subject/);
    });

    it('a refused request prints the invalid_input detail in its one-line reason', async () => {
      const args = ['admin', 'service-key', 'issue', '--workspace', 'ws_absent', '--name', 'x'];
      const run = await svc([...args, '--capabilities', 'read,fly'], env);
      // A value the catalog refuses is a wrong argument: exit 2, the reason, then the usage.
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(cliLines(run.stderr)[0]).toBe(
        'svc: invalid_input: body.capabilities[1]: expected one of read, observe, verify, correct, forget, admin',
      );
      expect(run.stderr).toContain('Usage: svc admin service-key issue [options]');
    });

    it('an unknown command exits non-zero and names it', async () => {
      const [run, admin] = await Promise.all([svc(['frobnicate'], env), svc(['admin', 'frobnicate'], env)]);
      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(cliLines(run.stderr)[0]).toMatch(/^svc: .*frobnicate/);
      expect(admin.code).not.toBe(0);
      expect(cliLines(admin.stderr)[0]).toMatch(/^svc: .*frobnicate/);
    });
  });
});

describe.concurrent('svc token (dev issuer)', SLOW, () => {
  let dataDir: string;

  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-cli-'));
  });
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('refuses without DEV_AUTH=1', async () => {
    const run = await svc(['token'], { DATA_DIR: dataDir });
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    const lines = cliLines(run.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^svc: .*DEV_AUTH=1/);
  });

  it('refuses when NODE_ENV=production even with DEV_AUTH=1', async () => {
    const run = await svc(['token'], { DATA_DIR: dataDir, DEV_AUTH: '1', NODE_ENV: 'production' });
    expect(run.code).not.toBe(0);
    expect(cliLines(run.stderr)[0]).toMatch(/^svc: .*production/);
  });

  it('prints a JWT for the dev user with DEV_AUTH=1, signed by the key it keeps in DATA_DIR', async () => {
    const run = await svc(['token'], { DATA_DIR: dataDir, DEV_AUTH: '1' });
    expect(run.code, run.stderr).toBe(0);
    const token = run.stdout.trim();
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const [header, payload] = token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
    expect(header).toMatchObject({ alg: 'ES256', typ: 'JWT' });
    expect(payload).toMatchObject({ iss: 'urn:tms:dev-auth', sub: 'dev-admin' });
    expect(payload.exp).toBeGreaterThan(Date.now() / 1000);
    expect(fs.existsSync(path.join(dataDir, 'dev-auth-key.json'))).toBe(true);

    // The key persists: a second token carries the same key id.
    const again = await svc(['token'], { DATA_DIR: dataDir, DEV_AUTH: '1' });
    expect(again.code, again.stderr).toBe(0);
    const kid = (t: string) => JSON.parse(Buffer.from(t.split('.')[0] ?? '', 'base64url').toString('utf8')).kid;
    expect(kid(again.stdout.trim())).toBe(header.kid);
  });
});
