import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import { Ledger } from '@tms/ledger';
import { createTestDatabase, runSvc } from '@tms/testkit';
import { describe, expect, it } from 'vitest';
import { buildProgram, type CliIo, runCli } from '../src/program';
import { runInProcess } from './in-process';

/** The CLI in this process, with its output captured and an environment that must not be read. */
async function cli(argv: string[]) {
  let stdout = '';
  let stderr = '';
  let envRead = false;
  const io: CliIo = {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env: async () => {
      envRead = true;
      throw new Error('a command ran');
    },
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr, envRead };
}

/** Every command path of the program, parents included: ['admin'], ['admin', 'installation', 'create'], ... */
function commandPaths(command: Command<unknown[], Record<string, unknown>>, prefix: string[] = []): string[][] {
  const paths: string[][] = [];
  for (const sub of command.commands as Command<unknown[], Record<string, unknown>>[]) {
    const path = [...prefix, sub.name()];
    paths.push(path, ...commandPaths(sub, path));
  }
  return paths;
}

const silentIo: CliIo = { stdout: () => {}, stderr: () => {}, env: async () => Promise.reject(new Error('unused')) };
const PATHS = commandPaths(buildProgram(silentIo) as unknown as Command<unknown[], Record<string, unknown>>);
const LEAVES = PATHS.filter(
  (path) => !PATHS.some((other) => other.length > path.length && path.every((w, i) => other[i] === w)),
);

