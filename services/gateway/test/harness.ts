import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '@tms/telemetry';
import {
  ApiClient,
  createTestDatabase,
  seedPgliteDirectory,
  type TestDatabase,
  TestIssuer,
  testMigrateOptions,
} from '@tms/testkit';
import { parseEnv } from '../src/env';
import { type GatewayOptions, type RunningGateway, startGateway } from '../src/gateway';

export type Driver = 'postgres' | 'pglite';
export const DRIVERS: Driver[] = ['pglite', 'postgres'];

export interface Human {
  subject: string;
  token(): Promise<string>;
  actorId: string;
  api(workspace?: string | null): Promise<ApiClient>;
}

export interface Harness {
  driver: Driver;
  url: string;
  gateway: RunningGateway;
  issuer: TestIssuer;
  database: TestDatabase | null;
  /** Anonymous client (no token, no workspace). */
  api: ApiClient;
  /** Every log line the gateway wrote. */
  logs: string[];
  /** SQL statements issued through Drizzle since the last reset. */
  queries: { count: number; texts: string[]; reset(): void };
  human(options?: { enroll?: boolean }): Promise<Human>;
  /** `table.column` of every text, bytea or array column in which `needle` occurs (for leak checks). */
  findInDatabase(needle: string): Promise<string[]>;
  /** A fresh workspace owned by a fresh enrolled human. */
  workspace(): Promise<{ id: string; owner: Human; api: ApiClient }>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  driver: Driver;
  timeoutMs?: number;
  /** Environment over the harness defaults; `undefined` removes a default (e.g. `INDEXER`). */
  env?: Record<string, string | undefined>;
  /** Run the index lag watch (off by default: its statements would show in query counts). */
  lagWatch?: boolean;
  /** Skip migrations (to test readiness before `svc migrate`). */
  migrate?: boolean;
  /** The layout `svc migrate` gives the database (default: TEST_DATABASE_LAYOUT, else plain). */
  layout?: 'plain' | 'partitioned';
  /** Every statement sent to Postgres, with its connection and parameters. */
  onStatement?: (connection: number, sqlText: string, params: unknown[]) => void;
}

