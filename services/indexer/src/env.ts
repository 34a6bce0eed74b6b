import { checkEmbedderEnv, checkSearchEnv, embedderEnvShape, searchEnvShape } from '@tms/composition';
import { LEXICAL_BATCH_SIZE } from '@tms/search';
import { webhookDeliveryEnvShape, webhookTargetEnvShape } from '@tms/webhooks';
import { z } from 'zod';

const schema = z
  .object({
    DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
    // SEARCH_PROVIDER, MEILI_URL and MEILI_API_KEY or MEILI_API_KEY_FILE: read as the gateway reads them.
    ...searchEnvShape,
    // EMBEDDER and EMBEDDINGS_*: the indexer makes the semantic arm's vectors (decisions §11).
    ...embedderEnvShape,
    INDEXER_BATCH_SIZE: z.coerce.number().int().min(1).max(5000).default(LEXICAL_BATCH_SIZE.postgres),
    INDEXER_POLL_MS: z.coerce.number().int().min(10).max(60000).default(1000),
    /** Port of the indexer's own /metrics and /healthz; 0 picks one, unset serves none. */
    INDEXER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    /** The lag gauges count a workspace as stalled past this many seconds (as the gateway's do). */
    INDEX_STALL_SECONDS: z.coerce.number().min(1).max(86_400).default(30),

    // Webhook deliveries run here too (decisions §10): the target rule and the retry schedule.
    ...webhookTargetEnvShape,
    ...webhookDeliveryEnvShape,
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** OpenTelemetry: traces go to `<endpoint>/v1/traces` over OTLP/HTTP (JSON) when set; unset, none are made. */
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
    /** The `service.name` of its spans and the `service` of its log lines. */
    OTEL_SERVICE_NAME: z.string().min(1).default('tms-indexer'),
  })
  .superRefine((env, ctx) => {
    checkSearchEnv(env, ctx);
    checkEmbedderEnv(env, ctx);
  });

export type IndexerEnv = z.infer<typeof schema>;

/** Every variable this service reads (the deployment test checks compose against it). */
export const ENV_KEYS: readonly string[] = Object.keys(schema.shape);

/** Parse the environment once at boot; every problem is listed, then the process stops. */
export function parseEnv(source: Record<string, string | undefined>): IndexerEnv {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
  throw new Error(`invalid configuration:\n${lines.join('\n')}`);
}
