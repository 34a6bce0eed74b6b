import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

// The gateway and the indexer as real processes from their sources (`node --import tsx
// services/<name>/src/main.ts`), for tests that kill them, cut their database connections or
// stop their database. Each runs in its own process group, so that a signal reaches every
// process it started (cluster workers).
const ROOT = path.resolve(import.meta.dirname, '../../..');
const START_TIMEOUT_MS = 60_000;

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  name: string;
  child: ChildProcess;
  /** Every line the process wrote (stdout and stderr). */
  output: string[];
  /** The process's JSON log lines, parsed. */
  logs: Record<string, unknown>[];
  /** Set once the process has exited; while null it is running. */
  exit: ProcessExit | null;
  exited: Promise<ProcessExit>;
  /** Signal the whole process group. */
  signal(name: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL if it has not stopped within 5 s. */
  stop(): Promise<ProcessExit>;
}

export interface GatewayProcess extends ServiceProcess {
  url: string;
  port: number;
}

/** The parent's environment minus anything that would steer the service, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(base)) {
    if (
      /^(DATABASE_URL|DATA_DIR|DEV_AUTH|NODE_ENV|SEARCH_PROVIDER|MEILI_.*|SESSION_.*|OAUTH_.*|JWKS_.*|RATE_LIMIT.*|PORT|HOST|LOG_LEVEL|GRAPHIQL|INDEXER.*|EMBEDDER|EMBEDDINGS_.*|WEBHOOK.*|TMS_.*|OTEL_.*)$/.test(
        key,
      )
    ) {
      delete base[key];
    }
  }
  return { ...base, ...env };
}

function spawnService(name: string, entry: string, env: Record<string, string>): ServiceProcess {
  // tsx as a loader inside the one node process, not its CLI: the CLI relays a signal to its
  // child and, when the child has not acknowledged it within 30 ms (a loaded machine), kills it
  // with SIGKILL and exits 143 itself, so a graceful stop could not be tested.
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    detached: true,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const service: ServiceProcess = {
    name,
    child,
    output: [],
    logs: [],
    exit: null,
    exited: new Promise<ProcessExit>((resolve) =>
      child.once('exit', (code, signal) => {
        service.exit = { code, signal };
        resolve(service.exit);
      }),
    ),
    signal(signalName) {
      try {
        process.kill(-(child.pid as number), signalName);
      } catch {
        /* already gone */
      }
    },
    async stop() {
      if (service.exit) return service.exit;
      service.signal('SIGTERM');
      const stopped = await Promise.race([service.exited, delay(5_000).then(() => null)]);
      // Also reaches a grandchild that outlived tsx.
      service.signal('SIGKILL');
      return stopped ?? (await service.exited);
    },
  };
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      service.output.push(line);
      try {
        service.logs.push(JSON.parse(line));
      } catch {
        /* not a log line */
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => service.output.push(chunk.toString('utf8')));
  return service;
}

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Start a gateway process on a free loopback port (the indexer external unless `env` says
 * otherwise); resolves once `/readyz` answers 200.
 */
export async function startGatewayProcess(name: string, env: Record<string, string>): Promise<GatewayProcess> {
  const service = spawnService(name, 'services/gateway/src/main.ts', {
    PORT: '0',
    HOST: '127.0.0.1',
    INDEXER: 'external',
    LOG_LEVEL: 'info',
    ...env,
  });
  const failed = (why: string) => new Error(`gateway ${name} ${why}:\n${service.output.join('\n')}`);
  const deadline = Date.now() + START_TIMEOUT_MS;
  let port = 0;
  while (port === 0) {
    if (service.exit) throw failed('exited before listening');
    if (Date.now() > deadline) throw failed('did not listen in time');
    const listening = service.logs.find((entry) => entry.msg === 'gateway listening');
    if (listening && typeof listening.port === 'number') port = listening.port;
    else await delay(50);
  }
  const gateway: GatewayProcess = Object.assign(service, { port, url: `http://127.0.0.1:${port}` });
  while (Date.now() < deadline) {
    if (service.exit) throw failed('exited before it was ready');
    const ready = await fetch(`${gateway.url}/readyz`).then(
      (res) => res.status,
      () => 0,
    );
    if (ready === 200) return gateway;
    await delay(100);
  }
  throw failed('was not ready in time');
}

/** Start an indexer process; resolves once it logged that it started. */
export async function startIndexerProcess(name: string, env: Record<string, string>): Promise<ServiceProcess> {
  const service = spawnService(name, 'services/indexer/src/main.ts', { INDEXER_POLL_MS: '100', ...env });
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!service.logs.some((entry) => entry.msg === 'indexer started')) {
    if (service.exit) throw new Error(`indexer ${name} exited before it started:\n${service.output.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`indexer ${name} did not start in time:\n${service.output.join('\n')}`);
    await delay(50);
  }
  return service;
}
