import type { ToolSet } from '@tms/agent-tools';
import { checkDomainEnv, databasePoolEnvShape, domainEnvShape, listEveryProblem } from '@tms/composition';
import { webhookDeliveryEnvShape } from '@tms/webhooks';
import { z } from 'zod';

const schema = z
  .object({
    // DATABASE_URL, DATA_DIR, SESSION_*, OAUTH_*, DEV_AUTH, NODE_ENV, SEARCH_PROVIDER, MEILI_*:
    // the operator contract every domain-serving process reads the same way.
    ...domainEnvShape,
    // The webhook delivery worker runs wherever the indexer does (here when it is embedded).
    ...webhookDeliveryEnvShape,
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    /** Unset: every interface, except with DEV_AUTH=1, whose self-signed tokens stay on 127.0.0.1. */
    HOST: z.string().min(1).optional(),
    /** Set: /metrics is served on this port only (and the API port answers it `not_found`). */
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    GRAPHIQL: z.enum(['0', '1']).optional(),
    /** The browser console at /console: `off` turns it and its assets off. */
    CONSOLE: z.enum(['on', 'off']).default('on'),
    /** OpenTelemetry: traces go to `<endpoint>/v1/traces` over OTLP/HTTP (JSON) when set; unset, none are made. */
    OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
    /** The `service.name` of its spans and the `service` of its log lines. */
    OTEL_SERVICE_NAME: z.string().min(1).default('tms-gateway'),
    /** The agent tools /mcp lists: `memory` (remember and recall) or `all` (administration too). */
    MCP_TOOLS: z.enum(['memory', 'all'] satisfies ToolSet[]).default('memory'),
    /** Run the indexer inside the gateway (the default, on either ledger) or as its own service. */
    INDEXER: z.enum(['embedded', 'external']).default('embedded'),
    /** Commits that wait this long for an indexer make the gateway warn (decisions §9: 30 s). */
    INDEX_STALL_SECONDS: z.coerce.number().min(1).max(86_400).default(30),
    /** The HTTP server's limits: time to receive headers, a whole request, keep-alive idle time, open connections. */
    HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
    HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1).default(30_000),
    HTTP_KEEPALIVE_TIMEOUT_MS: z.coerce.number().int().min(0).default(5_000),
    HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(1_000),
    // DATABASE_POOL_SIZE, DATABASE_POINT_READ_CONNECTIONS: this process's Postgres connections.
    ...databasePoolEnvShape,
    /** Open GraphQL subscription streams per gateway process; past it a new one is refused with `unavailable`. */
    GRAPHQL_MAX_STREAMS: z.coerce.number().int().min(0).max(100_000).default(100),
    /** Gateway processes sharing the port (`node:cluster`); Postgres only: one process owns an embedded ledger. */
    GATEWAY_WORKERS: z.coerce.number().int().min(1).max(256).default(1),
    /** Set by the cluster primary for each worker it forks (0 .. GATEWAY_WORKERS-1); not an operator setting. */
    GATEWAY_WORKER_SLOT: z.coerce.number().int().min(0).optional(),
  })
  .superRefine(checkDomainEnv, listEveryProblem)
  .superRefine((env, ctx) => {
    if (env.GATEWAY_WORKERS > 1 && !env.DATABASE_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['GATEWAY_WORKERS'],
        message: 'more than 1 needs DATABASE_URL: the embedded PGlite ledger under DATA_DIR is owned by one process',
      });
    }
    if (env.METRICS_PORT !== undefined && env.METRICS_PORT !== 0 && env.METRICS_PORT === env.PORT) {
      ctx.addIssue({ code: 'custom', path: ['METRICS_PORT'], message: 'must differ from PORT' });
    }
    // Node refuses a header timeout longer than the whole-request timeout.
    if (env.HTTP_HEADERS_TIMEOUT_MS > env.HTTP_REQUEST_TIMEOUT_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['HTTP_HEADERS_TIMEOUT_MS'],
        message: 'must not exceed HTTP_REQUEST_TIMEOUT_MS',
      });
    }
  });

export type GatewayEnv = z.infer<typeof schema>;

/** Every variable this service reads (the deployment test checks compose against it). */
export const ENV_KEYS: readonly string[] = Object.keys(schema.shape);

/** Parse the environment once at boot; every problem is listed, then the process stops. */
export function parseEnv(source: Record<string, string | undefined>): GatewayEnv {
  const result = schema.safeParse(source);
  if (result.success) {
    // The embedded quickstart signs its own tokens: it listens on loopback unless told otherwise.
    const host = result.data.HOST ?? (result.data.DEV_AUTH === '1' ? '127.0.0.1' : undefined);
    return { ...result.data, HOST: host };
  }
  const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
  throw new Error(`invalid configuration:\n${lines.join('\n')}`);
}
