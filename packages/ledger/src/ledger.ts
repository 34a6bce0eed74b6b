import { type ChainingProgress, chainOlderLedgers } from './chain-migration';
import { type DatabaseHandle, type OpenOptions, openDatabase, type Readiness } from './database';
import type { MigrateOptions } from './layout';
import { WrittenRecords } from './storage/written-records';
import { Stores } from './stores';

const UNIQUE_VIOLATION = '23505';
const SERIALIZATION_FAILURE = '40001';
const DEADLOCK = '40P01';

/**
 * Whether a write failed because another memory of its namespace holds its key (the
 * `memories_key_held` index, schema.ts): a unique violation on the memories table, whose other
 * unique key (the primary key) fresh ids never repeat. Named by table, not by index, because a
 * partition (`memories_p3`) or a Citus shard (`memories_102040`) reports its own index's name.
 */
export function isKeyHeldViolation(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 4; depth += 1) {
    const fields = current as { code?: unknown; table_name?: unknown; table?: unknown };
    const table = fields.table_name ?? fields.table;
    if (fields.code === UNIQUE_VIOLATION && typeof table === 'string' && /^memories(_p?\d+)?$/.test(table)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function isRetryable(error: unknown): boolean {
  const code =
    (error as { code?: string; cause?: { code?: string } })?.code ??
    (error as { cause?: { code?: string } })?.cause?.code;
  return code === UNIQUE_VIOLATION || code === SERIALIZATION_FAILURE || code === DEADLOCK;
}

/**
 * The ledger: a database plus its storage classes. `read` runs on the pool; `transaction`
 * runs one write transaction and retries it once when a concurrent writer won a race on a
 * unique key (the retry then sees the winner's row).
 */
export class Ledger {
  readonly stores: Stores;

  private constructor(readonly handle: DatabaseHandle) {
    this.stores = new Stores(handle.db, handle.pointReads);
  }

  static async open(options: OpenOptions): Promise<Ledger> {
    return new Ledger(await openDatabase(options));
  }

  get driver(): DatabaseHandle['driver'] {
    return this.handle.driver;
  }

  /**
   * Apply the SQL migrations (in the layout asked for), then chain any ledger written before the
   * hash chain existed (docs/ledger-proofs.md), reporting its progress.
   */
  async migrate(options?: MigrateOptions, onChaining?: (progress: ChainingProgress) => void): Promise<void> {
    await this.handle.migrate(options);
    await chainOlderLedgers(this, onChaining);
  }

  ready(): Promise<boolean> {
    return this.handle.ready();
  }

  /** The embedded ledger's planner statistics, refreshed now if due (`EmbeddedStatistics`); false on Postgres, whose autovacuum keeps them. */
  refreshStatistics(): Promise<boolean> {
    return this.handle.refreshStatistics?.() ?? Promise.resolve(false);
  }

  readiness(): Promise<Readiness> {
    return this.handle.readiness();
  }

  /**
   * For work that cannot wait for `svc migrate` (a command, a dev enrollment): throws the reason
   * `/readyz` would give ("migrations not applied: run svc migrate") unless the ledger is ready.
   */
  async assertReady(): Promise<void> {
    const state = await this.readiness();
    if (!state.ready) throw new Error(state.reason);
  }

  /**
   * Wait until the database is migrated (background workers on a database `svc migrate` has not
   * reached yet): `onWaiting` hears each new reason once, not every poll. True once ready,
   * false if `signal` aborted first.
   */
  async untilReady(options: {
    signal: AbortSignal;
    onWaiting: (reason: string) => void;
    pollMs?: number;
  }): Promise<boolean> {
    let told: string | null = null;
    while (!options.signal.aborted) {
      const state = await this.readiness();
      if (state.ready) return true;
      if (state.reason !== told) {
        told = state.reason;
        options.onWaiting(state.reason);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, options.pollMs ?? 1000);
        function done() {
          clearTimeout(timer);
          options.signal.removeEventListener('abort', done);
          resolve();
        }
        options.signal.addEventListener('abort', done);
      });
    }
    return false;
  }

  /**
   * One write transaction: its stores note the rows they insert (`Stores.written`), from which its
   * commit is hashed. `retry: false` for work that cannot run twice (a group commit answers its
   * writes itself).
   */
  async transaction<T>(fn: (stores: Stores) => Promise<T>, options: { retry?: boolean } = {}): Promise<T> {
    const attempts = options.retry === false ? 1 : 2;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.handle.db.transaction((tx) => fn(new Stores(tx as never, undefined, new WrittenRecords())));
      } catch (error) {
        if (attempt >= attempts || !isRetryable(error)) throw error;
      }
    }
  }

  /**
   * Run long reads on one consistent snapshot (a read-only repeatable-read transaction), so that
   * rows written or purged meanwhile cannot make successive pages disagree.
   */
  snapshot<T>(fn: (stores: Stores) => Promise<T>): Promise<T> {
    return this.handle.db.transaction((tx) => fn(new Stores(tx as never)), {
      isolationLevel: 'repeatable read',
      accessMode: 'read only',
    });
  }

  private closing: Promise<void> | null = null;

  /** Close the database (once; later calls wait for the first). */
  close(): Promise<void> {
    this.closing ??= this.handle.close();
    return this.closing;
  }
}
