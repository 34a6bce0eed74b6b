import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEV_ISSUER } from '@tms/auth';
import { Ledger } from '@tms/ledger';
import { ApiClient, cliLines } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The embedded PGlite ledger belongs to one process (decisions §9): with a gateway running on a
// DATA_DIR, every other process that would open it (each `svc` command that touches the ledger,
// a second gateway) is refused at once with one line naming the holder, and writes nothing.
// Real processes throughout: tsx runs the gateway and the CLI as `pnpm start` / `pnpm svc` do.
const ROOT = path.resolve(import.meta.dirname, '../../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const START_TIMEOUT_MS = 120_000;
const SLOW = { timeout: 600_000 };

const STEERING =
  /^(DATABASE_URL|DATA_DIR|DEV_AUTH|NODE_ENV|SEARCH_PROVIDER|MEILI_.*|SESSION_.*|OAUTH_.*|JWKS_.*|RATE_LIMITS|PORT|HOST|LOG_LEVEL|GRAPHIQL|INDEXER|TMS_.*)$/;
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!STEERING.test(key)) base[key] = value;
  return { ...base, ...env };
}

interface Gateway {
  child: ChildProcess;
  /** The pid of the node process that serves (tsx runs it as its child), from its log. */
  pid: number;
  url: string;
  output: string[];
  exited: Promise<number | null>;
}

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string[];
  ms: number;
  timedOut: boolean;
}

/**
 * Run `tsx <script> ...args` to its end and time it from spawn to exit. A process still running
 * after 30 s (one that was not refused) is killed with its whole group: tsx's child holds the pipes.
 */
function runToExit(script: string, args: string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const begun = performance.now();
    const child = spawn(TSX, [script, ...args], {
      cwd: ROOT,
      env: childEnv(env),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup(child, 'SIGKILL');
    }, 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr: cliLines(stderr), ms: Math.round(performance.now() - begun), timedOut });
    });
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-(child.pid as number), signal);
  } catch {
    /* gone */
  }
}

function spawnGateway(env: Record<string, string>, running: Gateway[]): Gateway & { listening: Promise<void> } {
  // Node itself, with tsx as a loader: the tsx CLI would stand between the test's signals and the
  // gateway, and kill it (exit 143) when its event loop does not answer the relay within 30 ms.
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/gateway/src/main.ts'], {
    cwd: ROOT,
    detached: true,
    env: childEnv({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const gateway = { child, pid: 0, url: '', output, exited } as Gateway;
  running.push(gateway);
  const listening = new Promise<void>((resolve) => {
    let buffer = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        output.push(line);
        try {
          const entry = JSON.parse(line);
          if (entry.msg === 'gateway listening') {
            gateway.pid = entry.pid;
            gateway.url = `http://127.0.0.1:${entry.port}`;
            resolve();
          }
        } catch {
          /* the quickstart banner */
        }
      }
    });
  });
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  return Object.assign(gateway, { listening });
}

/** Start a gateway and wait until /readyz answers 200. */
async function startGateway(env: Record<string, string>, running: Gateway[]): Promise<Gateway> {
  const gateway = spawnGateway(env, running);
  const failed = (why: string) => new Error(`gateway ${why}:\n${gateway.output.join('\n')}`);
  await Promise.race([
    gateway.listening,
    gateway.exited.then(() => Promise.reject(failed('exited before listening'))),
    new Promise<never>((_, reject) => setTimeout(() => reject(failed('did not listen in time')), START_TIMEOUT_MS)),
  ]);
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const status = await fetch(`${gateway.url}/readyz`).then(
      (res) => res.status,
      () => 0,
    );
    if (status === 200) return gateway;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw failed('was not ready in time');
}

/** SIGTERM to tsx, which relays it to the gateway and exits with its code; SIGKILL to the group. */
async function stopGateway(gateway: Gateway, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (signal === 'SIGTERM') gateway.child.kill('SIGTERM');
  else signalGroup(gateway.child, signal);
  const code = await Promise.race([
    gateway.exited,
    new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 15_000)),
  ]);
  signalGroup(gateway.child, 'SIGKILL');
  return code === 'late' ? await gateway.exited : code;
}

