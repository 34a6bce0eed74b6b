import cluster, { type Worker } from 'node:cluster';
import { DEV_SUBJECT, DevIssuer } from '@tms/auth';
import { EmbeddedLedgerLockedError } from '@tms/ledger';
import { createLogger } from '@tms/telemetry';
import { type GatewayEnv, parseEnv } from './env';
import { startGateway } from './gateway';
import { quickstartBanner } from './quickstart';

let env: GatewayEnv;
try {
  env = parseEnv(process.env);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}

/** A worker that dies after serving is replaced after this pause (no tight crash loop). */
const RESTART_DELAY_MS = 1000;

/**
 * GATEWAY_WORKERS > 1: this process forks the workers, which share the port (`node:cluster`),
 * forwards SIGINT/SIGTERM to them and replaces a worker that dies after it was serving. A worker
 * that fails before it listens stops the whole cluster: its cause (configuration, database) would
 * fail its replacement too. Each worker logs `gateway listening` with its pid.
 */
async function runPrimary(env: GatewayEnv): Promise<void> {
  const logger = createLogger({ service: env.OTEL_SERVICE_NAME, level: env.LOG_LEVEL });
  // The dev issuer's key is created here, once, so that every worker signs and verifies with it.
  if (env.DEV_AUTH === '1' && env.NODE_ENV !== 'production') await DevIssuer.loadOrCreate(env.DATA_DIR);
  const live = new Set<Worker>();
  const listening = new Set<Worker>();
  let stopping = false;
  let exitCode = 0;

  const fork = (slot: number) => {
    const worker = cluster.fork({ GATEWAY_WORKER_SLOT: String(slot) });
    live.add(worker);
    worker.once('listening', () => listening.add(worker));
    worker.once('exit', (code, signal) => {
      live.delete(worker);
      const served = listening.delete(worker);
      if (stopping) {
        if (code !== 0) exitCode = 1;
        if (live.size === 0) process.exit(exitCode);
        return;
      }
      if (!served) {
        logger.error({ slot, code, signal }, 'gateway worker failed to start; stopping');
        stop(1);
        return;
      }
      logger.error({ slot, pid: worker.process.pid, code, signal }, 'gateway worker died; restarting it');
      setTimeout(() => {
        if (!stopping) fork(slot);
      }, RESTART_DELAY_MS);
    });
  };

  const stop = (code: number, signal: NodeJS.Signals = 'SIGTERM') => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    if (live.size === 0) process.exit(exitCode);
    for (const worker of live) worker.process.kill(signal);
  };

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      logger.info({ signal, workers: env.GATEWAY_WORKERS }, 'shutting down the gateway workers');
      stop(0, signal);
    });
  }
  logger.info({ workers: env.GATEWAY_WORKERS, port: env.PORT }, 'starting gateway workers');
  for (let slot = 0; slot < env.GATEWAY_WORKERS; slot += 1) fork(slot);
}

async function runGateway(env: GatewayEnv): Promise<void> {
  // One worker of a cluster (slot 0) runs an embedded indexer and prints the quickstart banner.
  const first = (env.GATEWAY_WORKER_SLOT ?? 0) === 0;
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    gateway = await startGateway(env, { indexer: first });
  } catch (error) {
    // Another process owns the embedded ledger: its one-line reason, not a stack trace.
    if (!(error instanceof EmbeddedLedgerLockedError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  // Before the listening line: whoever waits for that line may stop the gateway at once.
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      gateway.logger.info({ signal }, 'shutting down');
      gateway.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
  gateway.logger.info(
    // pid is on every line already (the logger's base).
    {
      host: gateway.host,
      port: gateway.port,
      metrics_port: gateway.metricsPort ?? undefined,
      ledger: gateway.ledger.driver,
      worker: env.GATEWAY_WORKER_SLOT,
    },
    'gateway listening',
  );
  // Written at once, not with the next buffered lines: operators and supervisors wait for it.
  gateway.logger.flush();
  if (gateway.devIssuer && first) {
    const token = await gateway.devIssuer.sessionToken(DEV_SUBJECT);
    process.stdout.write(
      quickstartBanner(`http://localhost:${gateway.port}`, token, {
        console: env.CONSOLE === 'on',
        graphiql: env.GRAPHIQL !== '0',
      }),
    );
  }
}

if (env.GATEWAY_WORKERS > 1 && cluster.isPrimary) await runPrimary(env);
else await runGateway(env);
