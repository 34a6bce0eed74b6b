import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { DrizzleQueryError, is, sql } from 'drizzle-orm';
import type { Logger } from 'drizzle-orm/logger';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePostgres, PostgresJsSession } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { acquireEmbeddedLock } from './embedded-lock';
import { EmbeddedStatistics } from './embedded-statistics';
import { citusStatements, type MigrateOptions, migrateInLayout } from './layout';
import * as schema from './schema';

export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;
/** A database handle or an open transaction on it: storage methods accept either. */
export type Executor = Pick<Database, 'select' | 'insert' | 'update' | 'delete' | 'execute' | 'transaction'>;

const MIGRATIONS_FOLDER = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../drizzle');

export interface OpenOptions {
  /** Real Postgres when set; otherwise embedded PGlite under `dataDir`. */
  databaseUrl?: string | undefined;
  /** PGlite data directory; `memory://` (the default) keeps nothing. */
  dataDir?: string | undefined;
  /** Called once for every SQL statement issued through Drizzle (tests count them), with its parameters. */
  onQuery?: ((sqlText: string, params: unknown[]) => void) | undefined;
  /**
   * Postgres only: every statement the driver sends, with the connection it goes on (begin and
   * commit included), so a test can tell transactions apart (the partitioned-layout test).
   */
  onStatement?: ((connection: number, sqlText: string, params: unknown[]) => void) | undefined;
  /** Postgres connection pool size (default 10; the gateway's is DATABASE_POOL_SIZE). */
  maxConnections?: number | undefined;
  /**
   * Postgres connections of their own for point reads (`DatabaseHandle.pointReads`; the gateway's
   * DATABASE_POINT_READ_CONNECTIONS). The driver pipelines the reads queued on a busy connection
   * and sends those of one event-loop turn in one socket write, so few connections carry many
   * reads for less CPU than one write per read (docs/performance.md). 0 or absent: they share the pool.
   */
  pointReadConnections?: number | undefined;
  /** Server-side statement timeout, matching the operation timeout. */
  statementTimeoutMs?: number | undefined;
  /**
   * Postgres only: the server ends a session whose transaction waits this long for its client's
   * next statement (`idle_in_transaction_session_timeout`; absent: never). The client then sees
   * its connection close, and the transaction fails `unavailable` instead of holding its locks
   * (a workspace's head among them) for as long as the process lives.
   */
  idleInTransactionTimeoutMs?: number | undefined;
  /** Who opens an embedded folder (`gateway`, `svc admin`, ...): named to anyone it refuses. */
  holder?: string | undefined;
}

/** Why `CITUS=1 svc migrate` stops on a database without Citus (after the ordinary migrations). */
export const CITUS_MISSING =
  'CITUS=1: this database has no citus extension (run CREATE EXTENSION citus on the coordinator)';

/** What `/readyz` tells an operator, and how to fix it. */
export const NOT_READY = {
  notMigrated: 'migrations not applied: run svc migrate',
  unreachable: 'database unreachable',
} as const;

export type Readiness = { ready: true } | { ready: false; reason: (typeof NOT_READY)[keyof typeof NOT_READY] };

