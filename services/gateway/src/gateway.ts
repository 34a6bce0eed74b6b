import type { AddressInfo } from 'node:net';
import type { DevIssuer } from '@tms/auth';
import { checkEmbedder, composeDomain, rateLimitStoreLog, untilMigrated } from '@tms/composition';
import type { Ledger } from '@tms/ledger';
import {
  BuiltinEmbedder,
  builtinEmbedderMetrics,
  type Embedder,
  type IndexArm,
  Indexer,
  IndexLagWatch,
  indexArms,
  indexerMetrics,
  indexLagMetrics,
  type SearchProvider,
} from '@tms/search';
import { createLogger, startTracing } from '@tms/telemetry';
import { WebhookDeliveryWorker, webhookMetrics } from '@tms/webhooks';
import type { Logger } from 'pino';
import { createApp, createMetricsServer } from './app';
import type { GatewayEnv } from './env';
import { GatewayMetrics } from './metrics';

export interface RunningGateway {
  url: string;
  port: number;
  /** The address the API listens on (`127.0.0.1`, `::`, ...). */
  host: string;
  /** The port of /metrics when METRICS_PORT moved it off the API port, else null. */
  metricsPort: number | null;
  ledger: Ledger;
  devIssuer: DevIssuer | null;
  logger: Logger;
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** Count SQL statements (tests). */
  onQuery?: (sqlText: string) => void;
  /** Every statement sent to Postgres with its connection and parameters (the partitioned-layout test). */
  onStatement?: (connection: number, sqlText: string, params: unknown[]) => void;
  logger?: Logger;
  /** Operation timeout override (tests provoke timeouts with a short one). */
  timeoutMs?: number;
  /** False in all but one cluster worker: the embedded indexer runs in one process only. */
  indexer?: boolean;
  /** False to skip the index lag watch (tests that count statements). */
  lagWatch?: boolean;
  /** False to execute every GraphQL operation with graphql-js (tests hold compiled queries against it). */
  graphqlCompiledQueries?: boolean;
}

/** The indexer inside the gateway process (the default on either ledger; INDEXER=external turns it off). */
function embeddedIndexer(
  ledger: Ledger,
  search: SearchProvider,
  embedder: Embedder,
  metrics: GatewayMetrics,
  logger: Logger,
): Indexer {
  const counters = indexerMetrics(metrics.registry);
  return new Indexer(ledger, search, {
    pollMs: 500,
    embedder,
    semantic: { onBatch: counters.onSemanticBatch },
    onBatch: counters.onBatch,
    onError: (error, attempt, arm) => {
      counters.onError(arm);
      logger.warn(
        { err: error, attempt, arm },
        arm === 'lexical'
          ? 'indexing failed; retrying with backoff'
          : 'semantic indexing failed (embedder or provider); the lexical arm goes on, retrying with backoff',
      );
    },
  });
}

/**
 * Warns when commits wait longer than `stallSeconds` for an indexer, whichever process should
 * run it: a stopped `INDEXER=external` service otherwise leaves recall `pending` with no word.
 * The semantic arm is watched apart: it trails by design, and is stalled only when it stops.
 */
function indexLagWatch(ledger: Ledger, arms: IndexArm[], stallSeconds: number, logger: Logger): IndexLagWatch {
  const provider = arms[0]?.cursor;
  return new IndexLagWatch(ledger, arms, {
    stallSeconds,
    intervalMs: Math.min(10_000, (stallSeconds * 1000) / 3),
    repeatMs: 5 * 60_000,
    onStalled: (lag, { arm }) =>
      logger.warn(
        {
          provider,
          arm,
          workspaces: lag.stalled.map((w) => w.workspaceId).slice(0, 10),
          stalled_workspaces: lag.stalled.length,
          lag_commits: lag.commits,
          oldest_unindexed_seconds: Math.round(lag.oldestSeconds),
        },
        arm === 'lexical'
          ? `search index stalled: commits have waited over ${stallSeconds} s for an indexer; recall answers pending until one runs (INDEXER=external needs the indexer service)`
          : `semantic index stalled: no vectors stored for ${stallSeconds} s while commits wait (is the embedder down, or the indexer stopped?); recall's semantic arm misses them until it catches up`,
      ),
    onRecovered: ({ arm }) =>
      logger.info(
        { provider, arm },
        arm === 'lexical' ? 'search index caught up again' : 'semantic index caught up again',
      ),
  });
}

