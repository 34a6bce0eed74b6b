import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * One process at a time owns an embedded PGlite folder (decisions §9): PGlite keeps the
 * database in its own memory and writes the folder back as it pleases, so a second process on
 * the same folder reads a stale copy and its writes overwrite, or are overwritten by, the first.
 *
 * The lock is the file `<folder>.lock` beside the folder, holding who owns it (JSON). It is
 * created atomically and complete: the record is written to a private temporary file, then
 * hard-linked to the lock's name; `link` fails with EEXIST when the lock exists, so of two
 * processes starting together exactly one wins, and nobody ever reads a half-written record.
 *
 * Node has no `flock`, so a holder killed with SIGKILL leaves its file behind. The next opener
 * judges it stale when the recorded process is gone: on the same host and boot, `kill(pid, 0)`
 * answers ESRCH, the process is a zombie (exited, not yet reaped), or the pid now belongs to a
 * process that started at another time (Linux `/proc/<pid>/stat`, so a reused pid is not
 * mistaken for the holder); another boot id means every process of that boot is gone. A stale
 * lock is removed under a short-lived second lock (`<folder>.lock.break`) and only if it still
 * holds the very record judged stale, so two processes breaking the same stale lock cannot
 * remove a lock one of them just took.
 */

export interface LockHolder {
  pid: number;
  /** What holds it: `gateway`, `svc admin`, ... */
  role: string;
  /** When the holder took the lock (ISO 8601). */
  startedAt: string;
  hostname: string;
  /** Linux boot id and the process's start time in clock ticks since boot; null elsewhere. */
  bootId: string | null;
  processStart: string | null;
  /** Makes each record unique, so "the lock still holds the record judged stale" is exact. */
  nonce: string;
}

/** Another live process holds the embedded ledger: the message is the one-line reason. */
export class EmbeddedLedgerLockedError extends Error {
  readonly code = 'EMBEDDED_LEDGER_LOCKED';

  constructor(
    readonly folder: string,
    readonly holder: LockHolder | null,
  ) {
    super(
      holder
        ? `the embedded ledger at ${folder} is in use by pid ${holder.pid} (${holder.role}, started ${holder.startedAt}${
            holder.hostname === os.hostname() ? '' : ` on ${holder.hostname}`
          }); stop it or set DATABASE_URL`
        : `the embedded ledger at ${folder} is being opened by another process; stop it or set DATABASE_URL`,
    );
    this.name = 'EmbeddedLedgerLockedError';
  }
}

/** A record whose writer died before it was readable (not expected with link) expires after this. */
const UNREADABLE_GRACE_MS = 10_000;
/** Removing a stale lock takes microseconds; a `.break` file older than this was left by a crash. */
const BREAK_GRACE_MS = 10_000;
const MAX_ATTEMPTS = 50;

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function bootId(): string | null {
  return readText('/proc/sys/kernel/random/boot_id')?.trim() ?? null;
}

/**
 * A process's state (field 3 of /proc/<pid>/stat) and start time (field 22), read after the
 * command name, which may hold spaces; null where /proc is not available or the pid is gone.
 */
function processStat(pid: number): { state: string; start: string | null } | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0] ?? '', start: fields[19] ?? null };
  } catch {
    return null;
  }
}

function parseHolder(text: string): LockHolder | null {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>;
    if (typeof value.pid !== 'number' || typeof value.nonce !== 'string') return null;
    return {
      pid: value.pid,
      role: String(value.role ?? 'unknown'),
      startedAt: String(value.startedAt ?? 'unknown'),
      hostname: String(value.hostname ?? ''),
      bootId: typeof value.bootId === 'string' ? value.bootId : null,
      processStart: typeof value.processStart === 'string' ? value.processStart : null,
      nonce: value.nonce,
    };
  } catch {
    return null;
  }
}