describe('svc usage (decisions §9)', () => {
  it('knows every command docs/operations.md documents', () => {
    expect(PATHS.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining([
        'migrate',
        'admin enroll',
        'admin actor',
        'admin workspace create',
        'admin namespace create',
        'admin installation create',
        'admin installation revoke',
        'admin installation list',
        'admin credential issue',
        'admin credential revoke',
        'admin credential list',
        'admin service-key issue',
        'admin service-key revoke',
        'admin service-key list',
        'admin grant list',
        'admin grant put',
        'token',
        'mcp',
        'index status',
        'index rebuild',
        'export',
        'import',
        'ledger verify',
        'ledger move',
      ]),
    );
  });

  it.each(PATHS.map((p) => [p.join(' '), p] as const))(
    '`svc %s --help` and `-h` print its usage, exit 0 and do nothing else',
    async (_, path) => {
      for (const flag of ['--help', '-h']) {
        const run = await cli([...path, flag]);
        expect(run.code).toBe(0);
        expect(run.envRead).toBe(false);
        expect(run.stdout).toContain(`Usage: svc ${path.join(' ')} [options]`);
        expect(run.stderr).toBe('');
      }
      // Help comes first even beside arguments that would be wrong.
      const mixed = await cli([...path, '--no-such-option', '--help']);
      expect(mixed.envRead).toBe(false);
    },
  );

  it.each(LEAVES.map((p) => [p.join(' '), p] as const))(
    '`svc %s` with an unknown option exits 2 with the reason and its usage',
    async (_, path) => {
      const run = await cli([...path, '--frobnicate']);
      expect(run.code).toBe(2);
      expect(run.envRead).toBe(false);
      expect(run.stdout).toBe('');
      const [reason, ...rest] = run.stderr.split('\n');
      // Commander reports a missing required option before an unknown one; either is the reason.
      expect(reason).toMatch(
        /^svc: (unknown option '--frobnicate'|required option '--[a-z-]+ <[a-z]+>' not specified)$/,
      );
      expect(rest.join('\n')).toContain(`Usage: svc ${path.join(' ')} [options]`);
    },
  );

  it('`svc` alone and a command group alone print the usage and exit 2', async () => {
    for (const argv of [[], ['admin'], ['admin', 'credential'], ['index']]) {
      const run = await cli(argv);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`Usage: svc${argv.map((w) => ` ${w}`).join('')} [options] [command]`);
    }
  });

  it('a missing option, a bad value, a stray argument and a typo exit 2 naming the problem', async () => {
    const missing = await cli(['admin', 'enroll', '--issuer', 'https://id.example.test/']);
    expect(missing.code).toBe(2);
    expect(missing.stderr.split('\n')[0]).toBe("svc: required option '--subject <sub>' not specified");
    const badSeconds = await cli([
      ...['admin', 'service-key', 'issue', '--workspace', 'ws_x', '--name', 'n', '--capabilities', 'read'],
      ...['--expires-at', 'soon'],
    ]);
    expect(badSeconds.code).toBe(2);
    expect(badSeconds.stderr.split('\n')[0]).toMatch(
      /^svc: option '--expires-at <seconds>' argument 'soon' is invalid/,
    );
    const stray = await cli(['migrate', 'now']);
    expect(stray.code).toBe(2);
    expect(stray.stderr.split('\n')[0]).toMatch(/^svc: too many arguments for 'migrate'/);
    const typo = await cli(['admin', 'enrol']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/^svc: unknown command 'enrol'\n\(Did you mean enroll\?\)/);
    for (const run of [missing, badSeconds, stray, typo]) expect(run.envRead).toBe(false);
  });

  it('`--help` on every command, given a real environment with a fresh database, creates no table', async () => {
    const database = await createTestDatabase('tms_cli_help');
    try {
      const { parseEnv } = await import('../src/env');
      const env = parseEnv({ DATABASE_URL: database.url });
      const io: CliIo = { stdout: () => {}, stderr: () => {}, env: async () => env };
      for (const path of PATHS) {
        for (const flag of ['--help', '-h']) expect(await runCli([...path, flag], io)).toBe(0);
      }
      expect(await database.tableNames()).toEqual([]);
      // The check could fail: a command that does run creates the tables.
      expect(await runCli(['migrate'], io)).toBe(0);
      expect(await database.tableNames()).toContain('commits');
    } finally {
      await database.drop();
    }
  });

  it('on a Postgres ledger `svc migrate` has not prepared, every command that opens it names the fix and creates nothing; an embedded one is migrated by a command that writes, never by one that reads', async () => {
    const { parseEnv } = await import('../src/env');
    const ws = ['--workspace', 'ws_0000000000000000000000000'];
    const commands = [
      // The dev issuer: verified here (DEV_AUTH=1), so enrolling under it is no wrong argument.
      ['admin', 'enroll', '--issuer', 'urn:tms:dev-auth', '--subject', 'ana'],
      ['admin', 'actor', '--issuer', 'https://id.example.test/', '--subject', 'ana'],
      ['admin', 'workspace', 'create', '--name', 'acme'],
      ['admin', 'namespace', 'create', ...ws, '--name', 'crm'],
      ['admin', 'service-key', 'issue', ...ws, '--name', 'backend', '--capabilities', 'read'],
      ['admin', 'grant', 'list', ...ws, '--namespace', 'ns_0000000000000000000000000'],
      ['index', 'status'],
      ['export', ...ws],
      ['ledger', 'verify', ...ws],
      ['token', '--subject', 'ana'],
    ];
    const run = async (argv: string[], raw: Record<string, string>) => ({
      argv,
      ...(await runInProcess(argv, async () => parseEnv({ DEV_AUTH: '1', ...raw }))),
    });
    const database = await createTestDatabase('tms_cli_unmigrated');
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-cli-unmigrated-'));
    try {
      for (const argv of commands) {
        expect(await run(argv, { DATABASE_URL: database.url, DATA_DIR: dataDir })).toEqual({
          argv,
          code: 1,
          stdout: '',
          stderr: 'svc: migrations not applied: run svc migrate\n',
        });
      }
      expect(await database.tableNames()).toEqual([]);

      for (const argv of commands.filter(([first]) => first === 'export' || first === 'ledger' || first === 'index')) {
        expect(await run(argv, { DATA_DIR: dataDir })).toMatchObject({
          code: 1,
          stderr: 'svc: migrations not applied: run svc migrate\n',
        });
      }
      const enrolled = await run(commands[0] as string[], { DATA_DIR: dataDir });
      expect(enrolled).toMatchObject({ code: 0, stdout: 'enrolled ana (urn:tms:dev-auth)\n' });
      const embedded = await Ledger.open({ dataDir: path.join(dataDir, 'pglite') });
      try {
        expect(await embedded.ready()).toBe(true);
      } finally {
        await embedded.close();
      }
    } finally {
      await database.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('as a process: `svc migrate --help` leaves a fresh database untouched and `svc` alone exits 2', async () => {
    const database = await createTestDatabase('tms_cli_usage');
    try {
      const help = await runSvc(['migrate', '--help'], { DATABASE_URL: database.url });
      expect(help.code).toBe(0);
      expect(help.stdout).toContain('Usage: svc migrate [options]');
      const ledger = await Ledger.open({ databaseUrl: database.url });
      try {
        expect(await ledger.ready()).toBe(false);
      } finally {
        await ledger.close();
      }
      const bare = await runSvc([], { DATABASE_URL: database.url });
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain('Usage: svc [options] [command]');
    } finally {
      await database.drop();
    }
  }, 120_000);
});
