import type { IssuerConfig } from '@tms/auth';
import { type RateLimiter, RedisRateLimiter, rateLimiterFor } from '@tms/domain';
import type { Ledger } from '@tms/ledger';
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
import type { DomainConfig, EmbedderConfig, MeiliKeyConfig, RateLimitConfig, SearchConfig } from './env';

// The parts a service is composed of, each made from its parsed configuration. Nothing here
// is started; `startup.ts` starts them in order and closes them again when a start fails.

/**
 * The embedder EMBEDDER names; nothing starts or connects yet. An `openai` embedder without
 * EMBEDDINGS_DIMENSIONS knows its dimension count (and so its `model`) only after
 * `checkEmbedder`, which boot runs first. `recall: false` for a process that embeds only
 * documents, `documents: false` for one that embeds only queries (the builtin model then holds
 * one copy of the model, not one per lane).
 */
export function embedderFor(
  config: EmbedderConfig,
  use: { recall: boolean; documents?: boolean } = { recall: true },
): Embedder {
  switch (config.EMBEDDER) {
    case 'builtin':
      return new BuiltinEmbedder({ queryLane: use.recall, documentLane: use.documents ?? true });
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

/** The Meilisearch key from whichever of MEILI_API_KEY / MEILI_API_KEY_FILE is set. */
export function meiliApiKeyOf(config: MeiliKeyConfig): string | undefined {
  return config.MEILI_API_KEY ?? config.MEILI_API_KEY_FILE?.key;
}

/** The search provider SEARCH_PROVIDER names, over this ledger. */
export function searchProviderFor(config: SearchConfig, ledger: Ledger): SearchProvider {
  switch (config.SEARCH_PROVIDER) {
    case 'postgres':
      // The embedded ledger's one connection would wait on HNSW inserts: pgvector scans exactly there.
      return new PostgresSearchProvider(
        ledger.handle.db,
        { hnsw: ledger.driver === 'postgres' },
        { unlogged: ledger.driver === 'postgres' && config.LEXICAL_TABLES === 'unlogged' },
      );
    case 'meilisearch':
      return new MeilisearchProvider(config.MEILI_URL as string, meiliApiKeyOf(config));
    case 'none':
      return new NoSearchProvider();
  }
}

/** The issuers SESSION_* and OAUTH_* configure (the embedded dev issuer is added at start, `DEV_AUTH`). */
export function issuersOf(config: DomainConfig): { sessions: IssuerConfig[]; oauth: IssuerConfig | undefined } {
  const jwksCacheMaxAgeMs = config.JWKS_CACHE_SECONDS * 1000;
  const sessions: IssuerConfig[] = [];
  if (config.SESSION_ISSUER && config.SESSION_JWKS_URI && config.SESSION_AUDIENCE) {
    sessions.push({
      issuer: config.SESSION_ISSUER,
      jwksUri: config.SESSION_JWKS_URI,
      audience: config.SESSION_AUDIENCE,
      jwksCacheMaxAgeMs,
    });
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
  return { sessions, oauth };
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
 * process. `inProcess`: counted in process whatever the URL (a one-command process).
 */
export async function rateLimiterOf(
  config: RateLimitConfig,
  options: { events?: RateLimitStoreEvents | undefined; inProcess?: boolean } = {},
): Promise<RateLimiter | null> {
  const policy = config.RATE_LIMITS;
  const local = rateLimiterFor(policy);
  if (!local || !policy || !config.RATE_LIMIT_REDIS_URL || options.inProcess) return local;
  const shared = new RedisRateLimiter(policy, {
    url: config.RATE_LIMIT_REDIS_URL,
    keyPrefix: config.RATE_LIMIT_REDIS_PREFIX,
    commandTimeoutMs: config.RATE_LIMIT_REDIS_TIMEOUT_MS,
    onUnreachable: options.events?.unreachable,
    onRecovered: options.events?.recovered,
  });
  await shared.connect();
  return shared;
}