/** Every path under DATA_DIR, and the content of each file outside PGlite's own folder. */
function snapshot(dataDir: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const name of (fs.readdirSync(dataDir, { recursive: true }) as string[]).sort()) {
    const full = path.join(dataDir, name);
    entries[name] =
      name.startsWith(`pglite${path.sep}`) || fs.statSync(full).isDirectory() ? '' : fs.readFileSync(full, 'utf8');
  }
  return entries;
}

const refusal = (pid: number) =>
  new RegExp(
    `^(svc: )?the embedded ledger at \\S+ is in use by pid ${pid} \\(gateway, started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); stop it or set DATABASE_URL$`,
  );

describe('one process owns the embedded ledger', SLOW, () => {
  const running: Gateway[] = [];
  const dataDirs: string[] = [];
  let dataDir: string;
  let env: Record<string, string>;
  let gateway: Gateway;
  let token: string;
  let memoryPath: string;
  let workspace: string;
  const memoryText = `lock probe ${process.pid}`;

  const freshDataDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-embedded-lock-'));
    dataDirs.push(dir);
    return dir;
  };

  async function expectMemoryReadsBack(on: Gateway): Promise<void> {
    const res = await new ApiClient(on.url, token, workspace).get(memoryPath);
    expect(res.status, res.text).toBe(200);
    expect(res.body.view.revision.text).toBe(memoryText);
  }

  beforeAll(async () => {
    dataDir = freshDataDir();
    env = { DATA_DIR: dataDir, DEV_AUTH: '1' };
    gateway = await startGateway(env, running);
    // Printing the dev token reads the dev key only: it works beside a running gateway.
    const printed = await runToExit('services/cli/src/main.ts', ['token'], env);
    expect(printed.code, printed.stderr.join('\n')).toBe(0);
    token = printed.stdout.trim();

    const api = new ApiClient(gateway.url, token);
    const ws = await api.post('/v1/workspaces', { name: 'lock' });
    expect(ws.status, ws.text).toBe(200);
    workspace = ws.body.workspace.id;
    const ns = await api.in(workspace).post('/v1/namespaces', { parent_id: null, name: 'notes' });
    expect(ns.status, ns.text).toBe(200);
    const memory = await api.in(workspace).post('/v1/memories', {
      namespace_id: ns.body.namespace.id,
      kind: 'episode',
      text: memoryText,
      valid_from: 1700000000,
    });
    expect(memory.status, memory.text).toBe(200);
    memoryPath = `/v1/memories/${memory.body.memory.id}`;
  });

  afterAll(async () => {
    for (const g of running) await stopGateway(g, 'SIGKILL');
    for (const dir of dataDirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses every svc command that opens the ledger at once, with one line naming the gateway, writing nothing', async () => {
    const commands: { name: string; args: string[]; env?: Record<string, string> }[] = [
      { name: 'admin enroll', args: ['admin', 'enroll', '--issuer', DEV_ISSUER, '--subject', 'refused-enroll'] },
      { name: 'admin actor', args: ['admin', 'actor', '--issuer', DEV_ISSUER, '--subject', 'refused-actor'] },
      { name: 'admin credential list', args: ['admin', 'credential', 'list', '--workspace', workspace] },
      { name: 'admin workspace create', args: ['admin', 'workspace', 'create', '--name', 'refused'] },
      { name: 'migrate', args: ['migrate'] },
      { name: 'token --subject', args: ['token', '--subject', 'refused-token'] },
      { name: 'index status', args: ['index', 'status'] },
      { name: 'index rebuild', args: ['index', 'rebuild'] },
      { name: 'mcp', args: ['mcp'], env: { TMS_TOKEN: token, TMS_WORKSPACE: workspace } },
    ];
    const before = snapshot(dataDir);
    expect(Object.keys(before)).toContain('pglite.lock');
    const times: string[] = [];
    for (const command of commands) {
      const run = await runToExit('services/cli/src/main.ts', command.args, { ...env, ...command.env });
      times.push(`svc ${command.name}: ${run.ms} ms`);
      expect(run.timedOut, command.name).toBe(false);
      expect(run.code, `${command.name}: ${run.stdout} ${run.stderr.join('\n')}`).toBe(1);
      expect(run.stderr, command.name).toHaveLength(1);
      expect(run.stderr[0], command.name).toMatch(refusal(gateway.pid));
      expect(run.stdout, command.name).toBe('');
      expect(snapshot(dataDir), command.name).toEqual(before);
    }
    // From spawn to exit, tsx's own start included (reported, not asserted): `svc help`, which
    // loads the same modules and opens nothing, is the baseline.
    const help = await runToExit('services/cli/src/main.ts', ['help'], env);
    expect(help.code).toBe(0);
    console.log(`refused at once (baseline: svc help ${help.ms} ms):\n  ${times.join('\n  ')}`);
    await expectMemoryReadsBack(gateway);
  });

  it('refuses a second gateway on the same folder with one line, and the first keeps serving', async () => {
    const before = snapshot(dataDir);
    const second = await runToExit('services/gateway/src/main.ts', [], { ...env, PORT: '0', HOST: '127.0.0.1' });
    console.log(`second gateway refused in ${second.ms} ms`);
    expect(second.timedOut).toBe(false);
    expect(second.code, second.stderr.join('\n')).toBe(1);
    expect(second.stderr).toHaveLength(1);
    expect(second.stderr[0]).toMatch(refusal(gateway.pid));
    expect(second.stdout).toBe('');
    expect(snapshot(dataDir)).toEqual(before);
    await expectMemoryReadsBack(gateway);
  });

  it('frees the folder on a clean stop: nothing refused was written, and the data survives a restart', async () => {
    expect(await stopGateway(gateway)).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);

    // The refused commands wrote nothing.
    const ledger = await Ledger.open({ dataDir: path.join(dataDir, 'pglite') });
    try {
      for (const subject of ['refused-enroll', 'refused-token']) {
        expect(await ledger.stores.directory.isEnrolled(DEV_ISSUER, subject)).toBe(false);
      }
      expect(await ledger.stores.directory.findActor(DEV_ISSUER, 'refused-actor')).toBeFalsy();
    } finally {
      await ledger.close();
    }
    // With no gateway, the same command succeeds.
    const enrolled = await runToExit(
      'services/cli/src/main.ts',
      ['admin', 'enroll', '--issuer', DEV_ISSUER, '--subject', 'later'],
      env,
    );
    expect(enrolled.code, enrolled.stderr.join('\n')).toBe(0);

    gateway = await startGateway(env, running);
    await expectMemoryReadsBack(gateway);
  });

  it('opens again after its holder was killed with SIGKILL', async () => {
    await stopGateway(gateway, 'SIGKILL');
    // The killed holder left its lock behind; the next start judges it stale.
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'pglite.lock'), 'utf8')).pid).toBe(gateway.pid);
    gateway = await startGateway(env, running);
    await expectMemoryReadsBack(gateway);
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'pglite.lock'), 'utf8')).pid).toBe(gateway.pid);
    expect(await stopGateway(gateway)).toBe(0);
  });

  it('lets exactly one of two gateways starting together on a fresh folder open it', async () => {
    const shared = { DATA_DIR: freshDataDir() };
    const racers = [spawnGateway(shared, running), spawnGateway(shared, running)];
    // Each either listens or exits; the loser exits with the winner's pid.
    const outcomes = await Promise.all(
      racers.map((r) =>
        Promise.race([
          r.listening.then(() => 'listening' as const),
          r.exited.then((code) => `exited ${code}`),
          new Promise<string>((resolve) => setTimeout(() => resolve('timeout'), START_TIMEOUT_MS)),
        ]),
      ),
    );
    expect(outcomes.sort(), racers.map((r) => r.output.join('\n')).join('\n---\n')).toEqual(['exited 1', 'listening']);
    const winner = racers.find((r) => r.url !== '') as Gateway;
    const loser = racers.find((r) => r !== winner) as Gateway;
    const lines = cliLines(loser.output.join(''));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(refusal(winner.pid));
    expect(await stopGateway(winner)).toBe(0);
  });
});
