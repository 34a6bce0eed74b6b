import path from 'node:path';
import { parseArgs } from 'node:util';
import { DEV_ISSUER, DEV_SUBJECT, DevIssuer } from '@tms/auth';
import { Ledger } from '@tms/ledger';
import { adminCredentials } from './admin-credentials';
import { type CliEnv, parseEnv } from './env';
import { exportWorkspace, parseExportArgs } from './export-command';
import { indexRebuild, indexStatus } from './index-command';
import { serveMcpStdio } from './mcp';
import { UsageError } from './usage-error';

const USAGE = `usage: svc <command>
  migrate                                   apply the ledger migrations
  admin enroll --issuer I --subject S       enroll a human for workspace creation
  admin actor --issuer I --subject S        print the actor id (created if needed)
  admin installation create --workspace W --name N
                                            install a product; prints its id
  admin installation revoke|list --workspace W [--id I]
                                            revoke it (and all its credentials) / list them
  admin credential issue --workspace W --installation I --name N --capabilities C,...
        [--namespaces NS,...] [--expires-at UNIX_SECONDS]
                                            issue an installation credential; prints the secret once
  admin service-key issue --workspace W --name N --capabilities C,... [--namespaces ...] [--expires-at ...]
                                            issue a service key bound to W; prints the secret once
  admin credential|service-key revoke --workspace W --id C
  admin credential list --workspace W       installation credentials and service keys (never secrets)
  token [--subject S]                       print a dev session token (DEV_AUTH=1 only)
  mcp                                       serve the agent tools over stdio (TMS_TOKEN, TMS_WORKSPACE)
  index status                              indexed sequence and lag of every workspace
  index rebuild [--workspace W]             rebuild the search index from the ledger
  export --workspace W [--namespace N] [--output FILE]
                                            the workspace's ledger (or N's subtree) as NDJSON in
                                            sequence order, to stdout or FILE; progress on stderr`;

/** Open the ledger as `holder`; the embedded one refuses at once while another process owns it. */
async function withLedger<T>(env: CliEnv, holder: string, fn: (ledger: Ledger) => Promise<T>): Promise<T> {
  const ledger = await Ledger.open({
    databaseUrl: env.DATABASE_URL,
    dataDir: env.DATABASE_URL ? undefined : path.join(env.DATA_DIR, 'pglite'),
    holder,
  });
  try {
    return await fn(ledger);
  } finally {
    await ledger.close();
  }
}

function identity(args: string[]): { issuer: string; subject: string } {
  const { values } = parseArgs({
    args,
    options: { issuer: { type: 'string' }, subject: { type: 'string' } },
    strict: true,
  });
  if (!values.issuer || !values.subject) throw new UsageError('--issuer and --subject are required');
  return { issuer: values.issuer, subject: values.subject };
}

async function run(argv: string[], env: CliEnv): Promise<string | null> {
  const [command, ...rest] = argv;
  const now = Date.now() / 1000;
  switch (command) {
    case 'migrate':
      return withLedger(env, 'svc migrate', async (ledger) => {
        await ledger.migrate();
        return 'migrations applied';
      });
    case 'admin': {
      const [sub, ...args] = rest;
      if (sub === 'enroll') {
        const { issuer, subject } = identity(args);
        return withLedger(env, 'svc admin', async (ledger) => {
          const added = await ledger.stores.directory.enroll(issuer, subject, now);
          return added ? `enrolled ${subject} (${issuer})` : `already enrolled: ${subject} (${issuer})`;
        });
      }
      if (sub === 'actor') {
        const { issuer, subject } = identity(args);
        return withLedger(
          env,
          'svc admin',
          async (ledger) => (await ledger.stores.directory.findOrCreateActor(issuer, subject, now)).id,
        );
      }
      if (sub === 'installation' || sub === 'credential' || sub === 'service-key') {
        const { stdout, note } = await adminCredentials(env, sub, args);
        if (note) process.stderr.write(`${note}\n`);
        return stdout;
      }
      throw new UsageError(`unknown admin command ${sub ?? '(none)'}`);
    }
    case 'token': {
      if (env.DEV_AUTH !== '1') throw new Error('svc token needs DEV_AUTH=1 (dev issuer only)');
      if (env.NODE_ENV === 'production') throw new Error('svc token is refused when NODE_ENV=production');
      const { values } = parseArgs({ args: rest, options: { subject: { type: 'string' } }, strict: true });
      const subject = values.subject;
      // Printing a token reads the dev key only; enrolling another subject writes the ledger,
      // so the lock is taken before anything (the key included) is created in DATA_DIR.
      if (!subject) return (await DevIssuer.loadOrCreate(env.DATA_DIR)).sessionToken(DEV_SUBJECT);
      return withLedger(env, 'svc token', async (ledger) => {
        const issuer = await DevIssuer.loadOrCreate(env.DATA_DIR);
        await ledger.stores.directory.enroll(DEV_ISSUER, subject, now);
        return issuer.sessionToken(subject);
      });
    }
    case 'index': {
      const [sub, ...args] = rest;
      if (sub === 'status') return withLedger(env, 'svc index', (ledger) => indexStatus(env, ledger));
      if (sub === 'rebuild') {
        const { values } = parseArgs({ args, options: { workspace: { type: 'string' } }, strict: true });
        return withLedger(env, 'svc index', (ledger) => indexRebuild(env, ledger, values.workspace));
      }
      throw new UsageError(`unknown index command ${sub ?? '(none)'}`);
    }
    case 'export': {
      const args = parseExportArgs(rest);
      if (!args) return USAGE;
      // stdout carries the export itself, so the summary goes to stderr.
      const summary = await withLedger(env, 'svc export', (ledger) => exportWorkspace(ledger, args));
      process.stderr.write(`${summary}\n`);
      return null;
    }
    case 'mcp':
      if (rest.length > 0) throw new UsageError('svc mcp takes no arguments');
      // stdout belongs to the MCP messages until the client disconnects; nothing is printed after.
      await serveMcpStdio(env);
      return null;
    case undefined:
    case 'help':
    case '--help':
      return USAGE;
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

try {
  const out = await run(process.argv.slice(2), parseEnv(process.env));
  if (out !== null) process.stdout.write(`${out}\n`);
} catch (error) {
  const message = (error as Error).message.split('\n')[0];
  process.stderr.write(`svc: ${message}${error instanceof UsageError ? `\n${USAGE}` : ''}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
}
