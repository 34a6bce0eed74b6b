import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { Ledger } from '@tms/ledger';
import { ApiClient, type CallResult, createTestDatabase, type TestDatabase, TestIssuer } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectUnauthenticated } from './shapes';

// Two real gateway processes (`tsx services/gateway/src/main.ts`, what `pnpm start` runs) over one
// Postgres database. Whatever one process changes about who may see what, the other honours on
// its very next request: nothing either process cached may keep serving private data.
const ROOT = path.resolve(import.meta.dirname, '../../..');
const START_TIMEOUT_MS = 60_000;

interface GatewayProcess {
  name: string;
  child: ChildProcess;
  url: string;
  output: string[];
  exited: Promise<void>;
}

/** The parent's environment minus anything that would steer the gateway, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(base)) {
    if (
      /^(DATABASE_URL|DATA_DIR|DEV_AUTH|NODE_ENV|SEARCH_PROVIDER|MEILI_.*|SESSION_.*|OAUTH_.*|JWKS_.*|RATE_LIMITS|PORT|HOST|LOG_LEVEL|GRAPHIQL|INDEXER|TMS_.*)$/.test(
        key,
      )
    ) {
      delete base[key];
    }
  }
  return { ...base, ...env };
}

/** Signal the process group (tsx runs the gateway in a child node process). */
function signalGroup(child: ChildProcess, name: NodeJS.Signals): void {
  try {
    process.kill(-(child.pid as number), name);
  } catch {
    /* already gone */
  }
}

async function stopGateway(p: GatewayProcess): Promise<void> {
  signalGroup(p.child, 'SIGTERM');
  const stopped = await Promise.race([
    p.exited.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
  ]);
  // Also reaches a grandchild that outlived tsx, and a gateway that ignored SIGTERM.
  signalGroup(p.child, 'SIGKILL');
  if (!stopped) await Promise.race([p.exited, new Promise((resolve) => setTimeout(resolve, 5_000))]);
}

