import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/**
 * The gateway as a real process from its sources, for tests that need one as an operator runs
 * it (quickstart, cluster mode): `node --import tsx`, one process whose signals are its own.
 * Neither `npx tsx` (npx does not pass SIGTERM on) nor the tsx CLI (it SIGKILLs a child that has
 * not acknowledged a relayed signal within 30 ms, which a loaded machine misses).
 */
export const ROOT = path.resolve(import.meta.dirname, '../../..');
const MAIN = 'services/gateway/src/main.ts';

export interface GatewayProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Both streams, interleaved as they arrived. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

const started: ChildProcess[] = [];

/**
 * Start the gateway in its own process group (so that cleanup reaches tsx's child and every
 * cluster worker), with this process's environment minus the variables `steering` matches
 * (those that would point it elsewhere), `LOG_LEVEL=info`, then `env`.
 */
export function startGatewayProcess(env: Record<string, string>, steering: RegExp): GatewayProcess {
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!steering.test(key)) base[key] = value;
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    cwd: ROOT,
    env: { ...base, LOG_LEVEL: 'info', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let out = '';
  let err = '';
  let both = '';
  child.stdout?.on('data', (d) => {
    out += d;
    both += d;
  });
  child.stderr?.on('data', (d) => {
    err += d;
    both += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => out, stderr: () => err, output: () => both, exited };
}

/** Anything a test left running: kill its whole group. */
export function killStartedGateways(): void {
  for (const child of started.splice(0)) {
    if (child.pid && running(child)) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