/**
 * An openai embedder without EMBEDDINGS_DIMENSIONS learns its dimension count (and so its model
 * name) from its endpoint, which recall and the indexer both need: asked at boot so that the
 * first recall finds it known. If the endpoint is down now, the semantic arm is unavailable
 * (recall `degraded`, and `indexed_sequence` counts nothing it has not embedded) until the
 * endpoint answers one of the later attempts (`Embedder.ready`, from the indexer's retries and
 * from recalls); EMBEDDINGS_DIMENSIONS set avoids depending on it.
 */
async function probeEmbedder(embedder: Embedder, env: GatewayEnv, logger: Logger): Promise<void> {
  if (embedder.kind !== 'openai' || env.EMBEDDINGS_DIMENSIONS !== undefined) return;
  await checkEmbedder(embedder).catch((error) =>
    logger.warn({ err: error }, 'the embedder did not answer its boot probe; the semantic arm waits for it'),
  );
}

/** Webhook deliveries inside the gateway process, beside the embedded indexer (decisions §10). */
function embeddedDeliveries(ledger: Ledger, env: GatewayEnv, metrics: GatewayMetrics, logger: Logger) {
  const counters = webhookMetrics(metrics.registry, ledger);
  return new WebhookDeliveryWorker(ledger, {
    allowPrivateTargets: env.WEBHOOKS_ALLOW_PRIVATE === '1',
    retryWindowSeconds: env.WEBHOOK_RETRY_WINDOW_SECONDS,
    backoffBaseMs: env.WEBHOOK_BACKOFF_BASE_MS,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    pollMs: 500,
    onDelivered: counters.onDelivered,
    onFailed: (event) => {
      counters.onFailed(event);
      logger.warn(event, event.disabled ? 'webhook disabled' : 'webhook delivery failed; retrying with backoff');
    },
    onError: (error) => logger.warn({ err: error }, 'webhook worker failed; retrying'),
  });
}