/** Start a gateway process on a free loopback port; resolves once `/readyz` answers 200. */
async function startGateway(name: string, env: Record<string, string>, running: GatewayProcess[]) {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['services/gateway/src/main.ts'], {
    cwd: ROOT,
    detached: true,
    env: childEnv({ PORT: '0', HOST: '127.0.0.1', INDEXER: 'external', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const p: GatewayProcess = { name, child, url: '', output, exited };
  running.push(p);

  let onPort: (port: number) => void = () => {};
  const listening = new Promise<number>((resolve) => {
    onPort = resolve;
  });
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      output.push(line);
      try {
        const entry = JSON.parse(line);
        if (entry.msg === 'gateway listening' && typeof entry.port === 'number') onPort(entry.port);
      } catch {
        /* not a log line */
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));

  const failed = (why: string) => new Error(`gateway ${name} ${why}:\n${output.join('\n')}`);
  const deadline = Date.now() + START_TIMEOUT_MS;
  const port = await Promise.race([
    listening,
    exited.then(() => Promise.reject(failed('exited before listening'))),
    new Promise<never>((_, reject) => setTimeout(() => reject(failed('did not listen in time')), START_TIMEOUT_MS)),
  ]);
  p.url = `http://127.0.0.1:${port}`;
  while (Date.now() < deadline) {
    const ready = await fetch(`${p.url}/readyz`).then(
      (res) => res.status,
      () => 0,
    );
    if (ready === 200) return p;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw failed('was not ready in time');
}

/** The memory's text: it must never appear in a refusal. */
const SECRET_TEXT = `Ana's door code is ${crypto.randomInt(1000, 9999)}.`;

function expectNotFound(res: CallResult, why: string): void {
  expect(res.status, `${why}: ${res.text}`).toBe(404);
  expect(res.body?.error?.code, why).toBe('not_found');
  expect(JSON.stringify(res.body), why).not.toContain(SECRET_TEXT);
}

function expectMemory(res: CallResult, why: string): void {
  expect(res.status, `${why}: ${res.text}`).toBe(200);
  expect(res.body.view.revision.text, why).toBe(SECRET_TEXT);
}

describe('revocation across two gateway processes on one Postgres database', () => {
  let database: TestDatabase | undefined;
  let issuer: TestIssuer | undefined;
  let ledger: Ledger | undefined;
  const running: GatewayProcess[] = [];
  let A: GatewayProcess;
  let B: GatewayProcess;

  let ws: string;
  let ns: string;
  let memoryId: string;
  let owner: { actorId: string; a: ApiClient; b: ApiClient };
  let installationId: string;
  let installationCredential: { id: string; secret: string };
  let serviceKey: { id: string; secret: string };
  const memoryPath = () => `/v1/memories/${memoryId}`;

  /** A credential's client on a process (the secret binds it to its workspace: no header). */
  const as = (p: GatewayProcess, secret: string) => new ApiClient(p.url, secret, null);

  /** Replace the namespace's grant list (grants.put replaces, so every grant kept goes in). */
  async function putGrants(
    client: ApiClient,
    keep: { installation?: boolean; serviceKey?: boolean; actor?: string },
  ): Promise<void> {
    const grants: unknown[] = [];
    if (keep.installation) {
      grants.push({
        target: { kind: 'installation', product_installation_id: installationId },
        capabilities: ['read', 'observe'],
        inherit: true,
      });
    }
    if (keep.serviceKey) {
      grants.push({
        target: { kind: 'credential', credential_id: serviceKey.id },
        capabilities: ['read'],
        inherit: false,
      });
    }
    if (keep.actor)
      grants.push({ target: { kind: 'actor', actor_id: keep.actor }, capabilities: ['read'], inherit: false });
    const res = await client.put(`/v1/namespaces/${ns}/grants`, { grants });
    expect(res.status, res.text).toBe(200);
  }

  async function issue(client: ApiClient, body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
    const res = await client.post('/v1/credentials', body);
    expect(res.status, res.text).toBe(200);
    return { id: res.body.credential.id, secret: res.body.secret };
  }

  async function human(subject: string, enroll: boolean) {
    if (enroll) await ledger?.stores.directory.enroll((issuer as TestIssuer).sessionIssuer, subject, Date.now() / 1000);
    const token = await (issuer as TestIssuer).sessionToken(subject);
    const me = await new ApiClient(A.url, token).get('/v1/me');
    expect(me.status, me.text).toBe(200);
    return { token, actorId: me.body.actor.id as string };
  }

  beforeAll(async () => {
    issuer = await TestIssuer.start();
    database = await createTestDatabase('tms_revocation');
    ledger = await Ledger.open({ databaseUrl: database.url });
    await ledger.migrate();
    const env = { DATABASE_URL: database.url, ...issuer.env() };
    [A, B] = await Promise.all([startGateway('A', env, running), startGateway('B', env, running)]);

    // The owner creates a workspace, a namespace and a memory on A.
    const o = await human(`owner-${crypto.randomBytes(4).toString('hex')}`, true);
    const created = await new ApiClient(A.url, o.token).post('/v1/workspaces', { name: 'revocation' });
    expect(created.status, created.text).toBe(200);
    ws = created.body.workspace.id;
    owner = { actorId: o.actorId, a: new ApiClient(A.url, o.token, ws), b: new ApiClient(B.url, o.token, ws) };
    const namespace = await owner.a.post('/v1/namespaces', { parent_id: null, name: 'private' });
    expect(namespace.status, namespace.text).toBe(200);
    ns = namespace.body.namespace.id;
    const memory = await owner.a.post('/v1/memories', {
      namespace_id: ns,
      kind: 'claim',
      text: SECRET_TEXT,
      valid_from: 1700000000,
    });
    expect(memory.status, memory.text).toBe(200);
    memoryId = memory.body.memory.id;

    // An installation credential and a service key, both granted read on the namespace (on A).
    const installation = await owner.a.post('/v1/installations', { name: 'crm' });
    expect(installation.status, installation.text).toBe(200);
    installationId = installation.body.installation.id;
    installationCredential = await issue(owner.a, {
      kind: 'installation',
      product_installation_id: installationId,
      name: 'crm-prod',
      capabilities: ['read', 'observe'],
    });
    serviceKey = await issue(owner.a, { kind: 'service_key', name: 'nightly', capabilities: ['read'] });
    await putGrants(owner.a, { installation: true, serviceKey: true });
  }, 180_000);

  afterAll(async () => {
    await Promise.all(running.map((p) => stopGateway(p)));
    await ledger?.close();
    await issuer?.close();
    await database?.drop();
  }, 60_000);

  it('both processes serve the memory to the owner and to each credential (caches warm)', async () => {
    for (const p of [A, B]) {
      expectMemory(await new ApiClient(p.url, owner.a.token, ws).get(memoryPath()), `owner on ${p.name}`);
      expectMemory(
        await as(p, installationCredential.secret).get(memoryPath()),
        `installation credential on ${p.name}`,
      );
      expectMemory(await as(p, serviceKey.secret).get(memoryPath()), `service key on ${p.name}`);
    }
  });

  it('a credential revoked on A is refused on the very next request on B (and on A)', async () => {
    expectMemory(await as(B, installationCredential.secret).get(memoryPath()), 'before revocation, on B');
    expectMemory(await as(A, installationCredential.secret).get(memoryPath()), 'before revocation, on A');
    const revoked = await owner.a.post(`/v1/credentials/${installationCredential.id}/revoke`, {});
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.credential.revoked_at).not.toBeNull();

    expectUnauthenticated(
      await as(B, installationCredential.secret).get(memoryPath()),
      'revoked on A, next request on B',
    );
    expectUnauthenticated(
      await as(A, installationCredential.secret).get(memoryPath()),
      'revoked on A, next request on A',
    );
    expectUnauthenticated(await as(B, installationCredential.secret).get('/v1/me'), 'revoked, /v1/me on B');
    // The other credential is untouched.
    expectMemory(await as(B, serviceKey.secret).get(memoryPath()), 'service key still reads on B');
  });

  it('a grant removed on B is honoured on the very next request on A (and on B)', async () => {
    expectMemory(await as(A, serviceKey.secret).get(memoryPath()), 'before the grant is removed, on A');
    expectMemory(await as(B, serviceKey.secret).get(memoryPath()), 'before the grant is removed, on B');
    await putGrants(owner.b, { installation: true });

    expectNotFound(await as(A, serviceKey.secret).get(memoryPath()), 'grant removed on B, next request on A');
    expectNotFound(await as(B, serviceKey.secret).get(memoryPath()), 'grant removed on B, next request on B');
    // Still authenticated: only its access went.
    expect((await as(A, serviceKey.secret).get('/v1/me')).status).toBe(200);
  });

  it('a service key revoked on B is refused on the very next request on A (and on B)', async () => {
    expect((await as(A, serviceKey.secret).get('/v1/me')).status, 'before revocation, on A').toBe(200);
    expect((await as(B, serviceKey.secret).get('/v1/me')).status, 'before revocation, on B').toBe(200);
    const revoked = await owner.b.post(`/v1/credentials/${serviceKey.id}/revoke`, {});
    expect(revoked.status, revoked.text).toBe(200);

    expectUnauthenticated(await as(A, serviceKey.secret).get('/v1/me'), 'revoked on B, next request on A');
    expectUnauthenticated(await as(B, serviceKey.secret).get('/v1/me'), 'revoked on B, next request on B');
    expectUnauthenticated(await as(A, serviceKey.secret).get(memoryPath()), 'revoked on B, memory on A');
  });

  it('a membership removed on A is honoured on the very next request on B (and on A)', async () => {
    const bob = await human(`bob-${crypto.randomBytes(4).toString('hex')}`, false);
    const admitted = await owner.a.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: bob.actorId, role: 'member' },
      ],
    });
    expect(admitted.status, admitted.text).toBe(200);
    await putGrants(owner.a, { installation: true, actor: bob.actorId });
    const bobOn = (p: GatewayProcess) => new ApiClient(p.url, bob.token, ws);
    expectMemory(await bobOn(B).get(memoryPath()), 'member with a grant, on B');
    expectMemory(await bobOn(A).get(memoryPath()), 'member with a grant, on A');

    // Only the membership goes; the grant naming him stays.
    const removed = await owner.a.put(`/v1/workspaces/${ws}/members`, {
      members: [{ actor_id: owner.actorId, role: 'admin' }],
    });
    expect(removed.status, removed.text).toBe(200);
    expect(removed.body.members).toHaveLength(1);

    expectNotFound(await bobOn(B).get(memoryPath()), 'membership removed on A, next request on B');
    expectNotFound(await bobOn(A).get(memoryPath()), 'membership removed on A, next request on A');
    // The owner is unaffected on either process.
    expectMemory(await owner.b.get(memoryPath()), 'owner on B');
  });

  it("an installation revoked on A takes its credentials' access on the very next request on B (and on A)", async () => {
    const second = await issue(owner.a, {
      kind: 'installation',
      product_installation_id: installationId,
      name: 'crm-prod-2',
      capabilities: ['read'],
    });
    expectMemory(await as(B, second.secret).get(memoryPath()), 'second credential on B');
    expectMemory(await as(A, second.secret).get(memoryPath()), 'second credential on A');
    const revoked = await owner.a.post(`/v1/installations/${installationId}/revoke`, {});
    expect(revoked.status, revoked.text).toBe(200);

    expectUnauthenticated(await as(B, second.secret).get(memoryPath()), 'installation revoked on A, next request on B');
    expectUnauthenticated(await as(A, second.secret).get(memoryPath()), 'installation revoked on A, next request on A');
  });
});
