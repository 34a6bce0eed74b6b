import type { AddressInfo } from 'node:net';
import type { DevIssuer } from '@tms/auth';
import { composeDomain } from '@tms/composition';
import type { Ledger } from '@tms/ledger';
import { Indexer, indexerMetrics, type SearchProvider } from '@tms/search';
import pino, { type Logger } from 'pino';
import { createApp } from './app';
import type { GatewayEnv } from './env';
import { GatewayMetrics } from './metrics';

export interface RunningGateway {
  url: string;
  port: number;
  ledger: Ledger;
  devIssuer: DevIssuer | null;
  logger: Logger;
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** Count SQL statements (tests). */
  onQuery?: (sqlText: string) => void;
  logger?: Logger;
  /** Operation timeout override (tests provoke timeouts with a short one). */
  timeoutMs?: number;
  /** False in all but one cluster worker: the embedded indexer runs in one process only. */
  indexer?: boolean;
}

/** The indexer inside the gateway process (the embedded PGlite default, or INDEXER=embedded). */
function embeddedIndexer(ledger: Ledger, search: SearchProvider, metrics: GatewayMetrics, logger: Logger): Indexer {
  const counters = indexerMetrics(metrics.registry, ledger, search.name);
  return new Indexer(ledger, search, {
    pollMs: 500,
    onBatch: counters.onBatch,
    onError: (error, attempt) => {
      counters.onError();
      logger.warn({ err: error, attempt }, 'indexing failed; retrying with backoff');
    },
  });
}

/** Compose and start the gateway from a parsed environment. */
export async function startGateway(env: GatewayEnv, options: GatewayOptions = {}): Promise<RunningGateway> {
  const logger =
    options.logger ?? pino({ level: env.LOG_LEVEL, redact: ['req.headers.authorization', 'authorization'] });
  // The ledger, the token verifier and the domain are composed like `svc mcp` composes them.
  const { domain, ledger, devIssuer, search } = await composeDomain(env, {
    onQuery: options.onQuery,
    holder: 'gateway',
  });
  const metrics = new GatewayMetrics();
  const indexer =
    options.indexer !== false && (env.INDEXER ?? (env.DATABASE_URL ? 'external' : 'embedded')) === 'embedded'
      ? embeddedIndexer(ledger, search, metrics, logger)
      : null;
  const server = createApp({
    domain,
    ledger,
    metrics,
    logger,
    timeoutMs: options.timeoutMs,
    httpLimits: {
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.HTTP_KEEPALIVE_TIMEOUT_MS,
      maxConnections: env.HTTP_MAX_CONNECTIONS,
    },
    graphql: {
      production: env.NODE_ENV === 'production',
      maxStreams: env.GRAPHQL_MAX_STREAMS,
      graphiql: {
        enabled: env.GRAPHIQL !== '0',
        devToken: devIssuer ? () => devIssuer.sessionToken() : null,
      },
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(env.PORT, env.HOST, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const indexerDone = indexer?.run().catch((error) => logger.error({ err: error }, 'embedded indexer stopped'));
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    ledger,
    devIssuer,
    logger,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      indexer?.stop();
      await indexerDone;
      await ledger.close();
    },
  };
}
