import path from 'node:path';
import { Command, CommanderError, InvalidArgumentError } from '@commander-js/extra-typings';
import { CAPABILITIES } from '@tms/catalog';
import type { Ledger } from '@tms/ledger';
import type { CliEnv } from './env';
import type { AdminOutput } from './operator';
import { progressBar } from './progress';

// Each command loads what it needs when it runs, so `--help` and usage errors answer at once
// without loading the ledger, PGlite or the domain.
const adminOperations = () => import('./admin-credentials');
const adminGrants = () => import('./admin-grants');
const adminWorkspaces = () => import('./admin-workspaces');
const auth = () => import('@tms/auth');

/** Where a command's results go: `stdout` is the one value a script captures, notes go to stderr. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Whether stderr is a terminal, where progress redraws one line (absent: it is not). */
  stderrIsTerminal?: boolean;
  /** What `-` reads (`svc import -`); absent: the process's stdin. */
  stdin?: NodeJS.ReadableStream;
  /** The process environment, parsed only when a command runs (so `--help` never needs it). */
  env(): Promise<CliEnv>;
}

export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stderrIsTerminal: process.stderr.isTTY === true,
  env: async () => (await import('./env')).parseEnv(process.env),
};

/**
 * Open the ledger as `holder` for one command (the embedded one refuses at once while another
 * process owns it). `use` says what the command does with it: `svc migrate` migrates it; a
 * command that writes migrates an embedded ledger first, as the gateway does at start; any other
 * stops on a ledger `svc migrate` has not prepared with "migrations not applied: run svc
 * migrate" (as `/readyz` says it), not with the statement that failed. A command that only reads
 * (an export, a verification) never changes the ledger it reads.
 */
async function withLedger<T>(
  env: CliEnv,
  holder: string,
  use: 'migrate' | 'write' | 'read',
  fn: (ledger: Ledger) => Promise<T>,
): Promise<T> {
  const { Ledger } = await import('@tms/ledger');
  const ledger = await Ledger.open({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATABASE_URL ? undefined : path.join(env.DATA_DIR, 'pglite'),
    holder,
  });
  try {
    if (use === 'write' && !env.DATABASE_URL) await ledger.migrate();
    else if (use !== 'migrate') await ledger.assertReady();
    return await fn(ledger);
  } finally {
    await ledger.close();
  }
}

/** A command before its options are declared. */
type NoOptions = Record<never, never>;

const commaList = (value: string): string[] => value.split(',').filter(Boolean);

function unixSeconds(value: string): number {
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds)) throw new InvalidArgumentError('takes Unix seconds');
  return seconds;
}

/**
 * Runs a command's action and prints its output. A request the domain refuses as
 * `invalid_input` is a wrong argument: exit 2 with the reason and this command's usage.
 */
function act<Args extends unknown[]>(
  io: CliIo,
  run: (env: CliEnv, ...args: Args) => Promise<string | AdminOutput | null>,
) {
  return async function (this: Command<unknown[], NoOptions>, ...args: Args): Promise<void> {
    let output: string | AdminOutput | null;
    try {
      output = await run(await io.env(), ...args);
    } catch (error) {
      const { DomainError } = await import('@tms/domain');
      if (error instanceof DomainError && error.code === 'invalid_input') {
        this.error(error.message, { exitCode: 2, code: 'svc.invalidInput' });
      }
      throw error;
    }
    if (output === null) return;
    if (typeof output === 'string') {
      io.stdout(`${output}\n`);
      return;
    }
    if (output.stdout !== '') io.stdout(`${output.stdout}\n`);
    if (output.note) io.stderr(`${output.note}\n`);
    if (output.failure) throw new CommandFailed(output.failure, output.exitCode ?? 1);
  };
}

/** A command that ran but failed, with its exit code. */
class CommandFailed extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** The `--workspace` and `--idempotency-key` of every workspace-scoped admin command. */
function workspaceScoped<C extends Command<[], NoOptions>>(command: C) {
  return command
    .requiredOption('--workspace <id>', 'the workspace (ws_...)')
    .option('--idempotency-key <key>', 'replays the first answer when the command is run again with this key');
}

