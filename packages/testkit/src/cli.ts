import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';

// The operator CLI as a real process, as `pnpm svc` runs it: `scripts/ensure-built.mjs` (a build
// when a source changed since the last one, under a lock other processes share), then the bundle
// `dist/bin/svc.mjs` with plain node. Checked once per test process.
const ROOT = path.resolve(import.meta.dirname, '../../..');
let built = false;

function ensureBuilt(): void {
  if (built) return;
  const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts/ensure-built.mjs')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`scripts/ensure-built.mjs failed: ${run.stderr}`);
  built = true;
}

export interface SvcRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The parent's environment minus anything that would steer the CLI, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(base)) {
    if (/^(DATABASE_URL|DATA_DIR|DEV_AUTH|NODE_ENV|SEARCH_PROVIDER|MEILI_.*|SESSION_.*|OAUTH_.*|TMS_.*)$/.test(key)) {
      delete base[key];
    }
  }
  return { ...base, ...env };
}

export function runSvc(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<SvcRun> {
  ensureBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--enable-source-maps', 'dist/bin/svc.mjs', ...args], {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** stderr without npm's own chatter (npx may warn about the user's npm config). */
export const cliLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('npm warn'))
    .map((line) => line.trimEnd());