export interface DatabaseHandle {
  db: Database;
  /**
   * Where point reads run: a statement that finds rows by id, bounded in cost, which may wait
   * behind another on a pipelined connection. `db` itself unless `pointReadConnections` is set.
   */
  pointReads: Database;
  driver: 'postgres' | 'pglite';
  /** Apply the drizzle-kit migrations (idempotent) in a layout, then the Citus calls if asked. */
  migrate(options?: MigrateOptions): Promise<void>;
  /** Whether migrations have been applied and the database answers. */
  ready(): Promise<boolean>;
  /** The same, with the reason when not (`/readyz`, the workers' wait for `svc migrate`). */
  readiness(): Promise<Readiness>;
  /** Subscribe to NOTIFY on a channel; resolves to an unsubscribe function. */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * The rows of one `select` in COPY's text format, whole (`svc ledger move` reads the embedded
   * ledger with it): the server's own rendering of every value, which COPY FROM reads back exactly.
   */
  copyOut(select: string): Promise<Uint8Array>;
  /**
   * Embedded PGlite only (Postgres has autovacuum): analyze now if the ledger grew past
   * autovacuum's threshold since the last analyze (`EmbeddedStatistics`); true if it did.
   */
  refreshStatistics?(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Distinct statement texts the Postgres driver prepares (named, parsed once per connection);
 * texts past this many run unnamed, so that statements whose text varies (an `in (...)` list,
 * a multi-row insert) cannot grow the per-connection statement caches without bound.
 */
const MAX_PREPARED_TEXTS = 2000;

type PostgresClient = ReturnType<typeof postgres>;
type PendingQuery = ReturnType<PostgresClient['unsafe']>;

/**
 * A child span for a statement run while a recording span is active (a traced request): the
 * statement text as sent, with `$n` placeholders and never the parameter values. Untraced work
 * (tracing off, background loops) gets no span and no extra work but one lookup.
 */
function traced(query: PendingQuery, text: string): PendingQuery {
  const parent = trace.getActiveSpan();
  if (parent === undefined || !parent.isRecording()) return query;
  const verb = text.trimStart().split(/\s/, 1)[0]?.toLowerCase() || 'statement';
  // Asked each time, not cached: a cached tracer would outlive a tracer provider that was replaced.
  const span = trace.getTracer('tms-ledger').startSpan(verb, {
    kind: SpanKind.CLIENT,
    attributes: { 'db.system': 'postgresql', 'db.system.name': 'postgresql', 'db.query.text': text },
  });
  // postgres.js runs a query when it is first awaited; the span ends when that settles.
  type Settle = ((value: unknown) => unknown) | null | undefined;
  const then = query.then.bind(query) as unknown as (fulfilled: Settle, rejected: Settle) => Promise<unknown>;
  // biome-ignore lint/suspicious/noThenProperty: wraps the query's own `then` (it stays a promise)
  query.then = ((onFulfilled: Settle, onRejected: Settle) =>
    then(
      (value) => {
        span.end();
        return onFulfilled ? onFulfilled(value) : value;
      },
      (error: unknown) => {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        span.end();
        if (onRejected) return onRejected(error);
        throw error;
      },
    )) as unknown as PendingQuery['then'];
  return query;
}

/**
 * Drizzle asks postgres.js not to prepare (`prepare: false`) any statement not built with
 * `.prepare(name)`, and postgres.js then sends each parameterised statement as Parse + Describe,
 * waits for the parameter types, and only then Bind + Execute: two round trips and a parse per
 * statement. Drizzle's parameterised texts are fixed per query shape (values are parameters),
 * so preparing them (named, once per connection, as postgres.js does by default) leaves one
 * round trip and no parse. The same wrapping applies to the clients of transactions and
 * savepoints.
 */
function preparingClient(client: PostgresClient, preparedTexts: Set<string>): PostgresClient {
  const shouldPrepare = (text: string) => {
    if (preparedTexts.has(text)) return true;
    if (preparedTexts.size >= MAX_PREPARED_TEXTS) return false;
    preparedTexts.add(text);
    return true;
  };
  /** `begin([options], fn)` and `savepoint([name], fn)`: the callback gets a wrapped client. */
  const wrapCallbackClient =
    (method: (...args: unknown[]) => unknown) =>
    (...args: unknown[]) => {
      const last = args.length - 1;
      const fn = args[last];
      if (typeof fn === 'function') {
        args[last] = (inner: PostgresClient) => fn(preparingClient(inner, preparedTexts));
      }
      return method(...args);
    };
  return new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === 'unsafe') {
        return (text: string, parameters?: unknown, queryOptions?: { prepare?: boolean }) =>
          // Only parameterised texts: one without parameters already goes in one round trip,
          // and may carry literals (`set local statement_timeout = 1234`) that differ each time.
          traced(
            queryOptions?.prepare === false && Array.isArray(parameters) && parameters.length > 0 && shouldPrepare(text)
              ? target.unsafe(text, parameters as never, { ...queryOptions, prepare: true })
              : target.unsafe(text, parameters as never, queryOptions as never),
            text,
          );
      }
      if ((property === 'begin' || property === 'savepoint') && typeof value === 'function') {
        return wrapCallbackClient(value as (...args: unknown[]) => unknown);
      }
      return value;
    },
  });
}