/** A real gateway on loopback over a fresh database (Postgres) or data directory (PGlite). */
export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const issuer = await TestIssuer.start();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-test-'));
  const database = options.driver === 'postgres' ? await createTestDatabase() : null;
  if (!database) await seedPgliteDirectory(path.join(dataDir, 'pglite'));
  const logs: string[] = [];
  // The gateway's own logger factory (its log schema), writing into `logs`.
  const logger = createLogger(
    { service: 'tms-gateway', level: 'debug', redact: ['req.headers.authorization', 'authorization'] },
    new Writable({
      write(chunk, _enc, done) {
        logs.push(String(chunk));
        done();
      },
    }),
  );
  const queries = {
    count: 0,
    texts: [] as string[],
    reset() {
      this.count = 0;
      this.texts = [];
    },
  };
  const env = parseEnv({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...issuer.env(),
    // No background indexer unless a test asks for one: it would add SQL to query counts.
    INDEXER: 'external',
    // No builtin model unless a test asks for one: its child process costs each gateway about two
    // seconds of CPU to load. The semantic arm's tests set EMBEDDER themselves.
    EMBEDDER: 'none',
    ...(options.env ?? {}),
  });
  if (database && options.migrate !== false) {
    const { Ledger } = await import('@tms/ledger');
    const ledger = await Ledger.open({ databaseUrl: database.url });
    await ledger.migrate(options.layout ? { layout: options.layout } : testMigrateOptions());
    await ledger.close();
  }
  const gateway = await startGateway(env, {
    logger,
    timeoutMs: options.timeoutMs,
    lagWatch: options.lagWatch ?? false,
    onStatement: options.onStatement,
    onQuery: (text) => {
      queries.count += 1;
      queries.texts.push(text);
    },
  });
  const api = new ApiClient(gateway.url);

  async function human({ enroll = true } = {}): Promise<Human> {
    const subject = `user-${crypto.randomBytes(5).toString('hex')}`;
    if (enroll) await gateway.ledger.stores.directory.enroll(issuer.sessionIssuer, subject, Date.now() / 1000);
    const token = () => issuer.sessionToken(subject);
    const me = await api.get('/v1/me', { token: await token() });
    if (me.status !== 200) throw new Error(`me.get failed: ${me.text}`);
    return {
      subject,
      token,
      actorId: me.body.actor.id,
      api: async (workspace = null) => new ApiClient(gateway.url, await token(), workspace),
    };
  }

  return {
    driver: options.driver,
    url: gateway.url,
    gateway,
    issuer,
    database,
    api,
    logs,
    queries,
    human,
    async workspace() {
      const owner = await human();
      const res = await (await owner.api()).post('/v1/workspaces', {
        name: `ws-${crypto.randomBytes(3).toString('hex')}`,
      });
      if (res.status !== 200) throw new Error(`workspaces.create failed: ${res.text}`);
      const id = res.body.workspace.id as string;
      return { id, owner, api: await owner.api(id) };
    },
    async findInDatabase(needle) {
      const db = gateway.ledger.handle.db;
      const { sql } = await import('drizzle-orm');
      const rowsOf = <T>(result: unknown) => (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
      const columns = rowsOf<{ table_name: string; column_name: string; data_type: string }>(
        // A partition's rows show through its parent (the partitioned layout): parents only.
        await db.execute(sql`select table_name, column_name, data_type from information_schema.columns
          where table_schema = 'public' and data_type in ('text', 'bytea', 'ARRAY', 'jsonb')
            and not exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
                             where n.nspname = 'public' and c.relname = table_name and c.relispartition)`),
      );
      if (columns.length < 10) throw new Error('the ledger schema was not found');
      const found: string[] = [];
      for (const { table_name, column_name, data_type } of columns) {
        const column = sql.identifier(column_name);
        const asText = data_type === 'bytea' ? sql`encode(${column}, 'escape')` : sql`${column}::text`;
        const hits = rowsOf<{ n: number }>(
          await db.execute(
            sql`select count(*)::int as n from ${sql.identifier(table_name)} where ${asText} like ${`%${needle}%`}`,
          ),
        );
        if ((hits[0]?.n ?? 0) > 0) found.push(`${table_name}.${column_name}`);
      }
      return found;
    },
    async close() {
      await gateway.close();
      await issuer.close();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A second gateway over a Postgres harness's database (PGlite's directory opens in one process
 * only), with options of its own and a quiet log, for tests that hold two ways of answering
 * against each other. `statements` counts its SQL; the caller closes it.
 */
export async function startPeerGateway(
  h: Harness,
  options: GatewayOptions,
): Promise<{ gateway: RunningGateway; statements: { count: number } }> {
  if (!h.database) throw new Error('a peer gateway needs the Postgres harness');
  const statements = { count: 0 };
  const gateway = await startQuietGateway(
    h.database.url,
    h.issuer,
    {},
    {
      ...options,
      onQuery: () => {
        statements.count += 1;
      },
    },
  );
  return { gateway, statements };
}

/**
 * A gateway with a quiet log (warnings only, discarded) over a Postgres database of the caller's
 * (a harness's, a moved or a restored ledger), taking `issuer`'s tokens, with no indexer and no
 * lag watch; `env` over those defaults. The caller closes it.
 */
export function startQuietGateway(
  databaseUrl: string,
  issuer: TestIssuer,
  env: Record<string, string> = {},
  options: GatewayOptions = {},
): Promise<RunningGateway> {
  return startGateway(
    parseEnv({ PORT: '0', HOST: '127.0.0.1', DATABASE_URL: databaseUrl, ...issuer.env(), INDEXER: 'external', ...env }),
    {
      ...options,
      lagWatch: false,
      logger: createLogger(
        { service: 'tms-gateway', level: 'warn' },
        new Writable({ write: (_chunk, _encoding, done) => done() }),
      ),
    },
  );
}