function adminCommands(program: Command, io: CliIo): void {
  const admin = program
    .command('admin')
    .description('workspaces, namespaces, the directory, installations, credentials, service keys and grants');
  admin
    .command('enroll')
    .description(
      'enroll a human so that they may create workspaces; refused when no session token of the issuer is verified here (SESSION_ISSUER, DEV_AUTH)',
    )
    .requiredOption('--issuer <url>', 'the session issuer (iss), exactly as SESSION_ISSUER names it')
    .requiredOption('--subject <sub>', 'the subject (sub)')
    .option('--force', 'enroll even when this deployment verifies no session token of the issuer (with a warning)')
    .action(
      act(io, async (env, { issuer, subject, force }) => {
        const { enrollmentProblem } = await import('./issuers');
        const problem = enrollmentProblem(env, issuer);
        if (problem && !force) throw await wrongArgument(`--issuer: ${problem}; --force enrolls it anyway`);
        return withLedger(env, 'svc admin', 'write', async (ledger) => {
          const added = await ledger.stores.directory.enroll(issuer, subject, Date.now() / 1000);
          const done = added ? `enrolled ${subject} (${issuer})` : `already enrolled: ${subject} (${issuer})`;
          return problem ? { stdout: done, note: `warning: ${problem}` } : done;
        });
      }),
    );
  admin
    .command('actor')
    .description('print the actor id of an issuer and subject, creating the actor if needed')
    .requiredOption('--issuer <url>', 'the issuer (iss)')
    .requiredOption('--subject <sub>', 'the subject (sub)')
    .action(
      act(io, (env, { issuer, subject }) =>
        withLedger(
          env,
          'svc admin',
          'write',
          async (ledger) => (await ledger.stores.directory.findOrCreateActor(issuer, subject, Date.now() / 1000)).id,
        ),
      ),
    );

  const workspace = admin.command('workspace').description('workspaces, created without an identity provider');
  workspace
    .command('create')
    .description("create a workspace as the operator (its first admin, or --owner's); prints its id")
    .requiredOption('--name <name>', 'the workspace name')
    .option('--owner <actor>', 'make this actor (act_..., see svc admin actor) its one admin instead')
    .option('--idempotency-key <key>', 'replays the first answer when the command is run again with this key')
    .action(act(io, async (env, options) => (await adminWorkspaces()).createWorkspace(env, options)));

  const namespace = admin.command('namespace').description("a workspace's namespaces");
  workspaceScoped(namespace.command('create'))
    .description('create a namespace (a root one, or under --parent); prints its id')
    .requiredOption('--name <name>', 'the namespace name')
    .option('--parent <id>', 'the parent namespace (ns_...); none: a root namespace')
    .action(act(io, async (env, options) => (await adminWorkspaces()).createNamespace(env, options)));

  const installation = admin.command('installation').description('products installed into a workspace');
  workspaceScoped(installation.command('create'))
    .description('install a product; prints its id')
    .requiredOption('--name <name>', 'the product name')
    .action(act(io, async (env, options) => (await adminOperations()).createInstallation(env, options)));
  workspaceScoped(installation.command('revoke'))
    .description('revoke an installation and all its credentials')
    .requiredOption('--id <id>', 'the installation (ins_...)')
    .action(act(io, async (env, options) => (await adminOperations()).revoke(env, 'installations.revoke', options)));
  installation
    .command('list')
    .description('every installation of the workspace, tab-separated')
    .requiredOption('--workspace <id>', 'the workspace (ws_...)')
    .action(act(io, async (env, options) => (await adminOperations()).listAll(env, 'installations.list', options)));

  const grants = (command: Command<[], NoOptions>) =>
    workspaceScoped(command)
      .requiredOption('--name <name>', 'a name to recognise it by')
      .requiredOption('--capabilities <list>', `comma-separated, of: ${CAPABILITIES.join(', ')}`, commaList)
      .option('--namespaces <list>', 'comma-separated namespace ids it is limited to', commaList)
      .option('--expires-at <seconds>', 'expiry, in Unix seconds', unixSeconds);

  const credential = admin.command('credential').description("an installation's credentials");
  grants(credential.command('issue'))
    .description('issue an installation credential; prints the secret once')
    .requiredOption('--installation <id>', 'the installation (ins_...)')
    .action(act(io, async (env, options) => (await adminOperations()).issueCredential(env, 'installation', options)));
  workspaceScoped(credential.command('revoke'))
    .description('revoke a credential')
    .requiredOption('--id <id>', 'the credential')
    .action(act(io, async (env, options) => (await adminOperations()).revoke(env, 'credentials.revoke', options)));
  credential
    .command('list')
    .description('installation credentials and service keys (never secrets), tab-separated')
    .requiredOption('--workspace <id>', 'the workspace (ws_...)')
    .action(act(io, async (env, options) => (await adminOperations()).listAll(env, 'credentials.list', options)));

  const grant = admin.command('grant').description('who may do what on a namespace');
  grant
    .command('list')
    .description('the grants on a namespace, as the JSON list that grant put takes')
    .requiredOption('--workspace <id>', 'the workspace (ws_...)')
    .requiredOption('--namespace <id>', 'the namespace (ns_...)')
    .action(act(io, async (env, options) => (await adminGrants()).listGrants(env, options)));
  workspaceScoped(grant.command('put'))
    .description(
      'replace the whole grant list of a namespace (grants left out are revoked): read it with grant list, change it, put it back; says what changed',
    )
    .requiredOption('--namespace <id>', 'the namespace (ns_...)')
    .requiredOption(
      '--grants <json|file>',
      'the new list as JSON, or a file holding it: [{"target":{"kind":"credential","credential_id":"cred_..."},"capabilities":["read"],"inherit":true}]',
    )
    .action(act(io, async (env, options) => (await adminGrants()).putGrants(env, options)));

  const serviceKey = admin.command('service-key').description('back-office keys bound to one workspace');
  grants(serviceKey.command('issue'))
    .description('issue a service key bound to the workspace; prints the secret once')
    .option('--grant', 'also grant it its capabilities on each of --namespaces and their subtrees')
    .action(act(io, async (env, options) => (await adminOperations()).issueCredential(env, 'service_key', options)));
  workspaceScoped(serviceKey.command('revoke'))
    .description('revoke a service key')
    .requiredOption('--id <id>', 'the service key')
    .action(act(io, async (env, options) => (await adminOperations()).revoke(env, 'credentials.revoke', options)));
  serviceKey
    .command('list')
    .description('installation credentials and service keys (never secrets), tab-separated')
    .requiredOption('--workspace <id>', 'the workspace (ws_...)')
    .action(act(io, async (env, options) => (await adminOperations()).listAll(env, 'credentials.list', options)));
}