/**
 * A runner for statement texts already compiled (see `selectShapedDocument`), straight on the
 * postgres.js client beneath a Drizzle database or transaction: Drizzle's `execute` would build
 * the query again from its `sql` fragments, about a tenth of a read's CPU. What Drizzle would do
 * around the driver call is kept: the query logger (`onQuery`, which the statement-count tests
 * read), the same `unsafe` call (so the same preparing and tracing) and its error wrapping.
 * The client and logger are those of the database's (or transaction's) Drizzle session, read
 * through Drizzle's public typed surface (`db._.session`, a `PostgresJsSession`). Null on PGlite
 * (in process: nothing to gain), and the caller then runs the statement through Drizzle.
 */
export function compiledStatementRunner(
  db: Pick<Database, '_'>,
): ((text: string, params: unknown[]) => Promise<unknown>) | null {
  const session = db._.session;
  if (!is(session, PostgresJsSession)) return null;
  const client: PostgresClient = session.client;
  const logger = session.logger;
  return async (text, params) => {
    logger?.logQuery(text, params);
    try {
      return await client.unsafe(text, params as never, { prepare: false });
    } catch (error) {
      throw new DrizzleQueryError(text, params, error as Error);
    }
  };
}

export async function openDatabase(options: OpenOptions): Promise<DatabaseHandle> {
  const logger: Logger | undefined = options.onQuery
    ? { logQuery: (query, params) => options.onQuery?.(query, params) }
    : undefined;

  if (options.databaseUrl) {
    const databaseUrl = options.databaseUrl;
    const connect = (max: number, applicationName?: string) =>
      postgres(databaseUrl, {
        max,
        onnotice: () => {},
        connection: {
          statement_timeout: options.statementTimeoutMs ?? 10000,
          ...(options.idleInTransactionTimeoutMs
            ? { idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs }
            : {}),
          ...(applicationName ? { application_name: applicationName } : {}),
        },
        connect_timeout: 5,
        ...(options.onStatement
          ? {
              debug: (connection: number, text: string, params: unknown[]) =>
                options.onStatement?.(connection, text, params),
            }
          : {}),
        // Reconnect within about a second once Postgres is back (the driver's default backoff grows
        // to 10-20 s, keeping the service answering 503 long after the database has recovered).
        backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1) * (0.5 + Math.random() / 2),
      });
    const client = connect(options.maxConnections ?? 10);
    const pointReadClient = options.pointReadConnections
      ? connect(options.pointReadConnections, 'tms-point-reads') // as pg_stat_activity names them
      : null;
    const db = drizzlePostgres(preparingClient(client, new Set()), { schema, logger }) as unknown as Database;
    const pointReads = pointReadClient
      ? (drizzlePostgres(preparingClient(pointReadClient, new Set()), { schema, logger }) as unknown as Database)
      : db;
    return {
      db,
      pointReads,
      driver: 'postgres',
      async migrate(migrateOptions) {
        await migrateInLayout(drizzlePostgres(client), MIGRATIONS_FOLDER, migrateOptions?.layout ?? 'plain');
        if (!migrateOptions?.citus) return;
        const citus = await client.unsafe(`select 1 from pg_extension where extname = 'citus'`);
        if (citus.length === 0) throw new Error(CITUS_MISSING);
        for (const statement of citusStatements()) await client.unsafe(statement);
      },
      ready: async () => (await readinessOf(db)).ready,
      readiness: () => readinessOf(db),
      async listen(channel, onPayload) {
        const subscription = await client.listen(channel, (payload) => onPayload(payload));
        return () => subscription.unlisten();
      },
      async copyOut(select) {
        const chunks: Buffer[] = [];
        for await (const chunk of await client.unsafe(`copy (${select}) to stdout`).readable()) chunks.push(chunk);
        return Buffer.concat(chunks);
      },
      close: async () => {
        await Promise.all([client.end({ timeout: 5 }), pointReadClient?.end({ timeout: 5 })]);
      },
    };
  }

  // PGlite and its drizzle driver are loaded only here: a gateway on Postgres never needs them.
  const [{ PGlite: PGliteClass }, { vector }, { drizzle: drizzlePglite }] = await Promise.all([
    import('@electric-sql/pglite'),
    // pgvector for the semantic arm's HNSW index (decisions §11): available, created by the search provider.
    import('@electric-sql/pglite-pgvector'),
    import('drizzle-orm/pglite'),
  ]);
  const dataDir = options.dataDir ?? 'memory://';
  // One process at a time on a folder (decisions §9), locked before PGlite touches it.
  const lock = dataDir.startsWith('memory://')
    ? null
    : acquireEmbeddedLock(dataDir, options.holder ?? path.basename(process.argv[1] ?? 'node'));
  let client: PGlite;
  try {
    if (lock) fs.mkdirSync(dataDir, { recursive: true });
    client = await PGliteClass.create(dataDir, { extensions: { vector } });
  } catch (error) {
    lock?.release();
    throw error;
  }
  const db = drizzlePglite(client, { schema, logger }) as unknown as Database;
  const statistics = new EmbeddedStatistics(client);
  statistics.start();
  return {
    db,
    // In process, one connection: nothing to pipeline.
    pointReads: db,
    driver: 'pglite',
    async migrate(migrateOptions) {
      // Citus is a server extension: an embedded ledger has none.
      if (migrateOptions?.citus) throw new Error('CITUS=1 needs DATABASE_URL (a Citus coordinator)');
      await migrateInLayout(drizzlePglite(client), MIGRATIONS_FOLDER, migrateOptions?.layout ?? 'plain');
    },
    ready: async () => (await readinessOf(db)).ready,
    readiness: () => readinessOf(db),
    async listen(channel, onPayload) {
      const unlisten = await client.listen(channel, (payload) => onPayload(payload));
      return () => unlisten();
    },
    async copyOut(select) {
      // PGlite hands COPY's output over as a Blob written to its virtual `/dev/blob`.
      const result = await client.query(`copy (${select}) to '/dev/blob'`);
      return new Uint8Array((await result.blob?.arrayBuffer()) ?? new ArrayBuffer(0));
    },
    refreshStatistics: () => statistics.refresh(),
    async close() {
      try {
        await statistics.stop();
        await client.close();
      } finally {
        lock?.release();
      }
    },
  };
}