/** Whether the recorded holder may still be running (when in doubt: yes). */
function holderAlive(holder: LockHolder): boolean {
  // Another host (a shared folder): its processes cannot be checked from here.
  if (holder.hostname !== os.hostname()) return true;
  const boot = bootId();
  if (holder.bootId && boot && holder.bootId !== boot) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const stat = processStat(holder.pid);
  // A zombie (or a process being torn down) has exited: it holds no files and writes nothing
  // more. A holder killed together with its parent stays one until the init process reaps it.
  if (stat && (stat.state === 'Z' || stat.state === 'X')) return false;
  const start = stat?.start ?? null;
  return !(holder.processStart && start && start !== holder.processStart);
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** Create `lockFile` holding `record`, atomically and complete; false when it already exists. */
function tryCreate(lockFile: string, record: string): boolean {
  const temporary = `${lockFile}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`;
  fs.writeFileSync(temporary, record, { flag: 'wx', mode: 0o644 });
  try {
    fs.linkSync(temporary, lockFile);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}

/** Remove `lockFile` if it still holds `staleText`, serialized with other breakers. */
function breakStale(lockFile: string, staleText: string): void {
  const breaker = `${lockFile}.break`;
  let fd: number;
  try {
    fd = fs.openSync(breaker, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Someone is breaking it now; a breaker file that old was left by a crash.
    if (ageMs(breaker) > BREAK_GRACE_MS) fs.rmSync(breaker, { force: true });
    else pause(10);
    return;
  }
  try {
    if (readText(lockFile) === staleText) fs.rmSync(lockFile, { force: true });
  } finally {
    fs.closeSync(fd);
    fs.rmSync(breaker, { force: true });
  }
}

/** The lock file of a PGlite folder, with the folder's canonical path (symlinks resolved). */
export function lockFileOf(folder: string): { folder: string; lockFile: string } {
  const absolute = path.resolve(folder);
  const parent = path.dirname(absolute);
  // The parent must exist to hold the lock; a refused process finds it there already.
  fs.mkdirSync(parent, { recursive: true });
  const canonical = fs.existsSync(absolute)
    ? fs.realpathSync(absolute)
    : path.join(fs.realpathSync(parent), path.basename(absolute));
  return { folder: canonical, lockFile: `${canonical}.lock` };
}

/** The holder recorded in a folder's lock, or null when nobody holds it (tests, diagnostics). */
export function embeddedLockHolder(folder: string): LockHolder | null {
  const text = readText(lockFileOf(folder).lockFile);
  return text === null ? null : parseHolder(text);
}

export class EmbeddedLock {
  private released = false;
  private readonly onExit = () => this.release();

  constructor(
    readonly lockFile: string,
    private readonly record: string,
  ) {
    // A process that exits without closing the ledger (process.exit) frees the folder too.
    process.once('exit', this.onExit);
  }

  /** Remove the lock if it is still ours (idempotent). */
  release(): void {
    if (this.released) return;
    this.released = true;
    process.removeListener('exit', this.onExit);
    if (readText(this.lockFile) === this.record) fs.rmSync(this.lockFile, { force: true });
  }
}

/**
 * Take the lock of the PGlite folder `folder` for this process, before PGlite touches the
 * folder; throws EmbeddedLedgerLockedError at once (no waiting) when a live process holds it.
 * A refused process creates nothing beside what already exists.
 */
export function acquireEmbeddedLock(folder: string, role: string): EmbeddedLock {
  const { folder: canonical, lockFile } = lockFileOf(folder);
  const holder: LockHolder = {
    pid: process.pid,
    role,
    startedAt: new Date().toISOString(),
    hostname: os.hostname(),
    bootId: bootId(),
    processStart: processStat(process.pid)?.start ?? null,
    nonce: crypto.randomBytes(12).toString('hex'),
  };
  const record = `${JSON.stringify(holder)}\n`;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const existing = readText(lockFile);
    if (existing === null) {
      if (tryCreate(lockFile, record)) return new EmbeddedLock(lockFile, record);
      continue; // another process took it first: judge its record
    }
    const current = parseHolder(existing);
    if (current === null) {
      if (ageMs(lockFile) < UNREADABLE_GRACE_MS) throw new EmbeddedLedgerLockedError(canonical, null);
    } else if (holderAlive(current)) {
      throw new EmbeddedLedgerLockedError(canonical, current);
    }
    breakStale(lockFile, existing);
  }
  throw new Error(`could not take the lock ${lockFile} (it kept changing hands)`);
}