function indexCommands(program: Command, io: CliIo): void {
  const index = program.command('index').description('the search index behind recall');
  index
    .command('status')
    .description('indexed sequence and lag of every workspace')
    .action(
      act(io, async (env) => {
        const { indexStatus } = await import('./index-command');
        return withLedger(env, 'svc index', 'read', (ledger) => indexStatus(env, ledger));
      }),
    );
  index
    .command('rebuild')
    .description('rebuild the search index from the ledger, with progress on stderr')
    .option('--workspace <id>', 'only this workspace')
    .action(
      act(io, async (env, { workspace }) => {
        const { indexRebuild } = await import('./index-command');
        return withLedger(env, 'svc index', 'read', (ledger) => indexRebuild(env, ledger, workspace));
      }),
    );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuid(value: string): string {
  if (!UUID.test(value)) throw new InvalidArgumentError('takes a UUID (Meilisearch key uids are UUIDs)');
  return value;
}

function searchCommands(program: Command, io: CliIo): void {
  const search = program.command('search').description('the Meilisearch server behind recall');
  search
    .command('create-key')
    .description(
      "create (or find) the gateway's search-only Meilisearch key and write it to a file (MEILI_API_KEY_FILE); needs MEILI_URL and the master key in MEILI_API_KEY",
    )
    .requiredOption('--output <file>', 'write the key here (mode 600, replaced whole)')
    .option('--uid <uuid>', 'the key uid (the same uid gives the same key)', uuid)
    .option(
      '--index <uid>',
      'an index it may search, repeatable or comma-separated (default: the one recall uses, tms_memories)',
      (value, previous: string[] | undefined) => [...(previous ?? []), ...commaList(value)],
    )
    .action(
      act(io, async (env, options) => {
        const { createSearchKey } = await import('./search-command');
        const { MEILI_INDEX_UID } = await import('@tms/search');
        const indexes = options.index?.length ? options.index : [MEILI_INDEX_UID];
        return createSearchKey(env, { output: options.output, uid: options.uid, indexes });
      }),
    );
}

/**
 * The operator CLI (decisions §9). Every command answers `--help`/`-h` and does nothing else; a
 * wrong argument is reported with the command's usage and exit code 2 (see `runCli`).
 */
export function buildProgram(io: CliIo): Command {
  const program = new Command('svc')
    .description('Operator CLI of the Temporal Memory Service')
    .exitOverride()
    .showHelpAfterError()
    .showSuggestionAfterError()
    .configureOutput({
      writeOut: (text) => io.stdout(text),
      writeErr: (text) => io.stderr(text),
      outputError: (text, write) => write(`svc: ${text.replace(/^error: /, '')}`),
    });

  program
    .command('migrate')
    .description('apply the ledger migrations')
    .action(
      act(io, (env) =>
        withLedger(env, 'svc migrate', 'migrate', async (ledger) => {
          // Older ledgers are chained after the SQL migrations (docs/ledger-proofs.md), with progress.
          let chained = 0;
          await ledger.migrate(
            { layout: env.DATABASE_LAYOUT, citus: env.CITUS === '1' },
            ({ workspaceId, sequence, head }) => {
              chained += 1;
              io.stderr(`chaining workspace ${workspaceId}: ${progressBar(sequence, head)}\n`);
            },
          );
          const layout = env.DATABASE_LAYOUT === 'partitioned' ? ' (partitioned by workspace)' : '';
          const citus = env.CITUS === '1' ? '; tables distributed on Citus' : '';
          return `migrations applied${layout}${citus}${chained > 0 ? '; older ledgers chained' : ''}`;
        }),
      ),
    );
  adminCommands(program, io);
  program
    .command('token')
    .description('print a dev session token (DEV_AUTH=1 only)')
    .option('--subject <sub>', 'enroll this subject and sign for it (default: the dev admin)')
    .action(
      act(io, async (env, { subject }) => {
        if (env.DEV_AUTH !== '1') throw new Error('svc token needs DEV_AUTH=1 (dev issuer only)');
        if (env.NODE_ENV === 'production') throw new Error('svc token is refused when NODE_ENV=production');
        // Printing a token reads the dev key only; enrolling another subject writes the ledger,
        // so the lock is taken before anything (the key included) is created in DATA_DIR.
        const { DEV_ISSUER, DEV_SUBJECT, DevIssuer } = await auth();
        if (!subject) return (await DevIssuer.loadOrCreate(env.DATA_DIR)).sessionToken(DEV_SUBJECT);
        return withLedger(env, 'svc token', 'write', async (ledger) => {
          const issuer = await DevIssuer.loadOrCreate(env.DATA_DIR);
          await ledger.stores.directory.enroll(DEV_ISSUER, subject, Date.now() / 1000);
          return issuer.sessionToken(subject);
        });
      }),
    );
  program
    .command('mcp')
    .description('serve the agent tools over stdio (TMS_TOKEN, TMS_WORKSPACE)')
    .action(
      act(io, async (env) => {
        // stdout belongs to the MCP messages until the client disconnects; nothing is printed after.
        await (await import('./mcp')).serveMcpStdio(env);
        return null;
      }),
    );
  indexCommands(program, io);
  searchCommands(program, io);
  program
    .command('export')
    .description("the workspace's ledger (or a namespace subtree) as NDJSON in sequence order; progress on stderr")
    .requiredOption('--workspace <id>', 'the workspace (ws_...)')
    .option('--namespace <id>', "only this namespace's subtree")
    .option('--output <file>', 'write to this file (complete or not at all) instead of stdout')
    .action(
      act(io, async (env, options) => {
        const { exportWorkspace } = await import('./export-command');
        const args = {
          workspace: options.workspace,
          namespace: options.namespace ?? null,
          output: options.output ?? null,
        };
        // stdout carries the export itself, so the summary goes to stderr.
        const summary = await withLedger(env, 'svc export', 'read', (ledger) => exportWorkspace(ledger, args));
        return { stdout: '', note: summary };
      }),
    );
  program
    .command('import')
    .description(
      'load memories into a workspace, one memories.create body per line (with its evidence and import_key), in batches through the same rules; resumable; progress on stderr, totals as JSON on stdout; exit 3 when lines were rejected (docs/import.md)',
    )
    .argument('<file>', 'an NDJSON file, or - for stdin (--from mem0: a Mem0 get_all JSON output)')
    .requiredOption('--workspace <id>', 'the workspace (ws_...)')
    .option('--reject <file>', 'write each rejected line here as NDJSON (line, code, detail, original)')
    .option('--from <format>', 'ndjson (import lines) or mem0 (Mem0 get_all output)', importFormat, 'ndjson' as const)
    .action(
      act(io, async (env, file, options) => {
        const { importFile } = await import('./import-command');
        const args = { workspace: options.workspace, file, reject: options.reject ?? null, from: options.from };
        return importFile(env, args, {
          stdin: io.stdin ?? process.stdin,
          stderr: io.stderr,
          stderrIsTerminal: io.stderrIsTerminal === true,
        });
      }),
    );
  const ledgerCommand = program
    .command('ledger')
    .description("the ledger's hash chain (docs/ledger-proofs.md), and moving the embedded ledger to Postgres");
  ledgerCommand
    .command('verify')
    .description(
      "recompute a workspace's hash chain from its rows (or from an export file) and name the first sequence that no longer matches, and what changed there",
    )
    .option('--workspace <id>', 'the workspace (ws_...)')
    .option(
      '--from <sequence>',
      'start at this sequence, taking the chain hash stored before it as given',
      positiveInteger,
    )
    .option(
      '--file <export>',
      'verify an NDJSON export of a whole workspace (svc export) offline instead; with --workspace, compare a broken commit with the export to name every field that changed',
    )
    .action(
      act(io, async (env, options) => {
        const { verifyExportFile, verifyLedger } = await import('./ledger-command');
        if (options.workspace === undefined) {
          if (options.file === undefined) throw await wrongArgument('--workspace or --file is required');
          if (options.from !== undefined) throw await wrongArgument('--from: verifies a workspace, give --workspace');
          return verifyExportFile(options.file);
        }
        const args = { workspace: options.workspace, from: options.from ?? 1, reference: options.file };
        const progress = { write: io.stderr, isTTY: io.stderrIsTerminal === true };
        return withLedger(env, 'svc ledger verify', 'read', (ledger) => verifyLedger(ledger, args, progress));
      }),
    );
  ledgerCommand
    .command('move')
    .description(
      'copy the embedded ledger (DATA_DIR) whole into an empty Postgres database, migrated in DATABASE_LAYOUT; recompute every chain on both sides, then rebuild the search index there (docs/operations.md)',
    )
    .requiredOption('--to <url>', 'the target database (postgres://...): empty, or migrated and empty', postgresUrl)
    .option('--data-dir <dir>', 'the DATA_DIR that holds the embedded ledger (default: DATA_DIR, else ./.data)')
    .option('--no-index', 'leave the search index to the indexer of the first gateway on the target')
    .action(
      act(io, async (env, options) => {
        const { moveLedger } = await import('./move-command');
        return moveLedger(env, { to: options.to, dataDir: options.dataDir ?? env.DATA_DIR, index: options.index });
      }),
    );
  return program;
}

function importFormat(value: string): 'ndjson' | 'mem0' {
  if (value !== 'ndjson' && value !== 'mem0') throw new InvalidArgumentError('takes ndjson or mem0');
  return value;
}

function postgresUrl(value: string): string {
  if (!/^postgres(ql)?:\/\//.test(value)) throw new InvalidArgumentError('takes a postgres:// URL');
  return value;
}

/** A wrong combination of options: exit 2 with the reason and the usage (as `act` reports `invalid_input`). */
async function wrongArgument(reason: string): Promise<Error> {
  const { DomainError } = await import('@tms/domain');
  return new DomainError('invalid_input', reason);
}

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('takes a sequence (1 or more)');
  return n;
}

/**
 * Run the CLI and return its exit code: 0 done (or help asked for), 1 the command failed (one
 * line on stderr), 2 a wrong argument or a missing command (the reason, then the usage).
 */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help asked for (`-h`, `--help`, `svc help X`) ends with exit code 0; anything else is a usage error.
      return error.exitCode === 0 ? 0 : 2;
    }
    io.stderr(`svc: ${String((error as Error).message).split('\n')[0]}\n`);
    return error instanceof CommandFailed ? error.exitCode : 1;
  }
}
