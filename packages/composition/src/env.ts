import fs from 'node:fs';
import {
  DEFAULT_RATE_LIMIT_REDIS_PREFIX,
  DEFAULT_RATE_LIMITS,
  parseRateLimits,
  type RateLimitPolicy,
} from '@tms/domain';
import { webhookTargetEnvShape } from '@tms/webhooks';
import { z } from 'zod';

// The operator-contract variables as zod shapes, which each service spreads into its own env
// module (parsed once at boot, listing every problem), and the configuration types inferred
// from them: a variable is declared once, here.

/**
 * The Meilisearch key, given as a value or (docker-secrets convention) as a file holding it. The
 * file is read once, when the environment is parsed, so a missing or empty one stops the process
 * at boot with the other configuration problems rather than at the first recall.
 */
export const meiliKeyEnvShape = {
  MEILI_API_KEY: z.string().optional(),
  MEILI_API_KEY_FILE: z
    .string()
    .min(1)
    .optional()
    .transform((file, ctx): { file: string; key: string } | undefined => {
      if (file === undefined) return undefined;
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
        ctx.addIssue({ code: 'custom', message: `cannot read ${file} (${reason})` });
        return z.NEVER;
      }
      // A trailing newline (`echo key > file`) is not part of the key.
      const key = text.trim();
      if (key === '') {
        ctx.addIssue({ code: 'custom', message: `${file} is empty` });
        return z.NEVER;
      }
      return { file, key };
    }),
};
const meiliKeyEnv = z.object(meiliKeyEnvShape);
/** MEILI_API_KEY, or the file MEILI_API_KEY_FILE names and the key read from it at boot. */
export type MeiliKeyConfig = z.infer<typeof meiliKeyEnv>;

/** Cross-field rule of `meiliKeyEnvShape`: the key comes from one place. */
export function checkMeiliKey(env: MeiliKeyConfig, ctx: z.RefinementCtx): void {
  if (env.MEILI_API_KEY !== undefined && env.MEILI_API_KEY_FILE !== undefined) {
    ctx.addIssue({
      code: 'custom',
      path: ['MEILI_API_KEY_FILE'],
      message: 'set MEILI_API_KEY or MEILI_API_KEY_FILE, not both',
    });
  }
}

/** Which search provider recall asks and the indexer feeds, and where Meilisearch is. */
export const searchEnvShape = {
  SEARCH_PROVIDER: z.enum(['postgres', 'meilisearch', 'none']).default('postgres'),
  /** The `postgres` provider's lexical tables on a Postgres server (PGlite's are always logged). */
  LEXICAL_TABLES: z.enum(['unlogged', 'logged']).default('unlogged'),
  MEILI_URL: z.url().optional(),
  ...meiliKeyEnvShape,
};
const searchEnv = z.object(searchEnvShape);
export type SearchConfig = z.infer<typeof searchEnv>;

/** Cross-field rules of `searchEnvShape`, for a `superRefine` of the schema that spreads it. */
export function checkSearchEnv(env: SearchConfig, ctx: z.RefinementCtx): void {
  if (env.SEARCH_PROVIDER === 'meilisearch' && !env.MEILI_URL) {
    ctx.addIssue({ code: 'custom', path: ['MEILI_URL'], message: 'required when SEARCH_PROVIDER=meilisearch' });
  }
  checkMeiliKey(env, ctx);
}

/** A variable that, when present, holds a value. */
const nonEmpty = z.string().min(1, 'is empty: set a value, or leave the variable unset');

/**
 * Which embedder makes the semantic arm's vectors (decisions §11): `builtin` (the default, a model
 * shipped with the service, no network), `openai` (any OpenAI-compatible `POST
 * {EMBEDDINGS_URL}/embeddings`) or `none` (lexical recall only). The gateway, the indexer and the
 * CLI read them the same way.
 */
export const embedderEnvShape = {
  EMBEDDER: z.enum(['builtin', 'openai', 'none']).default('builtin'),
  /** The API's base URL, e.g. https://api.openai.com/v1 (`/embeddings` is added). */
  EMBEDDINGS_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  EMBEDDINGS_MODEL: z.string().min(1).optional(),
  EMBEDDINGS_API_KEY: z.string().min(1).optional(),
  /** Asked of the endpoint and required of its answers; unset, the model's own size (learned at boot). */
  EMBEDDINGS_DIMENSIONS: z.coerce.number().int().min(1).max(16_384).optional(),
};
const embedderEnv = z.object(embedderEnvShape);
export type EmbedderConfig = z.infer<typeof embedderEnv>;

const OPENAI_ONLY = ['EMBEDDINGS_URL', 'EMBEDDINGS_MODEL', 'EMBEDDINGS_API_KEY', 'EMBEDDINGS_DIMENSIONS'] as const;

