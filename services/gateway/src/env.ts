import { checkDomainEnv, domainEnvShape, listEveryProblem } from '@tms/composition';
import { z } from 'zod';

const schema = z
  .object({
    // DATABASE_URL, DATA_DIR, SESSION_*, OAUTH_*, DEV_AUTH, NODE_ENV, SEARCH_PROVIDER, MEILI_*:
    // the operator contract every domain-serving process reads the same way.
    ...domainEnvShape,
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    HOST: z.string().min(1).optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    GRAPHIQL: z.enum(['0', '1']).optional(),
    /** Run the indexer inside the gateway (default with the embedded PGlite ledger) or as its own service. */
    INDEXER: z.enum(['embedded', 'external']).optional(),
  })
  .superRefine(checkDomainEnv, listEveryProblem);

export type GatewayEnv = z.infer<typeof schema>;

/** Parse the environment once at boot; every problem is listed, then the process stops. */
export function parseEnv(source: Record<string, string | undefined>): GatewayEnv {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
  throw new Error(`invalid configuration:\n${lines.join('\n')}`);
}
