import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OPERATIONS_BY_NAME } from '@tms/catalog';
import { composeDomain } from '@tms/composition';
import { Ledger, verifyWorkspaceChain } from '@tms/ledger';
import { createTestDatabase, freshKey, seedPgliteDirectory, type TestDatabase } from '@tms/testkit';
import { type GatewayProcess, startGatewayProcess } from '@tms/testkit/processes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnv } from '../src/env';
import { bash, documentedBlock, PRELUDE, shellEnv } from './documented-shell';
import { runInProcess, withTestLedger } from './in-process';

/*
 * A fresh deployment without an identity provider (issue 41): the CLI alone makes a workspace,
 * its namespaces and a service key with grants, each a commit of the operator through the
 * domain's rules. First docs/operations.md's "First day without an identity provider", run as
 * written on a fresh Postgres database against a gateway with no issuer and no DEV_AUTH; then the
 * commands' finer behaviour, on both ledgers.
 */

const OPERATOR = 'urn:tms:operator';
const SLOW = { timeout: 300_000 };

describe('docs/operations.md, "First day without an identity provider", as written (postgres)', SLOW, () => {
  let db: TestDatabase;
  let gateway: GatewayProcess | undefined;
  let work: string;
  beforeAll(async () => {
    db = await createTestDatabase('tms_bootstrap_docs');
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-bootstrap-'));
  });
  afterAll(async () => {
    await gateway?.stop();
    await db?.drop();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it('reaches a working service key and a first memory with the CLI alone', async () => {
    const vars = path.join(work, 'vars');
    const env = shellEnv({ DATABASE_URL: db.url, USER: 'ops-docs', VARS: vars });
    const bootstrap = await bash(
      `${PRELUDE}${documentedBlock('bootstrap')}\nprintf '%s\\n' "$WS" "$NS" "$KEY" > "$VARS"\n`,
      env,
    );
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    const [ws = '', ns = '', key = ''] = fs.readFileSync(vars, 'utf8').trim().split('\n');
    expect(ws).toMatch(/^ws_[0-9a-z]+$/);
    expect(ns).toMatch(/^ns_[0-9a-z]+$/);
    expect(key).toMatch(/^tms_sk_/);
    // Only ids and the secret went to stdout; what each command did went to stderr.
    expect(bootstrap.stdout).toBe('migrations applied\n');
    expect(bootstrap.stderr).toContain(`added credential cred_`);

    // The gateway `pnpm start` runs, in the same environment: no issuer, no DEV_AUTH.
    gateway = await startGatewayProcess('bootstrap', { DATABASE_URL: db.url, EMBEDDER: 'none' });
    const started = gateway.logs.find((line) => line.msg === 'gateway listening');
    expect(started).toBeDefined();
    const first = await bash(`${PRELUDE}${documentedBlock('first-memory')}\n`, {
      ...env,
      TMS_URL: gateway.url,
      WS: ws,
      NS: ns,
      KEY: key,
    });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toBe('5\n');

    // Commits 1 to 4 are the operator's, through the domain's operations; 5 is the key's.
    const ledger = await Ledger.open({ databaseUrl: db.url });
    try {
      const commits = await ledger.stores.chain.commits(ws, 1, 100, 100);
      expect(commits.map((c) => c.operation)).toEqual([
        'workspaces.create',
        'namespaces.create',
        'credentials.create',
        'namespaces.grants.put',
        'memories.create',
      ]);
      const operator = await ledger.stores.directory.findActor(OPERATOR, 'ops-docs');
      expect(commits.slice(0, 4).every((c) => c.actorId === operator?.id)).toBe(true);
      const credential = await ledger.stores.credentials.getCredential(ws, commits[2]?.subjectIds[0] ?? '');
      expect(commits[4]?.actorId).toBe(credential?.actorId);
      const verdict = await ledger.snapshot((stores) => verifyWorkspaceChain(stores, ws));
      expect(verdict).toMatchObject({ intact: true, sequence: 5 });
    } finally {
      await ledger.close();
    }
    // Nobody else can sign in: the gateway verifies no token but the credentials.
    const me = await fetch(`${gateway.url}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await me.json()) as { caller_kind: string }).caller_kind).toBe('service_key');
  });
});

type Driver = 'postgres' | 'pglite';

describe.each<Driver>(['postgres', 'pglite'])('svc admin bootstrap commands (%s)', (driver) => {
  let db: TestDatabase | undefined;
  let dataDir: string;
  let base: Record<string, string>;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-bootstrap-cli-'));
    db = driver === 'postgres' ? await createTestDatabase('tms_bootstrap_cli') : undefined;
    if (!db) await seedPgliteDirectory(path.join(dataDir, 'pglite'));
    base = { ...(db ? { DATABASE_URL: db.url } : { DATA_DIR: dataDir }), USER: 'ops-test', EMBEDDER: 'none' };
    if (db) expect((await svc(['migrate'])).code).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const svc = (argv: string[], extra: Record<string, string> = {}) =>
    runInProcess(argv, async () => parseEnv({ ...base, ...extra }));

  const withLedger = <T>(use: (ledger: Ledger) => Promise<T>) => withTestLedger({ databaseUrl: db?.url, dataDir }, use);

  it(
    'creates a workspace, namespaces and a service key granted on them, each a commit of the operator',
    SLOW,
    async () => {
      const created = await svc(['admin', 'workspace', 'create', '--name', 'acme']);
      expect(created.code, created.stderr).toBe(0);
      const ws = created.stdout.trim();
      expect(ws).toMatch(/^ws_/);
      expect(created.stderr).toBe(`created workspace ${ws} (acme), the operator its first admin\n`);
      const root = (await svc(['admin', 'namespace', 'create', '--workspace', ws, '--name', 'crm'])).stdout.trim();
      const child = await svc(['admin', 'namespace', 'create', '--workspace', ws, '--name', 'leads', '--parent', root]);
      expect(child.stderr).toBe(`created namespace leads under ${root} at commit 3\n`);
      const other = (await svc(['admin', 'namespace', 'create', '--workspace', ws, '--name', 'hr'])).stdout.trim();

      const issued = await svc([
        ...['admin', 'service-key', 'issue', '--workspace', ws, '--name', 'nightly'],
        ...['--capabilities', 'read,observe', '--namespaces', root, '--grant'],
      ]);
      expect(issued.code, issued.stderr).toBe(0);
      const secret = issued.stdout.trim();
      const credentialId = /issued service key (cred_\w+)/.exec(issued.stderr)?.[1] ?? '';
      expect(issued.stderr).toContain(
        `${root}: added credential ${credentialId} (read, observe, inherited by the subtree) (commit 6)`,
      );

      await withLedger(async (ledger) => {
        const operator = await ledger.stores.directory.findActor(OPERATOR, 'ops-test');
        const commits = await ledger.stores.chain.commits(ws, 1, 100, 100);
        expect(commits.map((c) => [c.operation, c.actorId])).toEqual([
          ['workspaces.create', operator?.id],
          ['namespaces.create', operator?.id],
          ['namespaces.create', operator?.id],
          ['namespaces.create', operator?.id],
          ['credentials.create', operator?.id],
          ['namespaces.grants.put', operator?.id],
        ]);
        // The creator is the first admin (decisions §6): here the operator's actor.
        expect(await ledger.stores.memberships.list(ws)).toMatchObject([{ actorId: operator?.id, role: 'admin' }]);
        expect(await ledger.stores.namespaces.grantsOn(ws, root)).toMatchObject([
          { targetKind: 'credential', targetId: credentialId, capabilities: ['read', 'observe'], inherit: true },
        ]);
        expect(await ledger.snapshot((stores) => verifyWorkspaceChain(stores, ws))).toMatchObject({ intact: true });
      });

      // The key writes below the namespace it was granted, and nowhere else.
      const { domain, ledger } = await composeDomain(parseEnv({ ...base, SEARCH_PROVIDER: 'none' }));
      try {
        const caller = await domain.authenticate(secret);
        const create = OPERATIONS_BY_NAME.get('memories.create');
        if (!create) throw new Error('no memories.create');
        const write = (namespace: string) =>
          domain.execute(
            create,
            { params: {}, query: {}, body: { namespace_id: namespace, kind: 'episode', text: 'first', valid_from: 0 } },
            { caller, requestId: 'req_bootstrap', selectedWorkspaceId: null, idempotencyKey: freshKey() },
          );
        expect(JSON.parse((await write(child.stdout.trim())).json).commit.sequence).toBe(7);
        await expect(write(other)).rejects.toMatchObject({ code: 'not_found' });
      } finally {
        await ledger.close();
      }
    },
  );

  it(
    'hands a workspace to --owner in a second commit; an unknown owner writes nothing; a rerun with its key replays',
    SLOW,
    async () => {
      const countWorkspaces = () =>
        withLedger(async (ledger) => {
          const result = await ledger.handle.db.execute('select count(*)::int as n from workspaces');
          const rows = Array.isArray(result) ? result : (result as { rows: { n: number }[] }).rows;
          return Number((rows[0] as { n: number }).n);
        });
      const before = await countWorkspaces();
      const unknown = await svc(['admin', 'workspace', 'create', '--name', 'x', '--owner', 'act_nobody']);
      expect(unknown.code).toBe(2);
      expect(unknown.stdout).toBe('');
      expect(unknown.stderr.split('\n')[0]).toBe(
        "svc: invalid_input: --owner: no actor act_nobody (svc admin actor prints one's id)",
      );
      expect(await countWorkspaces()).toBe(before);

      const issuer = 'https://id.example.test/';
      const ana = (await svc(['admin', 'actor', '--issuer', issuer, '--subject', 'ana'])).stdout.trim();
      const key = `owner-${freshKey()}`;
      const argv = ['admin', 'workspace', 'create', '--name', 'ana', '--owner', ana, '--idempotency-key', key];
      const handed = await svc(argv);
      expect(handed.code, handed.stderr).toBe(0);
      const ws = handed.stdout.trim();
      const lines = handed.stderr.trim().split('\n');
      expect(lines[1]).toBe(`${ana} is its one admin (commit 2)`);
      // This deployment verifies no token of Ana's issuer: the operator is told.
      expect(lines[2]).toMatch(new RegExp(`^warning: ${ana} cannot sign in yet: its issuer ${issuer} is not one`));
      await withLedger(async (ledger) => {
        expect(await ledger.stores.memberships.list(ws)).toMatchObject([{ actorId: ana, role: 'admin' }]);
        expect((await ledger.stores.chain.commits(ws, 1, 10, 10)).map((c) => c.operation)).toEqual([
          'workspaces.create',
          'workspaces.members.put',
        ]);
      });

      // The same key replays both steps: the same workspace, no new commit.
      const sessions = {
        SESSION_ISSUER: issuer,
        SESSION_JWKS_URI: 'https://id.example.test/jwks',
        SESSION_AUDIENCE: 'tms',
      };
      const again = await svc(argv, sessions);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout.trim()).toBe(ws);
      expect(again.stderr).toContain('replayed: created');
      // With the issuer verified, no warning.
      expect(again.stderr).not.toContain('warning');
      await withLedger(async (ledger) => expect((await ledger.stores.chain.head(ws))?.sequence).toBe(2));
    },
  );

  it('service-key issue --grant needs --namespaces; grant put says what it changed', SLOW, async () => {
    const ws = (await svc(['admin', 'workspace', 'create', '--name', 'grants'])).stdout.trim();
    const ns = (await svc(['admin', 'namespace', 'create', '--workspace', ws, '--name', 'crm'])).stdout.trim();
    const lone = await svc([
      'admin',
      'service-key',
      'issue',
      '--workspace',
      ws,
      '--name',
      'k',
      '--capabilities',
      'read',
      '--grant',
    ]);
    expect(lone.code).toBe(2);
    expect(lone.stderr.split('\n')[0]).toBe(
      'svc: invalid_input: --grant: needs --namespaces (the namespaces to grant it on)',
    );

    const issued = await svc([
      ...['admin', 'service-key', 'issue', '--workspace', ws, '--name', 'k', '--capabilities', 'read'],
      ...['--namespaces', ns, '--grant'],
    ]);
    const credentialId = /issued service key (cred_\w+)/.exec(issued.stderr)?.[1] ?? '';
    const grant = {
      target: { kind: 'credential', credential_id: credentialId },
      capabilities: ['read'],
      inherit: true,
    };
    const put = (grants: unknown[]) =>
      svc(['admin', 'grant', 'put', '--workspace', ws, '--namespace', ns, '--grants', JSON.stringify(grants)]);

    const same = await put([grant]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stderr).toBe(`${ns} has 1 grant: nothing changed (commit 5)\n`);
    const none = await put([]);
    expect(none.stderr).toBe(`${ns} has 0 grants: revoked credential ${credentialId} (commit 6)\n`);
    const back = await put([{ ...grant, inherit: false }]);
    expect(back.stderr).toBe(`${ns} has 1 grant: added credential ${credentialId} (read) (commit 7)\n`);
    const widened = await put([{ ...grant, capabilities: ['read', 'observe'] }]);
    expect(widened.stderr).toBe(
      `${ns} has 1 grant: changed credential ${credentialId} from (read) to (read, observe, inherited by the subtree) (commit 8)\n`,
    );
  });

  it(
    'enroll refuses an issuer whose session tokens this deployment does not verify, unless --force',
    SLOW,
    async () => {
      const enrolled = (issuer: string, subject: string) =>
        withLedger((ledger) => ledger.stores.directory.isEnrolled(issuer, subject));
      const issuer = 'https://id.example.test/';
      const sessions = {
        SESSION_ISSUER: issuer,
        SESSION_JWKS_URI: 'https://id.example.test/jwks',
        SESSION_AUDIENCE: 'tms',
      };
      const oauth = {
        OAUTH_ISSUER: 'https://oauth.example.test/',
        OAUTH_JWKS_URI: 'https://oauth.example.test/jwks',
        OAUTH_AUDIENCE: 'tms-api',
      };

      const nothing = await svc(['admin', 'enroll', '--issuer', issuer, '--subject', 'bea']);
      expect(nothing.code).toBe(2);
      expect(nothing.stderr.split('\n')[0]).toBe(
        `svc: invalid_input: --issuer: ${issuer} is not an issuer this deployment verifies; this deployment verifies no session token (SESSION_ISSUER unset, DEV_AUTH off), so nobody can sign in to create a workspace: svc admin workspace create makes one without an identity provider; --force enrolls it anyway`,
      );
      expect(await enrolled(issuer, 'bea')).toBe(false);

      const nearMiss = await svc(
        ['admin', 'enroll', '--issuer', 'https://id.example.test', '--subject', 'bea'],
        sessions,
      );
      expect(nearMiss.code).toBe(2);
      expect(nearMiss.stderr).toContain(`(issuers match as exact strings: did you mean ${issuer}?)`);
      const viaOauth = await svc(['admin', 'enroll', '--issuer', oauth.OAUTH_ISSUER, '--subject', 'bea'], {
        ...sessions,
        ...oauth,
      });
      expect(viaOauth.code).toBe(2);
      expect(viaOauth.stderr).toContain(
        'is the OAuth issuer (OAUTH_ISSUER), and OAuth access tokens cannot create workspaces',
      );

      const forced = await svc(
        ['admin', 'enroll', '--issuer', oauth.OAUTH_ISSUER, '--subject', 'bea', '--force'],
        oauth,
      );
      expect(forced).toMatchObject({ code: 0, stdout: `enrolled bea (${oauth.OAUTH_ISSUER})\n` });
      expect(forced.stderr).toMatch(/^warning: https:\/\/oauth\.example\.test\/ is the OAuth issuer/);
      expect(await enrolled(oauth.OAUTH_ISSUER, 'bea')).toBe(true);

      const verified = await svc(['admin', 'enroll', '--issuer', issuer, '--subject', 'bea'], sessions);
      expect(verified).toMatchObject({ code: 0, stdout: `enrolled bea (${issuer})\n`, stderr: '' });
      const dev = await svc(['admin', 'enroll', '--issuer', 'urn:tms:dev-auth', '--subject', 'bea'], { DEV_AUTH: '1' });
      expect(dev).toMatchObject({ code: 0, stderr: '' });
      // An empty issuer variable (compose's `${SESSION_ISSUER:-}`) is an unset one for the CLI.
      const empty = await svc(['admin', 'enroll', '--issuer', issuer, '--subject', 'cy'], {
        SESSION_ISSUER: '',
        SESSION_JWKS_URI: '',
        SESSION_AUDIENCE: '',
      });
      expect(empty.code).toBe(2);
    },
  );
});
