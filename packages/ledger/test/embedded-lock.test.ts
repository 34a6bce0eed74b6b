import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireEmbeddedLock, EmbeddedLedgerLockedError, type LockHolder } from '../src/embedded-lock';
import { Ledger } from '../src/ledger';

// The embedded PGlite folder belongs to one process at a time (decisions §9). These tests take
// the lock in this process and in real child processes; `services/cli/test/embedded-lock.test.ts`
// covers the gateway and every `svc` command.
const ROOT = path.resolve(import.meta.dirname, '../../..');
const RACER = path.join(import.meta.dirname, 'lock-racer.ts');
const hasProc = fs.existsSync('/proc/self/stat');

const folders: string[] = [];
function freshDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-lock-'));
  folders.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of folders.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** Every path under `dir` (the refused opener must create none). */
function tree(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).sort();
}

/** A pid that no process has now: a child that already exited (and was reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

function writeLock(folder: string, holder: Partial<LockHolder>): void {
  const record: LockHolder = {
    pid: 1,
    role: 'gateway',
    startedAt: '2026-01-01T00:00:00.000Z',
    hostname: os.hostname(),
    bootId: null,
    processStart: null,
    nonce: 'n',
    ...holder,
  };
  fs.writeFileSync(`${folder}.lock`, JSON.stringify(record));
}

async function count(ledger: Ledger): Promise<number> {
  const result = await ledger.handle.db.execute<{ n: number }>(sql`select count(*)::int as n from lock_probe`);
  const rows = (result as unknown as { rows: { n: number }[] }).rows;
  return rows[0]?.n ?? -1;
}

describe('the embedded ledger lock', { timeout: 120_000 }, () => {
  it('refuses a second opener of a held folder at once, naming the holder, and creates nothing', async () => {
    const folder = path.join(freshDataDir(), 'pglite');
    const first = await Ledger.open({ dataDir: folder, holder: 'gateway' });
    try {
      await first.handle.db.execute(sql`create table lock_probe (n int)`);
      await first.handle.db.execute(sql`insert into lock_probe values (1)`);
      const before = tree(path.dirname(folder));
      expect(before).toContain('pglite.lock');

      const refusal = await Ledger.open({ dataDir: folder, holder: 'svc admin' }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(EmbeddedLedgerLockedError);
      const message = (refusal as Error).message;
      expect(message).toBe(
        `the embedded ledger at ${fs.realpathSync(folder)} is in use by pid ${process.pid} (gateway, started ${
          (refusal as EmbeddedLedgerLockedError).holder?.startedAt
        }); stop it or set DATABASE_URL`,
      );
      expect(message).not.toContain('\n');
      expect(tree(path.dirname(folder))).toEqual(before);
      // The holder is untouched and still works.
      expect(await count(first)).toBe(1);
    } finally {
      await first.close();
    }
    // Released on close: the next opener gets the folder and its data.
    expect(fs.existsSync(`${folder}.lock`)).toBe(false);
    const again = await Ledger.open({ dataDir: folder });
    try {
      expect(await count(again)).toBe(1);
    } finally {
      await again.close();
    }
  });

  it('covers every spelling of the folder (relative, through a symlink)', async () => {
    const base = freshDataDir();
    const folder = path.join(base, 'pglite');
    const lock = acquireEmbeddedLock(folder, 'gateway');
    try {
      fs.symlinkSync(base, `${base}-link`);
      folders.push(`${base}-link`);
      expect(() => acquireEmbeddedLock(path.relative(process.cwd(), folder), 'svc')).toThrow(EmbeddedLedgerLockedError);
      fs.mkdirSync(folder);
      expect(() => acquireEmbeddedLock(path.join(`${base}-link`, 'pglite'), 'svc')).toThrow(EmbeddedLedgerLockedError);
    } finally {
      lock.release();
    }
  });

  it('takes over a lock whose holder is gone', () => {
    const folder = path.join(freshDataDir(), 'pglite');
    writeLock(folder, { pid: deadPid() });
    const lock = acquireEmbeddedLock(folder, 'gateway');
    try {
      expect(JSON.parse(fs.readFileSync(`${folder}.lock`, 'utf8')).pid).toBe(process.pid);
    } finally {
      lock.release();
    }
  });

  it.runIf(hasProc)('takes over a lock whose pid now belongs to another process (pid reuse)', () => {
    const folder = path.join(freshDataDir(), 'pglite');
    // A live pid (this very process) with a start time that is not its own.
    writeLock(folder, { pid: process.pid, processStart: '1' });
    acquireEmbeddedLock(folder, 'gateway').release();
    // ... and a record from another boot.
    writeLock(folder, { pid: process.pid, bootId: 'another-boot' });
    acquireEmbeddedLock(folder, 'gateway').release();
  });

  it.runIf(hasProc)('takes over a lock whose holder exited but was not reaped yet (a zombie)', async () => {
    // `sh` starts a short child, then becomes a `sleep` that never waits for it: the child
    // stays a zombie until the sleep ends (as a holder killed with its parent stays one until
    // the init process reaps it).
    const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const pid = Number(
        await new Promise<string>((resolve) => parent.stdout?.once('data', (d) => resolve(String(d)))),
      );
      const start = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[19];
      const stateOf = () => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[0];
      for (let waited = 0; stateOf() !== 'Z' && waited < 10_000; waited += 20) await sleep(20);
      expect(stateOf()).toBe('Z');
      // The zombie still answers kill(pid, 0), and its start time is the recorded one.
      expect(() => process.kill(pid, 0)).not.toThrow();
      const folder = path.join(freshDataDir(), 'pglite');
      writeLock(folder, { pid, processStart: start ?? null });
      const lock = acquireEmbeddedLock(folder, 'gateway');
      try {
        expect(JSON.parse(fs.readFileSync(`${folder}.lock`, 'utf8')).pid).toBe(process.pid);
      } finally {
        lock.release();
      }
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('refuses while a recorded holder is alive, even one without a start time', () => {
    const folder = path.join(freshDataDir(), 'pglite');
    writeLock(folder, { pid: process.ppid, role: 'svc mcp' });
    expect(() => acquireEmbeddedLock(folder, 'gateway')).toThrow(`in use by pid ${process.ppid} (svc mcp,`);
  });

  for (const start of ['free', 'stale'] as const) {
    it(`lets exactly one of several processes starting together win a ${start} folder`, async () => {
      const folder = path.join(freshDataDir(), 'pglite');
      if (start === 'stale') writeLock(folder, { pid: deadPid() });
      const racers: { child: ChildProcess; lines: string[]; ready: Promise<void>; done: Promise<number | null> }[] = [];
      for (let i = 0; i < 5; i++) {
        const child = spawn(process.execPath, ['--import', 'tsx', RACER, folder], {
          cwd: ROOT,
          stdio: ['pipe', 'pipe', 'inherit'],
        });
        const lines: string[] = [];
        let onReady: () => void = () => {};
        const ready = new Promise<void>((resolve) => {
          onReady = resolve;
        });
        child.stdout?.on('data', (chunk: Buffer) => {
          for (const line of chunk.toString().split('\n').filter(Boolean)) {
            lines.push(line);
            if (line === 'ready') onReady();
          }
        });
        const done = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
        racers.push({ child, lines, ready, done });
      }
      try {
        await Promise.all(racers.map((r) => r.ready));
        for (const r of racers) r.child.stdin?.write('go\n');
        // The losers exit at once; then the winner is told to let go.
        const deadline = Date.now() + 60_000;
        while (racers.some((r) => r.lines.length < 2) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const outcomes = racers.map((r) => r.lines[1] ?? 'none');
        const winners = outcomes.filter((o) => o.startsWith('won '));
        expect(winners, outcomes.join(', ')).toHaveLength(1);
        const winnerPid = (winners[0] as string).slice('won '.length);
        expect(
          outcomes.filter((o) => o === `refused ${winnerPid}`),
          outcomes.join(', '),
        ).toHaveLength(4);
        for (const r of racers) r.child.stdin?.end();
        const codes = await Promise.all(racers.map((r) => r.done));
        expect(codes.sort()).toEqual([0, 3, 3, 3, 3]);
        expect(fs.existsSync(`${folder}.lock`)).toBe(false);
      } finally {
        for (const r of racers) r.child.kill('SIGKILL');
      }
    });
  }
});