/** Cross-field rules of `embedderEnvShape`, for a `superRefine` of the schema that spreads it. */
export function checkEmbedderEnv(env: EmbedderConfig, ctx: z.RefinementCtx): void {
  const kind = env.EMBEDDER;
  if (kind === 'openai') {
    for (const name of ['EMBEDDINGS_URL', 'EMBEDDINGS_MODEL'] as const) {
      if (env[name] === undefined)
        ctx.addIssue({ code: 'custom', path: [name], message: 'required when EMBEDDER=openai' });
    }
    if (
      env.EMBEDDINGS_URL &&
      URL.canParse(env.EMBEDDINGS_URL) &&
      /\/embeddings\/*$/.test(new URL(env.EMBEDDINGS_URL).pathname)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['EMBEDDINGS_URL'],
        message: 'give the base URL (e.g. https://api.openai.com/v1): /embeddings is added to it',
      });
    }
    return;
  }
  // Set for another kind, they would be ignored: most likely EMBEDDER=openai was forgotten.
  for (const name of OPENAI_ONLY) {
    if (env[name] !== undefined) {
      ctx.addIssue({ code: 'custom', path: [name], message: `only read when EMBEDDER=openai (EMBEDDER is ${kind})` });
    }
  }
}

/** The rate limits (docs/api.md, "Rate limits") and the Redis that shares them between processes. */
export const rateLimitEnvShape = {
  // `off`, or `name=count/seconds` per catalog operation and `*` for the others.
  RATE_LIMITS: z
    .string()
    .default(DEFAULT_RATE_LIMITS)
    .transform((text, ctx): RateLimitPolicy | null => {
      const parsed = parseRateLimits(text);
      if (parsed.ok) return parsed.policy;
      for (const problem of parsed.problems) ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }),
  // Where the rate limits are counted for every process that uses the same Redis; unset: in each process.
  RATE_LIMIT_REDIS_URL: z
    .string()
    .refine(isRedisUrl, 'must be a redis:// or rediss:// URL (redis://[user:password@]host:port[/db])')
    .optional(),
  // A Redis command unanswered this long is given up: that call is counted in process.
  RATE_LIMIT_REDIS_TIMEOUT_MS: z.coerce.number().int().min(10).max(10_000).default(100),
  // Put before every rate-limit key: deployments sharing one Redis keep apart with different prefixes.
  RATE_LIMIT_REDIS_PREFIX: z
    .string()
    .regex(/^[\x21-\x7e]{1,100}$/, 'must be 1 to 100 printable characters without spaces')
    .default(DEFAULT_RATE_LIMIT_REDIS_PREFIX),
};
const rateLimitEnv = z.object(rateLimitEnvShape);
export type RateLimitConfig = z.infer<typeof rateLimitEnv>;

function isRedisUrl(text: string): boolean {
  if (!/^rediss?:\/\//.test(text)) return false;
  try {
    return new URL(text).hostname !== '';
  } catch {
    return false;
  }
}

/**
 * The operator-contract variables every process that serves the domain reads: where the ledger
 * is and which issuers are trusted (decisions §9). Each service parses them inside its own env
 * module (with its other variables) and hands the parsed values to `composeDomain`.
 */
export const domainEnvShape = {
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  // An issuer is configured by all three of its variables or by none; an empty one (compose's
  // `${SESSION_ISSUER:-}` when the operator set nothing) is a mistake, named as such.
  SESSION_ISSUER: nonEmpty.optional(),
  SESSION_JWKS_URI: nonEmpty.pipe(z.url()).optional(),
  SESSION_AUDIENCE: nonEmpty.optional(),
  OAUTH_ISSUER: nonEmpty.optional(),
  OAUTH_JWKS_URI: nonEmpty.pipe(z.url()).optional(),
  OAUTH_AUDIENCE: nonEmpty.optional(),
  // How long a fetched JWKS is trusted: bounds how long a key the issuer retired still verifies.
  JWKS_CACHE_SECONDS: z.coerce.number().int().min(0).max(86400).default(300),
  DEV_AUTH: z.enum(['0', '1']).default('0'),
  NODE_ENV: z.string().default('development'),
  ...searchEnvShape,
  ...embedderEnvShape,
  ...webhookTargetEnvShape,
  // The Ed25519 private key (PKCS#8 PEM) that signs ledger heads; unset: one kept in the ledger (docs/ledger-proofs.md).
  LEDGER_SIGNING_KEY_FILE: nonEmpty.optional(),
  ...rateLimitEnvShape,
};
const domainEnv = z.object(domainEnvShape);

/** The gateway's Postgres connections (the CLI and `svc mcp` take the ledger's defaults). */
export const databasePoolEnvShape = {
  /**
   * Postgres connections per gateway process. 10 measured as fast as 32 at 32 requests in flight
   * (reads, 150 s; creates) with less CPU per request, and leaves room under Postgres's
   * max_connections for replicas and workers (docs/performance.md).
   */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(10),
  /**
   * Postgres connections of their own for point reads (memories.get, evidence.get,
   * namespaces.get), on which the driver pipelines them; 0 puts them back on the pool. One
   * read the fastest: 2 split each turn's reads into two socket writes (docs/performance.md).
   */
  DATABASE_POINT_READ_CONNECTIONS: z.coerce.number().int().min(0).max(100).default(1),
};
const databasePoolEnv = z.object(databasePoolEnvShape);

/** What `composeDomain` reads: `domainEnvShape` as parsed, and the pool sizes where a service sets them. */
export type DomainConfig = z.infer<typeof domainEnv> & Partial<z.infer<typeof databasePoolEnv>>;

/**
 * Options for `superRefine(checkDomainEnv, listEveryProblem)`: run the cross-variable checks even
 * when a variable is already invalid (zod skips refinements after field issues by default), so
 * that a service stops listing every problem at once.
 */
export const listEveryProblem = {
  when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null,
};

/** Cross-field rules of `domainEnvShape`, for a `superRefine` of the schema that spreads it. */
export function checkDomainEnv(env: DomainConfig, ctx: z.RefinementCtx): void {
  for (const prefix of ['SESSION', 'OAUTH'] as const) {
    const parts = (['ISSUER', 'JWKS_URI', 'AUDIENCE'] as const).map((p) => `${prefix}_${p}` as const);
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
  checkSearchEnv(env, ctx);
  checkEmbedderEnv(env, ctx);
}
