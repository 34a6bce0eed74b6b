import http from 'node:http';
import { checkEmbedder, embedderFor, searchProviderFor, untilMigrated } from '@tms/composition';
import { Ledger } from '@tms/ledger';
import { Indexer, indexArms, indexerMetrics, indexLagMetrics } from '@tms/search';
import { createLogger, startTracing } from '@tms/telemetry';
import { WebhookDeliveryWorker, webhookMetrics } from '@tms/webhooks';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { parseEnv } from './env';

let env: ReturnType<typeof parseEnv>;
try {
  env = parseEnv(process.env);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}

const logger = createLogger({ service: env.OTEL_SERVICE_NAME, level: env.LOG_LEVEL });
const tracing = await startTracing({ endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: env.OTEL_SERVICE_NAME });
const ledger = await Ledger.open({ databaseUrl: env.DATABASE_URL, maxConnections: 4 });
const provider = searchProviderFor(env, ledger);
const registry = new Registry();
collectDefaultMetrics({ register: registry });
const metrics = indexerMetrics(registry);
// The semantic arm's embedder (EMBEDDER=none: lexical only). An endpoint down at boot only
// delays the semantic arm: it retries with backoff while the lexical arm indexes.
const embedder = embedderFor(env, { recall: false });
if (embedder.kind !== 'none') {
  await checkEmbedder(embedder).catch((error) =>
    logger.warn({ err: error }, 'the embedder did not answer its boot probe; the semantic arm waits for it'),
  );
}
if (provider.name !== 'none') {
  indexLagMetrics(registry, ledger, indexArms(provider.name, embedder), env.INDEX_STALL_SECONDS);
}
const indexer = new Indexer(ledger, provider, {
  exclusive: true,
  batchSize: env.INDEXER_BATCH_SIZE,
  pollMs: env.INDEXER_POLL_MS,
  embedder,
  semantic: {
    onBatch: (event) => {
      metrics.onSemanticBatch(event);
      logger.info(event, 'embedded');
    },
  },
  onBatch: (event) => {
    metrics.onBatch(event);
    logger.info(event, 'indexed');
  },
  onError: (error, attempt, arm) => {
    metrics.onError(arm);
    logger.warn({ err: error, attempt, arm }, `${arm} indexing failed; retrying with backoff`);
  },
});

const deliveryCounters = webhookMetrics(registry, ledger);
const deliveries = new WebhookDeliveryWorker(ledger, {
  allowPrivateTargets: env.WEBHOOKS_ALLOW_PRIVATE === '1',
  retryWindowSeconds: env.WEBHOOK_RETRY_WINDOW_SECONDS,
  backoffBaseMs: env.WEBHOOK_BACKOFF_BASE_MS,
  timeoutMs: env.WEBHOOK_TIMEOUT_MS,
  pollMs: env.INDEXER_POLL_MS,
  onDelivered: (event) => {
    deliveryCounters.onDelivered(event);
    logger.info(event, 'webhook delivered');
  },
  onFailed: (event) => {
    deliveryCounters.onFailed(event);
    logger.warn(event, event.disabled ? 'webhook disabled' : 'webhook delivery failed; retrying with backoff');
  },
  onError: (error) => logger.warn({ err: error }, 'webhook worker failed; retrying'),
});

if (env.INDEXER_METRICS_PORT !== undefined) {
  const server = http.createServer(async (req, res) => {
    if (req.url === '/metrics') {
      res.writeHead(200, { 'content-type': registry.contentType });
      res.end(await registry.metrics());
    } else if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
    } else {
      res.writeHead(404).end();
    }
  });
  server.listen(env.INDEXER_METRICS_PORT);
  server.unref();
}

const stopping = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    logger.info({ signal }, 'stopping');
    stopping.abort();
    indexer.stop();
    deliveries.stop();
  });
}

logger.info({ provider: provider.name, embedder: embedder.kind }, 'indexer started');
// On a database `svc migrate` has not reached: one error line with the fix, then a quiet wait.
const migrated = await untilMigrated(ledger, stopping.signal, logger);
if (migrated) await Promise.all([indexer.run(), deliveries.run()]);
await embedder.close().catch(() => undefined);
await ledger.close();
await tracing.shutdown().catch((error) => logger.warn({ err: error }, 'flushing traces failed'));
logger.info('indexer stopped');
