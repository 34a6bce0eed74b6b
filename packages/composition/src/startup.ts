import fs from 'node:fs';
import path from 'node:path';
import { DEV_ISSUER, DEV_SUBJECT, DevIssuer, TokenVerifier } from '@tms/auth';
import { OPERATION_LIMITS } from '@tms/catalog';
import { Domain, type DomainObserver, type RateLimiter } from '@tms/domain';
import { Ledger } from '@tms/ledger';
import { type Embedder, NoSearchProvider, type SearchProvider } from '@tms/search';
import type { DomainConfig } from './env';
import { embedderFor, issuersOf, type RateLimitStoreEvents, rateLimiterOf, searchProviderFor } from './factories';

export interface ComposeOptions {
  /** Count SQL statements (tests). */
  onQuery?: (sqlText: string) => void;
  /** Every statement sent to Postgres with its connection and parameters (tests). */
  onStatement?: (connection: number, sqlText: string, params: unknown[]) => void;
  /** Who opens the embedded ledger (`gateway`, `svc mcp`, ...): named to the processes it refuses. */
  holder?: string;
  /** False when no indexer runs in this process: its embedder embeds queries only (default true). */
  embedsDocuments?: boolean;
  /** Told the domain's outcomes (the gateway's recall counter). */
  observer?: DomainObserver;
  /** Told when the rate limits' Redis becomes unreachable (counted per process) and when it is back. */
  rateLimitStore?: RateLimitStoreEvents;
  /** False: no search provider, whatever SEARCH_PROVIDER says (administration never searches; no index is prepared). */
  search?: boolean;
  /** True: the rate limits are counted in process even with RATE_LIMIT_REDIS_URL set (one command per process). */
  rateLimitsInProcess?: boolean;
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
  /** Close what composing opened (the embedder, the rate limiter's Redis, the ledger), last opened first. */
  close(): Promise<void>;
}

/**
 * Open the ledger (Postgres at DATABASE_URL, else PGlite under DATA_DIR) and build the token
 * verifier from the SESSION_* / OAUTH_* issuers and, with DEV_AUTH=1, the embedded dev issuer.
 * The gateway and `svc mcp` compose the one domain layer through this function. A start that
 * fails closes everything it had opened before it throws.
 */
export async function composeDomain(config: DomainConfig, options: ComposeOptions = {}): Promise<ComposedDomain> {
  const opened = new OpenedParts();
  try {
    const embedded = !config.DATABASE_URL;
    const ledger = opened.add(
      await Ledger.open({
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
      }),
      (part) => part.close(),
    );
    // The embedded ledger admits one process at a time (a lock taken at open), so it migrates itself at start;
    // on Postgres, `pnpm svc migrate` does it and /readyz waits for it.
    if (embedded) await ledger.migrate();

    const { sessions, oauth } = issuersOf(config);
    let devIssuer: DevIssuer | null = null;
    if (config.DEV_AUTH === '1') {
      if (config.NODE_ENV === 'production') throw new Error('DEV_AUTH=1 is refused when NODE_ENV=production');
      devIssuer = await DevIssuer.loadOrCreate(config.DATA_DIR);
      sessions.push(devIssuer.config);
      // The dev admin is enrolled now, so a Postgres ledger must be migrated already.
      if (!embedded) await ledger.assertReady();
      await ledger.stores.directory.enroll(DEV_ISSUER, DEV_SUBJECT, Date.now() / 1000);
    }

    const search = options.search === false ? new NoSearchProvider() : searchProviderFor(config, ledger);
    // The embedded index lives beside the ledger and must exist before recall asks it; an
    // external provider may be down at start, which recall reports as `degraded`.
    if (search.name === 'postgres') await search.prepare();
    const rateLimiter = await rateLimiterOf(config, {
      events: options.rateLimitStore,
      inProcess: options.rateLimitsInProcess,
    });
    if (rateLimiter) opened.add(rateLimiter, async (part) => part.close?.());
    const embedder = opened.add(
      embedderFor(config, { recall: true, documents: options.embedsDocuments ?? true }),
      (part) => part.close(),
    );
    const domain = new Domain(ledger, new TokenVerifier({ sessions, oauth }), search, {
      rateLimiter,
      allowPrivateWebhookTargets: config.WEBHOOKS_ALLOW_PRIVATE === '1',
      ledgerSigningKeyPem: config.LEDGER_SIGNING_KEY_FILE ? readSigningKey(config.LEDGER_SIGNING_KEY_FILE) : undefined,
      observer: options.observer,
      embedder,
    });
    return { domain, ledger, devIssuer, embedded, search, rateLimiter, embedder, close: () => opened.close() };
  } catch (error) {
    // The start's own error is the one to report; a part that also fails to close is not.
    await opened.close().catch(() => {});
    throw error;
  }
}

/** LEDGER_SIGNING_KEY_FILE's contents; a file that cannot be read stops the start naming the variable and why. */
function readSigningKey(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(`LEDGER_SIGNING_KEY_FILE: cannot read ${file} (${reason})`, { cause: error });
  }
}

/** What a start has opened so far, to be closed last opened first. */
class OpenedParts {
  private readonly closers: (() => Promise<void>)[] = [];

  add<Part>(part: Part, close: (part: Part) => Promise<void>): Part {
    this.closers.push(() => close(part));
    return part;
  }

  /** Close every part, each even when one before it failed; rejects with the first failure. */
  async close(): Promise<void> {
    const failures: unknown[] = [];
    for (const close of this.closers.splice(0).reverse()) await close().catch((error) => failures.push(error));
    if (failures.length > 0) throw failures[0];
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
