import fs from 'node:fs';
import path from 'node:path';
import { DEV_ISSUER, DEV_SUBJECT, DevIssuer, type IssuerConfig, TokenVerifier } from '@tms/auth';
import { OPERATION_LIMITS } from '@tms/catalog';
import {
  DEFAULT_RATE_LIMIT_REDIS_PREFIX,
  DEFAULT_RATE_LIMITS,
  Domain,
  type DomainObserver,
  parseRateLimits,
  type RateLimiter,
  type RateLimitPolicy,
  RedisRateLimiter,
  rateLimiterFor,
} from '@tms/domain';
import { Ledger } from '@tms/ledger';
import {
  BuiltinEmbedder,
  type Embedder,
  MeilisearchProvider,
  NoEmbedder,
  NoSearchProvider,
  OpenAiEmbedder,
  PostgresSearchProvider,
  type SearchProvider,
} from '@tms/search';
import { webhookTargetEnvShape } from '@tms/webhooks';
import { z } from 'zod';

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

export interface MeiliKeyConfig {
  MEILI_API_KEY?: string | undefined;
  /** The file MEILI_API_KEY_FILE names and the key read from it at boot. */
  MEILI_API_KEY_FILE?: { file: string; key: string } | undefined;
}

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

/** The Meilisearch key from whichever of MEILI_API_KEY / MEILI_API_KEY_FILE is set. */
export function meiliApiKeyOf(config: MeiliKeyConfig): string | undefined {
  return config.MEILI_API_KEY ?? config.MEILI_API_KEY_FILE?.key;
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

export interface EmbedderConfig {
  /** Absent means `builtin`. */
  EMBEDDER?: 'builtin' | 'openai' | 'none' | undefined;
  EMBEDDINGS_URL?: string | undefined;
  EMBEDDINGS_MODEL?: string | undefined;
  EMBEDDINGS_API_KEY?: string | undefined;
  EMBEDDINGS_DIMENSIONS?: number | undefined;
}

const OPENAI_ONLY = ['EMBEDDINGS_URL', 'EMBEDDINGS_MODEL', 'EMBEDDINGS_API_KEY', 'EMBEDDINGS_DIMENSIONS'] as const;

/** Cross-field rules of `embedderEnvShape`, for a `superRefine` of the schema that spreads it. */
export function checkEmbedderEnv(env: EmbedderConfig, ctx: z.RefinementCtx): void {
  const kind = env.EMBEDDER ?? 'builtin';
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

/**
 * The embedder EMBEDDER names; nothing starts or connects yet. An `openai` embedder without
 * EMBEDDINGS_DIMENSIONS knows its dimension count (and so its `model`) only after
 * `checkEmbedder`, which boot runs first.
 */
export function embedderFor(config: EmbedderConfig): Embedder {
  switch (config.EMBEDDER ?? 'builtin') {
    case 'builtin':
      return new BuiltinEmbedder();
    case 'openai':
      return new OpenAiEmbedder({
        url: config.EMBEDDINGS_URL as string,
        model: config.EMBEDDINGS_MODEL as string,
        apiKey: config.EMBEDDINGS_API_KEY,
        dimensions: config.EMBEDDINGS_DIMENSIONS,
      });
    case 'none':
      return new NoEmbedder();
  }
}

/**
 * The boot check: the builtin model loads, the openai endpoint answers with the configured
 * dimension count (learning it when unset). Throws an Error whose message is one line naming
 * the problem (`EMBEDDER=openai: embeddings endpoint ... is unreachable (ECONNREFUSED)`).
 */
export async function checkEmbedder(embedder: Embedder): Promise<void> {
  try {
    if (embedder instanceof OpenAiEmbedder) await embedder.probe();
    else if (embedder instanceof BuiltinEmbedder) await embedder.start();
  } catch (error) {
    throw new Error(`EMBEDDER=${embedder.kind}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * The operator-contract variables every process that serves the domain reads: where the ledger
 * is and which issuers are trusted (decisions §9). Each service parses them inside its own env
 * module (with its other variables) and hands the parsed values here.
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
  SEARCH_PROVIDER: z.enum(['postgres', 'meilisearch', 'none']).default('postgres'),
  MEILI_URL: z.url().optional(),
  ...meiliKeyEnvShape,
  ...embedderEnvShape,
  ...webhookTargetEnvShape,
  // The Ed25519 private key (PKCS#8 PEM) that signs ledger heads; unset: one kept in the ledger (docs/ledger-proofs.md).
  LEDGER_SIGNING_KEY_FILE: nonEmpty.optional(),
  // `off`, or `name=count/seconds` per catalog operation and `*` for the others (docs/api.md, "Rate limits").
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

function isRedisUrl(text: string): boolean {
  if (!/^rediss?:\/\//.test(text)) return false;
  try {
    return new URL(text).hostname !== '';
  } catch {
    return false;
  }
}

export type DomainConfig = MeiliKeyConfig & {
  DATABASE_URL?: string | undefined;
  DATA_DIR: string;
  SESSION_ISSUER?: string | undefined;
  SESSION_JWKS_URI?: string | undefined;
  SESSION_AUDIENCE?: string | undefined;
  OAUTH_ISSUER?: string | undefined;
  OAUTH_JWKS_URI?: string | undefined;
  OAUTH_AUDIENCE?: string | undefined;
  /** JWKS cache lifetime for the SESSION and OAUTH issuers; absent means 300. */
  JWKS_CACHE_SECONDS?: number | undefined;
  DEV_AUTH: '0' | '1';
  NODE_ENV: string;
  SEARCH_PROVIDER: 'postgres' | 'meilisearch' | 'none';
  MEILI_URL?: string | undefined;
  /** The PEM file of the key that signs ledger heads; absent: a key kept in the ledger. */
  LEDGER_SIGNING_KEY_FILE?: string | undefined;
  /** `1`: webhooks may target loopback and private addresses (absent means no). */
  WEBHOOKS_ALLOW_PRIVATE?: '0' | '1' | undefined;
  /** Parsed RATE_LIMITS; null (`off`) or absent means no rate limit. */
  RATE_LIMITS?: RateLimitPolicy | null | undefined;
  /** The Redis every process counts the rate limits in; absent: each process counts alone. */
  RATE_LIMIT_REDIS_URL?: string | undefined;
  /** Put before the rate-limit keys in that Redis; absent means `tms:rate:`. */
  RATE_LIMIT_REDIS_PREFIX?: string | undefined;
  /** How long a Redis command may take before the call is counted in process; absent means 100. */
  RATE_LIMIT_REDIS_TIMEOUT_MS?: number | undefined;
  /** Postgres connection pool size (the gateway's DATABASE_POOL_SIZE); absent means the ledger's default. */
  DATABASE_POOL_SIZE?: number | undefined;
  /** Connections of their own for point reads (the gateway's DATABASE_POINT_READ_CONNECTIONS); absent or 0 means they share the pool. */
  DATABASE_POINT_READ_CONNECTIONS?: number | undefined;
};

/**
 * Options for `superRefine(checkDomainEnv, listEveryProblem)`: run the cross-variable checks even
 * when a variable is already invalid (zod skips refinements after field issues by default), so
 * that a service stops listing every problem at once.
 */
export const listEveryProblem = {
  when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null,
};

/** Cross-field rules of `domainEnvShape`, for a `superRefine` of the schema that spreads it. */
export function checkDomainEnv(env: DomainConfig & EmbedderConfig, ctx: z.RefinementCtx): void {
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
  if (env.SEARCH_PROVIDER === 'meilisearch' && !env.MEILI_URL) {
    ctx.addIssue({ code: 'custom', path: ['MEILI_URL'], message: 'required when SEARCH_PROVIDER=meilisearch' });
  }
  checkMeiliKey(env, ctx);
  checkEmbedderEnv(env, ctx);
}

/** The search provider SEARCH_PROVIDER names, over this ledger. */
export function searchProviderFor(config: DomainConfig, ledger: Ledger): SearchProvider {
  switch (config.SEARCH_PROVIDER) {
    case 'postgres':
      // The embedded ledger's one connection would wait on HNSW inserts: pgvector scans exactly there.
      return new PostgresSearchProvider(ledger.handle.db, { hnsw: ledger.driver === 'postgres' });
    case 'meilisearch':
      return new MeilisearchProvider(config.MEILI_URL as string, meiliApiKeyOf(config));
    case 'none':
      return new NoSearchProvider();
  }
}

export interface ComposeOptions {
  /** Count SQL statements (tests). */
  onQuery?: (sqlText: string) => void;
  /** Every statement sent to Postgres with its connection and parameters (tests). */
  onStatement?: (connection: number, sqlText: string, params: unknown[]) => void;
  /** Who opens the embedded ledger (`gateway`, `svc mcp`, ...): named to the processes it refuses. */
  holder?: string;
  /** Told the domain's outcomes (the gateway's recall counter). */
  observer?: DomainObserver;
  /** Told when the rate limits' Redis becomes unreachable (counted per process) and when it is back. */
  rateLimitStore?: RateLimitStoreEvents;
}

export interface RateLimitStoreEvents {
  unreachable(event: { url: string; reason: string }): void;
  recovered(event: { url: string }): void;
}

/** The two pino-style calls `rateLimitStoreLog` makes. */
export interface StoreLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** One warning when the rate limits' Redis becomes unreachable, one line when it answers again. */
export function rateLimitStoreLog(logger: StoreLogger): RateLimitStoreEvents {
  return {
    unreachable: ({ url, reason }) =>
      logger.warn(
        { rate_limit_store: url, reason },
        `rate limits: Redis at ${url} is unreachable; each process counts the limits alone until it answers`,
      ),
    recovered: ({ url }) =>
      logger.info({ rate_limit_store: url }, `rate limits: Redis at ${url} answers again; the limits are shared again`),
  };
}

/**
 * The limiter RATE_LIMITS and RATE_LIMIT_REDIS_URL ask for: none when the limits are off, shared
 * in Redis when a URL is given (connected before it returns, or reported unreachable), else in
 * process.
 */
export async function rateLimiterOf(config: DomainConfig, events?: RateLimitStoreEvents): Promise<RateLimiter | null> {
  const policy = config.RATE_LIMITS ?? null;
  const local = rateLimiterFor(policy);
  if (!local || !policy || !config.RATE_LIMIT_REDIS_URL) return local;
  const shared = new RedisRateLimiter(policy, {
    url: config.RATE_LIMIT_REDIS_URL,
    keyPrefix: config.RATE_LIMIT_REDIS_PREFIX,
    commandTimeoutMs: config.RATE_LIMIT_REDIS_TIMEOUT_MS,
    onUnreachable: events?.unreachable,
    onRecovered: events?.recovered,
  });
  await shared.connect();
  return shared;
}

export interface ComposedDomain {
  domain: Domain;
  ledger: Ledger;
  /** The embedded dev issuer when DEV_AUTH=1, else null. */
  devIssuer: DevIssuer | null;
  /** Whether the ledger is the embedded PGlite under DATA_DIR. */
  embedded: boolean;
  /** The search provider recall asks (the indexer feeds it). */
  search: SearchProvider;
  /** The domain's rate limiter (null: none); its `close` ends its Redis connection. */
  rateLimiter: RateLimiter | null;
  /**
   * The embedder EMBEDDER names, recall's for its queries: an indexer in the same process uses
   * it too (one builtin child per process). Nothing starts until the first embedding; whoever
   * composed the domain closes it.
   */
  embedder: Embedder;
}

/**
 * Open the ledger (Postgres at DATABASE_URL, else PGlite under DATA_DIR) and build the token
 * verifier from the SESSION_* / OAUTH_* issuers and, with DEV_AUTH=1, the embedded dev issuer.
 * The gateway and `svc mcp` compose the one domain layer through this function.
 */
export async function composeDomain(
  config: DomainConfig & EmbedderConfig,
  options: ComposeOptions = {},
): Promise<ComposedDomain> {
  const embedded = !config.DATABASE_URL;
  const ledger = await Ledger.open({
    databaseUrl: config.DATABASE_URL,
    dataDir: embedded ? path.join(config.DATA_DIR, 'pglite') : undefined,
    onQuery: options.onQuery,
    onStatement: options.onStatement,
    holder: options.holder,
    maxConnections: config.DATABASE_POOL_SIZE,
    pointReadConnections: config.DATABASE_POINT_READ_CONNECTIONS,
    // A request's transaction never waits on its client longer than the request may last: one
    // that does is stuck (a driver that lost a statement's answer), and would hold its locks.
    idleInTransactionTimeoutMs: OPERATION_LIMITS.timeoutMs,
  });
  try {
    // The embedded ledger admits one process at a time (a lock taken at open), so it migrates itself at start;
    // on Postgres, `pnpm svc migrate` does it and /readyz waits for it.
    if (embedded) await ledger.migrate();

    const jwksCacheMaxAgeMs = (config.JWKS_CACHE_SECONDS ?? 300) * 1000;
    const sessions: IssuerConfig[] = [];
    if (config.SESSION_ISSUER && config.SESSION_JWKS_URI && config.SESSION_AUDIENCE) {
      sessions.push({
        issuer: config.SESSION_ISSUER,
        jwksUri: config.SESSION_JWKS_URI,
        audience: config.SESSION_AUDIENCE,
        jwksCacheMaxAgeMs,
      });
    }
    let devIssuer: DevIssuer | null = null;
    if (config.DEV_AUTH === '1') {
      if (config.NODE_ENV === 'production') throw new Error('DEV_AUTH=1 is refused when NODE_ENV=production');
      devIssuer = await DevIssuer.loadOrCreate(config.DATA_DIR);
      sessions.push(devIssuer.config);
      // The dev admin is enrolled now, so a Postgres ledger must be migrated already.
      if (!embedded) await ledger.assertReady();
      await ledger.stores.directory.enroll(DEV_ISSUER, DEV_SUBJECT, Date.now() / 1000);
    }
    const oauth =
      config.OAUTH_ISSUER && config.OAUTH_JWKS_URI && config.OAUTH_AUDIENCE
        ? {
            issuer: config.OAUTH_ISSUER,
            jwksUri: config.OAUTH_JWKS_URI,
            audience: config.OAUTH_AUDIENCE,
            jwksCacheMaxAgeMs,
          }
        : undefined;

    const search = searchProviderFor(config, ledger);
    // The embedded index lives beside the ledger and must exist before recall asks it; an
    // external provider may be down at start, which recall reports as `degraded`.
    if (search.name === 'postgres') await search.prepare();
    const rateLimiter = await rateLimiterOf(config, options.rateLimitStore);
    const embedder = embedderFor(config);
    const domain = new Domain(ledger, new TokenVerifier({ sessions, oauth }), search, {
      rateLimiter,
      allowPrivateWebhookTargets: config.WEBHOOKS_ALLOW_PRIVATE === '1',
      ledgerSigningKeyPem: config.LEDGER_SIGNING_KEY_FILE
        ? fs.readFileSync(config.LEDGER_SIGNING_KEY_FILE, 'utf8')
        : undefined,
      observer: options.observer,
      embedder,
    });
    return { domain, ledger, devIssuer, embedded, search, rateLimiter, embedder };
  } catch (error) {
    await ledger.close().catch(() => {});
    throw error;
  }
}

/** The lines `untilMigrated` writes (a pino logger fits). */
export interface WaitLogger {
  error(fields: object, message: string): void;
  info(message: string): void;
}

/**
 * Hold the background workers (indexer, webhook deliveries) until the database is migrated: on a
 * database `svc migrate` has not reached, one error line naming the fix, then a quiet wait, not a
 * failing query per poll. True once ready; false if `signal` aborted first.
 */
export async function untilMigrated(ledger: Ledger, signal: AbortSignal, logger: WaitLogger): Promise<boolean> {
  let waited = false;
  const ready = await ledger.untilReady({
    signal,
    onWaiting: (reason) => {
      waited = true;
      logger.error({ reason }, `${reason}; the indexer and webhook deliveries wait until it is`);
    },
  });
  if (ready && waited) logger.info('database ready; the indexer and webhook deliveries start');
  return ready;
}
