import { sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Database } from '../database';
import { commits, idempotencyRecords, memories, revisions } from '../schema';
import { type CommitStamp, notification } from './commit-storage';
import type { IdempotencyRecord } from './idempotency-storage';
import { type MemoryRow, MemoryStorage, type RevisionRow } from './memory-storage';

/**
 * Rows a group commit writes, gathered while its writes finish and then sent as one multi-row
 * insert per table (in the order tables were first named: parents before children), so the
 * statements sent while the workspace head is locked do not grow with the batch.
 */
export class InsertCollector {
  private readonly rows = new Map<PgTable, object[]>();

  add(table: PgTable, row: object): void {
    const list = this.rows.get(table);
    if (list) list.push(row);
    else this.rows.set(table, [row]);
  }

  commit(row: typeof commits.$inferInsert): void {
    this.add(commits, row);
  }

  idempotencyRecord(record: IdempotencyRecord): void {
    this.add(idempotencyRecords, record);
  }

  get empty(): boolean {
    return this.rows.size === 0;
  }

  /**
   * Every collected row in one statement: one multi-row insert per table, each in a
   * data-modifying CTE (Postgres runs them all; the ledger has no foreign keys whose order
   * would matter), ending with the NOTIFY of `notifyWorkspaceId` (delivered at commit).
   */
  async flush(db: Database, notifyWorkspaceId: string | null): Promise<void> {
    const final = notifyWorkspaceId === null ? sql`select 1` : notification(notifyWorkspaceId);
    const inserts = [...this.rows].map(([table, rows], i) => {
      const name = sql.identifier(`inserted_${i}`);
      // Drizzle puts an embedded query in parentheses itself.
      return sql`${name} as ${db.insert(table).values(rows as never)}`;
    });
    this.rows.clear();
    await db.execute(inserts.length > 0 ? sql`with ${sql.join(inserts, sql`, `)} ${final}` : final);
  }
}

/** `memories.insert` for a write in a group commit: the rows join the batch's inserts. */
class CollectingMemoryStorage extends MemoryStorage {
  constructor(
    db: Database,
    private readonly collector: InsertCollector,
  ) {
    super(db);
  }

  override async insert(memory: MemoryRow, revision: RevisionRow): Promise<void> {
    this.collector.add(memories, memory);
    this.collector.add(revisions, revision);
  }
}

/**
 * The same stores (reads go to the batch's transaction), except that the inserts a grouped
 * write makes after its commit point are collected for the batch.
 */
export function collectingStores<S extends { db: Database; memories: MemoryStorage }>(
  stores: S,
  collector: InsertCollector,
): S {
  const copy = Object.assign(Object.create(Object.getPrototypeOf(stores)) as S, stores);
  Object.defineProperty(copy, 'memories', { value: new CollectingMemoryStorage(stores.db, collector) });
  return copy;
}

/** The stamps of `count` consecutive sequences starting at `first`. */
export function consecutiveStamps(first: CommitStamp, count: number): CommitStamp[] {
  return Array.from({ length: count }, (_, i) => ({ sequence: first.sequence + i, recordedAt: first.recordedAt }));
}