/** Compose and start the gateway from a parsed environment. */
export async function startGateway(env: GatewayEnv, options: GatewayOptions = {}): Promise<RunningGateway> {
  const logger =
    options.logger ??
    createLogger({
      service: env.OTEL_SERVICE_NAME,
      level: env.LOG_LEVEL,
      redact: ['req.headers.authorization', 'authorization'],
      buffered: true,
    });
  // Before the ledger opens: its statements become spans of the requests that run them.
  const tracing = await startTracing({ endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: env.OTEL_SERVICE_NAME });
  const metrics = new GatewayMetrics();
  // The ledger, the token verifier and the domain are composed like `svc mcp` composes them.
  // In a cluster one worker (options.indexer) indexes and watches; every worker shows the lag.
  const runsIndexer = options.indexer !== false && env.INDEXER === 'embedded';
  const composed = await composeDomain(env, {
    onQuery: options.onQuery,
    onStatement: options.onStatement,
    holder: 'gateway',
    // Without an indexer here the model embeds queries only: one copy of it, not two.
    embedsDocuments: runsIndexer,
    rateLimitStore: rateLimitStoreLog(logger),
    observer: {
      ...metrics.observer,
      // A batch is bounded by its writes' deadlines: one still running is stuck, and says where.
      slowBatch: (report) =>
        logger.error({ group_commit: report }, 'a group commit batch is running past its deadlines'),
      recallArmFailed: (arm, error) =>
        logger.warn({ err: error, arm }, `recall's ${arm} arm failed; the answer is degraded, the other arm answers`),
    },
  });
  // One embedder per process: recall embeds queries with it, the embedded indexer documents.
  const { domain, ledger, devIssuer, search, embedder, rateLimiter } = composed;
  const indexes = search.name !== 'none';
  if (indexes) await probeEmbedder(embedder, env, logger);
  const arms = indexArms(search.name, indexes ? embedder : null);
  if (indexes) indexLagMetrics(metrics.registry, ledger, arms, env.INDEX_STALL_SECONDS);
  if (embedder instanceof BuiltinEmbedder) builtinEmbedderMetrics(metrics.registry, embedder);
  const indexer = runsIndexer ? embeddedIndexer(ledger, search, embedder, metrics, logger) : null;
  // The indexer needs the builtin model anyway: loading it now spares the first recall a cold start.
  if (indexer && indexes && embedder.kind === 'builtin') {
    checkEmbedder(embedder).catch((error) => logger.warn({ err: error }, 'the builtin embedder did not start'));
  }
  const lagWatch =
    options.indexer !== false && options.lagWatch !== false && indexes
      ? indexLagWatch(ledger, arms, env.INDEX_STALL_SECONDS, logger)
      : null;
  const deliveries = indexer ? embeddedDeliveries(ledger, env, metrics, logger) : null;
  const server = createApp({
    domain,
    ledger,
    metrics,
    logger,
    timeoutMs: options.timeoutMs,
    mcpTools: env.MCP_TOOLS,
    httpLimits: {
      headersTimeoutMs: env.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: env.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: env.HTTP_KEEPALIVE_TIMEOUT_MS,
      maxConnections: env.HTTP_MAX_CONNECTIONS,
    },
    metricsOnApiPort: env.METRICS_PORT === undefined,
    console: {
      enabled: env.CONSOLE === 'on',
      devToken: devIssuer ? () => devIssuer.sessionToken() : null,
    },
    graphql: {
      production: env.NODE_ENV === 'production',
      maxStreams: env.GRAPHQL_MAX_STREAMS,
      compiledQueries: options.graphqlCompiledQueries,
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
  const { port, address: host } = server.address() as AddressInfo;
  const metricsServer = env.METRICS_PORT === undefined ? null : createMetricsServer(metrics, logger);
  if (metricsServer) {
    await new Promise<void>((resolve, reject) => {
      metricsServer.once('error', reject);
      metricsServer.listen(env.METRICS_PORT, env.HOST, () => resolve());
    });
  }
  const metricsPort = metricsServer ? (metricsServer.address() as AddressInfo).port : null;
  // The workers start once the database is migrated: until then one error line, not one per poll.
  const closing = new AbortController();
  const migrated = indexer ? untilMigrated(ledger, closing.signal, logger) : Promise.resolve(false);
  const indexerDone = migrated
    .then((ready) => (ready ? indexer?.run() : undefined))
    .catch((error) => logger.error({ err: error }, 'embedded indexer stopped'));
  lagWatch?.start();

  const deliveriesDone = migrated
    .then((ready) => (ready ? deliveries?.run() : undefined))
    .catch((error) => logger.error({ err: error }, 'embedded webhook deliveries stopped'));
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    host,
    metricsPort,
    ledger,
    devIssuer,
    logger,
    async close() {
      await Promise.all(
        [server, metricsServer].map(
          (listening) =>
            new Promise<void>((resolve) => {
              if (!listening) return resolve();
              listening.close(() => resolve());
              listening.closeAllConnections();
            }),
        ),
      );
      closing.abort();
      lagWatch?.stop();
      indexer?.stop();
      deliveries?.stop();
      await Promise.all([indexerDone, deliveriesDone]);
      await rateLimiter?.close?.();
      await embedder.close().catch(() => undefined);
      await ledger.close();
      // The spans of the last requests are sent before the process goes.
      await tracing.shutdown().catch((error) => logger.warn({ err: error }, 'flushing traces failed'));
    },
  };
}