/** The number of migration files shipped with this build. */
function expectedMigrations(): number {
  const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS_FOLDER, 'meta/_journal.json'), 'utf8')) as {
    entries: unknown[];
  };
  return journal.entries.length;
}

/** Postgres' SQLSTATE for a table that does not exist (no `svc migrate` yet). */
const UNDEFINED_TABLE = '42P01';
/** `/readyz` answers within this, even when connecting to the database hangs. */
const READINESS_TIMEOUT_MS = 5000;

function sqlStateOf(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

async function readinessOf(db: Database): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), READINESS_TIMEOUT_MS);
    timer.unref();
  });
  try {
    const result = await Promise.race([
      db.execute<{ n: number }>(sql`select count(*)::int as n from drizzle.__drizzle_migrations`),
      timedOut,
    ]);
    if (result === 'timeout') return { ready: false, reason: NOT_READY.unreachable };
    const rows = (result as unknown as { rows?: { n: number }[] }).rows ?? (result as unknown as { n: number }[]);
    if (Number(rows[0]?.n ?? 0) >= expectedMigrations()) return { ready: true };
    return { ready: false, reason: NOT_READY.notMigrated };
  } catch (error) {
    // No migrations table: the database answers but `svc migrate` never ran on it.
    if (sqlStateOf(error) === UNDEFINED_TABLE) return { ready: false, reason: NOT_READY.notMigrated };
    return { ready: false, reason: NOT_READY.unreachable };
  } finally {
    clearTimeout(timer);
  }
}
