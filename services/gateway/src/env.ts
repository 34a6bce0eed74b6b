import { z } from 'zod';

const schema = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    HOST: z.string().min(1).optional(),
    DATABASE_URL: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional(),
    DATA_DIR: z.string().min(1).default('./.data'),
    SEARCH_PROVIDER: z.enum(['postgres', 'meilisearch', 'none']).default('postgres'),
    MEILI_URL: z.url().optional(),
    MEILI_API_KEY: z.string().optional(),
    // An issuer is configured by all three of its variables or by none.
    SESSION_ISSUER: z.string().min(1).optional(),
    SESSION_JWKS_URI: z.url().optional(),
    SESSION_AUDIENCE: z.string().min(1).optional(),
    OAUTH_ISSUER: z.string().min(1).optional(),
    OAUTH_JWKS_URI: z.url().optional(),
    OAUTH_AUDIENCE: z.string().min(1).optional(),
    DEV_AUTH: z.enum(['0', '1']).default('0'),
    NODE_ENV: z.string().default('development'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    GRAPHIQL: z.enum(['0', '1']).optional(),
    /** Run the indexer inside the gateway (default with the embedded PGlite ledger) or as its own service. */
    INDEXER: z.enum(['embedded', 'external']).optional(),
  })
  // `when`: run these cross-variable checks even when a variable is already invalid (zod skips
  // refinements after field issues by default), so that every problem is listed at once.
  .superRefine(
    (env, ctx) => {
      for (const prefix of ['SESSION', 'OAUTH'] as const) {
        const parts = ['ISSUER', 'JWKS_URI', 'AUDIENCE'].map((p) => `${prefix}_${p}` as keyof typeof env);
        const set = parts.filter((p) => env[p] !== undefined);
        if (set.length > 0 && set.length < parts.length) {
          for (const p of parts.filter((p) => env[p] === undefined)) {
            ctx.addIssue({ code: 'custom', path: [p], message: `required when ${set.join(', ')} is set` });
          }
        }
      }
      if (env.DEV_AUTH === '1' && env.NODE_ENV === 'production') {
        ctx.addIssue({ code: 'custom', path: ['DEV_AUTH'], message: 'DEV_AUTH=1 is refused when NODE_ENV=production' });
      }
      if (env.SEARCH_PROVIDER === 'meilisearch' && !env.MEILI_URL) {
        ctx.addIssue({ code: 'custom', path: ['MEILI_URL'], message: 'required when SEARCH_PROVIDER=meilisearch' });
      }
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  );

export type GatewayEnv = z.infer<typeof schema>;

/** Parse the environment once at boot; every problem is listed, then the process stops. */
export function parseEnv(source: Record<string, string | undefined>): GatewayEnv {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
  throw new Error(`invalid configuration:\n${lines.join('\n')}`);
}
