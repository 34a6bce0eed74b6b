import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { ADMIN_URL } from './database';
import { freePort } from './ports';

// Postgres for the fault tests: a plain client, cutting a database's connections on the shared
// server, and a private server of our own that a test may stop and start (the shared one on
// 5432 is never stopped: other tests use it).

const run = promisify(execFile);

export type Sql = postgres.Sql;

/** A small client of its own (the fault tests read the ledger beside the processes under test). */
export const connectSql = (url: string, max = 2): Sql => postgres(url, { max, onnotice: () => {} });

/** Terminate every backend connected to `database` on the shared server; answers how many. */
export async function terminateBackends(database: string): Promise<number> {
  const admin = connectSql(ADMIN_URL, 1);
  try {
    const rows = await admin<{ terminated: boolean }[]>`
      select pg_terminate_backend(pid) as terminated from pg_stat_activity
      where datname = ${database} and pid <> pg_backend_pid()`;
    return rows.filter((row) => row.terminated).length;
  } finally {
    await admin.end({ timeout: 1 });
  }
}

/** The `bin` folders of the PostgreSQL versions installed the Debian way, oldest first. */
function binFolders(): string[] {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root)
    .filter((version) => /^\d+$/.test(version))
    .sort((a, b) => Number(a) - Number(b))
    .map((version) => path.join(root, version, 'bin'));
}

function postgresBinaries(): string {
  const found = binFolders().find((folder) => fs.existsSync(path.join(folder, 'pg_ctl')));
  if (!found) throw new Error('no PostgreSQL server binaries (pg_ctl, initdb) under /usr/lib/postgresql/*/bin');
  return found;
}

/**
 * A PostgreSQL client program (`pg_dump`, `pg_restore`) of the newest version installed, which
 * reads any older server; null when none is installed.
 */
export function postgresTool(name: string): string | null {
  for (const folder of binFolders().reverse()) {
    const file = path.join(folder, name);
    if (fs.existsSync(file)) return file;
  }
  return null;
}

/**
 * A Postgres server of the test's own on a free loopback port, in a temporary directory: trust
 * authentication, no fsync (nothing here survives the machine). initdb refuses to run as root,
 * so as root the server runs as the `postgres` system user.
 */
export class PrivatePostgres {
  private constructor(
    readonly directory: string,
    readonly port: number,
    private readonly bin: string,
    private readonly asRoot: boolean,
  ) {}

  /** `postgres://postgres@127.0.0.1:<port>/<database>` */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  static async create(): Promise<PrivatePostgres> {
    const bin = postgresBinaries();
    const asRoot = process.getuid?.() === 0;
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-pg-'));
    fs.chmodSync(directory, 0o700);
    if (asRoot) await run('chown', ['postgres:postgres', directory]);
    const server = new PrivatePostgres(directory, await freePort(), bin, asRoot);
    await server.tool('initdb', ['-D', server.dataDir, '-A', 'trust', '-U', 'postgres', '-N', '-E', 'UTF8']);
    await server.start();
    return server;
  }

  private get dataDir(): string {
    return path.join(this.directory, 'data');
  }

  private async tool(name: string, args: string[]): Promise<void> {
    const command = path.join(this.bin, name);
    const [file, argv] = this.asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
    await run(file, argv, { cwd: this.directory, timeout: 120_000 });
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.directory} -c listen_addresses=127.0.0.1 -c fsync=off`;
    await this.tool('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      path.join(this.directory, 'log'),
      '-o',
      options,
      '-w',
      'start',
    ]);
  }

  /** A fast shutdown: sessions are ended, the server stops accepting connections. */
  async stop(): Promise<void> {
    await this.tool('pg_ctl', ['-D', this.dataDir, '-m', 'fast', '-w', 'stop']);
  }

  /**
   * A crash: every server process quits at once, with no checkpoint; the next start recovers
   * from the WAL as after a power cut, and empties unlogged tables.
   */
  async crash(): Promise<void> {
    await this.tool('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
  }

  /** Stop (if running) and remove every file. */
  async destroy(): Promise<void> {
    await this.tool('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => {});
    fs.rmSync(this.directory, { recursive: true, force: true });
  }
}
