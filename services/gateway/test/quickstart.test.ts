import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, killStartedGateways, running, sleep, startGatewayProcess } from './gateway-process';

// The embedded quickstart as a user meets it: the gateway as a real process on PGlite with
// DEV_AUTH=1, and the banner's copy-paste script run by bash against it.
const READY_TIMEOUT_MS = 120_000;

/** Variables that would steer the gateway away from the embedded quickstart. */
const STEERING = /^(PORT|HOST|DATABASE_URL|DATA_DIR|DEV_AUTH|NODE_ENV|SEARCH_PROVIDER|MEILI_.*|SESSION_.*|OAUTH_.*)$/;

const startGateway = (env: Record<string, string>) => startGatewayProcess(env, STEERING);
type Gateway = GatewayProcess;

/** Poll /readyz until 200 and, with `banner`, until the banner and the listening log line are out. */
async function waitReady(gw: Gateway, port: number, { banner }: { banner: boolean }): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!running(gw.child)) throw new Error(`gateway exited early:\n${gw.stdout()}\n${gw.stderr()}`);
    const status = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.status,
      () => 0,
    );
    // The banner is written at once; the logger's "gateway listening" line may follow it.
    const complete =
      !banner || (/# Example calls[\s\S]*\n=+\n/.test(gw.stdout()) && /"msg":"gateway listening"/.test(gw.stdout()));
    if (status === 200 && complete) return;
    await sleep(200);
  }
  throw new Error(`gateway not ready within ${READY_TIMEOUT_MS} ms:\n${gw.stdout()}\n${gw.stderr()}`);
}

/** Wait for exit; a process still running after `ms` fails the wait. */
async function waitExit(gw: Gateway, ms = 30_000) {
  const result = await Promise.race([gw.exited, sleep(ms).then(() => null)]);
  if (!result) throw new Error(`gateway still running after ${ms} ms:\n${gw.stderr()}`);
  return result;
}

/** The banner pieces, exactly as printed. */
function parseBanner(stdout: string) {
  const lines = stdout.split('\n');
  const tmsUrl = lines.find((l) => l.startsWith('export TMS_URL='));
  const token = lines.find((l) => l.startsWith('export TOKEN='));
  const start = lines.findIndex((l) => l.startsWith('# Example calls'));
  const end = lines.findIndex((l, i) => i > start && /^=+$/.test(l));
  if (!tmsUrl || !token || start < 0 || end < 0) throw new Error(`no quickstart banner in:\n${stdout}`);
  return { tmsUrl, token, tokenValue: token.slice('export TOKEN='.length), script: lines.slice(start + 1, end) };
}

function runBash(
  script: string,
  timeoutMs = 120_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: os.tmpdir(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

afterAll(killStartedGateways);

describe('dev quickstart (DEV_AUTH=1, embedded PGlite)', { timeout: 300_000 }, () => {
  let dataDir: string;

  beforeAll(() => {
    const missing = ['curl', 'jq', 'sha256sum'].filter((tool) => spawnSync('which', [tool]).status !== 0);
    if (missing.length > 0) throw new Error(`the quickstart script needs ${missing.join(', ')} on PATH`);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-quickstart-'));
  });
  afterAll(() => {
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a token and a script that works as printed; SIGTERM exits 0; the token survives a restart', async () => {
    const port = await freePort();
    const env = { DEV_AUTH: '1', DATA_DIR: dataDir, PORT: String(port) };
    const first = startGateway(env);
    await waitReady(first, port, { banner: true });

    // DEV_AUTH=1 without HOST listens on loopback only: its self-signed tokens stay on this machine.
    const listening = first
      .stdout()
      .split('\n')
      .filter((line) => line.includes('"msg":"gateway listening"'));
    expect(listening).toHaveLength(1);
    expect(JSON.parse(listening[0] as string)).toMatchObject({ host: '127.0.0.1', port });
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

    const banner = parseBanner(first.stdout());
    expect(banner.tmsUrl).toBe(`export TMS_URL=http://localhost:${port}`);
    expect(banner.tokenValue).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(banner.script.length).toBeGreaterThan(3);

    const idsFile = path.join(dataDir, 'quickstart-ids.txt');
    const run = await runBash(
      [
        'set -euo pipefail',
        banner.tmsUrl,
        banner.token,
        ...banner.script,
        `printf '%s %s' "$WS" "$MEM" > '${idsFile}'`,
      ].join('\n'),
    );
    expect(run.code, `script failed:\n${run.stderr}\n${run.stdout}`).toBe(0);

    // The verification prints its verdict, then the memory read-back prints the revision.
    const out = run.stdout.trim();
    expect(out.split('\n')[0]).toBe('"verified"');
    const revision = JSON.parse(out.slice(out.indexOf('{')));
    expect(revision).toMatchObject({ kind: 'claim', text: 'Ana prefers tea.', status: 'asserted' });
    expect(revision.evidence_ids).toHaveLength(1);
    const [workspaceId, memoryId] = fs.readFileSync(idsFile, 'utf8').split(' ');
    expect(memoryId).toBe(revision.memory_id);

    // A clean stop on SIGTERM.
    first.child.kill('SIGTERM');
    expect(await waitExit(first)).toEqual({ code: 0, signal: null });

    // The same DATA_DIR after a restart: the printed token still works and the memory is there.
    const second = startGateway(env);
    await waitReady(second, port, { banner: false });
    const headers = { authorization: `Bearer ${banner.tokenValue}` };
    const me = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { actor: unknown }).actor).toMatchObject({
      issuer: 'urn:tms:dev-auth',
      subject: 'dev-admin',
    });
    const memory = await fetch(`http://127.0.0.1:${port}/v1/memories/${memoryId}`, {
      headers: { ...headers, 'x-service-workspace': workspaceId ?? '' },
    });
    expect(memory.status).toBe(200);
    expect(((await memory.json()) as { view: { revision: { text: string } } }).view.revision.text).toBe(
      'Ana prefers tea.',
    );

    second.child.kill('SIGTERM');
    expect(await waitExit(second)).toEqual({ code: 0, signal: null });
  });
});

describe.concurrent('gateway configuration errors', { timeout: 120_000 }, () => {
  it('refuses DEV_AUTH=1 when NODE_ENV=production', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-prod-'));
    try {
      const gw = startGateway({
        DEV_AUTH: '1',
        NODE_ENV: 'production',
        DATA_DIR: dataDir,
        PORT: String(await freePort()),
      });
      const { code } = await waitExit(gw, 60_000);
      expect(code).not.toBe(0);
      expect(gw.stderr()).toMatch(/invalid configuration/);
      expect(gw.stderr()).toMatch(/DEV_AUTH: .*production/);
      // Refused before anything was written.
      expect(fs.readdirSync(dataDir)).toEqual([]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('lists every problem of a bad environment on stderr and exits non-zero', async () => {
    const gw = startGateway({ PORT: 'abc', SESSION_ISSUER: 'https://id.example.test/', DATA_DIR: os.tmpdir() });
    const { code } = await waitExit(gw, 60_000);
    expect(code).not.toBe(0);
    const problems = gw
      .stderr()
      .split('\n')
      .filter((line) => /^ {2}\S+: /.test(line))
      .map((line) => line.trim().split(':')[0]);
    expect(problems.sort()).toEqual(['PORT', 'SESSION_AUDIENCE', 'SESSION_JWKS_URI']);
    expect(gw.stderr()).toMatch(/SESSION_JWKS_URI: required when SESSION_ISSUER is set/);
    expect(gw.stdout()).not.toMatch(/gateway listening/);
  });
});
