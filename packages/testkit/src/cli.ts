import { spawn } from 'node:child_process';
import path from 'node:path';

// The operator CLI as a real process: `npx tsx services/cli/src/main.ts` from the repository
// root is what `pnpm svc` runs.
const ROOT = path.resolve(import.meta.dirname, '../../..');

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
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'services/cli/src/main.ts', ...args], {
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
