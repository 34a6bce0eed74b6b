import {
  type DriverValueEncoder,
  getTableColumns,
  getTableName,
  is,
  Param,
  Placeholder,
  type SQL,
  sql,
} from 'drizzle-orm';
import { PgDialect, type PgTable } from 'drizzle-orm/pg-core';
import { CHAINING, commitDigest, digestInputOf, nextChainHash } from '../chain';
import { compiledStatementRunner, type Database } from '../database';
import type { IdempotencyRecord, MemoryRow, RevisionRow } from '../rows';
import { commits, idempotencyKeyDirectory, idempotencyRecords, memories, revisions } from '../schema';
import { type CommitStamp, notification } from './commit-storage';
import { type KeyScope, keyDirectoryRow } from './idempotency-storage';
import { MemoryStorage } from './memory-storage';
import { WrittenRecords } from './written-records';

/**
 * Rows a group commit writes, gathered while its writes finish and then sent as one multi-row
 * insert per table (in the order tables were first named: parents before children), so the
 * statements sent while the workspace head is locked do not grow with the batch.
 */
export class InsertCollector {
  private readonly rows = new Map<PgTable, object[]>();
  /** The collected rows by kind: the batch's commits are hashed from the objects the flush sends. */
  private readonly written = new WrittenRecords();

  add(table: PgTable, row: object): void {
    const list = this.rows.get(table);
    if (list) list.push(row);
    else this.rows.set(table, [row]);
    this.written.note(table, row);
  }

  commit(row: typeof commits.$inferInsert): void {
    this.add(commits, row);
  }

  /** A grouped write's record (always in a workspace), with its key directory entry if principal-scoped. */
  idempotencyRecord(record: IdempotencyRecord, scope: KeyScope): void {
    this.add(idempotencyRecords, record);
    if (scope === 'principal') this.add(idempotencyKeyDirectory, keyDirectoryRow(record));
  }

  get empty(): boolean {
    return this.rows.size === 0;
  }

  /**
   * Chain the collected commits in sequence order from `previous` (the chain hash of the commit
   * before, read when the batch allocated; null: the workspace is not chained yet and `svc migrate`
   * chains it). Their digests come from the collected rows, the objects the flush inserts, so
   * chaining costs no statement: the commit rows carry their chain hashes into the flush, and the
   * last is the chain's new head.
   */
  chain(previous: string | null): void {
    const collected = (this.rows.get(commits) ?? []) as (typeof commits.$inferInsert)[];
    if (previous === null || collected.length === 0 || !CHAINING) return;
    let hash = previous;
    for (const row of [...collected].sort((a, b) => a.sequence - b.sequence)) {
      const input = digestInputOf(row, this.written.sources);
      // Only writes whose rows the batch collects are grouped; any other would be chained wrong.
      if (input.records.some((record) => record.missing)) {
        throw new Error(`grouped commit ${row.sequence} names a row the batch did not collect`);
      }
      hash = nextChainHash(hash, commitDigest(input));
      row.chainHash = hash;
    }
  }

  /**
   * Every collected row in one statement: one multi-row insert per table, each in a
   * data-modifying CTE (Postgres runs them all; the ledger has no foreign keys whose order
   * would matter), ending with the NOTIFY of `notifyWorkspaceId` (delivered at commit).
   */
  async flush(db: Database, notifyWorkspaceId: string | null): Promise<void> {
    const batch = [...this.rows];
    this.rows.clear();
    const build = () => flushStatement(db, batch, notifyWorkspaceId);
    const run = compiledStatementRunner(db);
    if (!run) {
      await db.execute(build());
      return;
    }
    const key = flushShapeKey(batch, notifyWorkspaceId !== null);
    let compiled = flushTexts.get(key);
    if (compiled === undefined) {
      compiled = compileFlush(db, batch, notifyWorkspaceId);
      if (flushTexts.size < MAX_FLUSH_SHAPES) flushTexts.set(key, compiled);
    }
    if (compiled === null) await db.execute(build());
    else await run(compiled.sql, compiled.parameters(flushValues(batch, notifyWorkspaceId)));
  }
}

function flushStatement(
  db: Database,
  batch: [PgTable, object[]][],
  notifyWorkspaceId: string | Placeholder | null,
): SQL {
  const final = notifyWorkspaceId === null ? sql`select 1` : notification(notifyWorkspaceId);
  const parts = batch.map(([table, rows], i) => {
    const name = sql.identifier(`inserted_${i}`);
    // Drizzle puts an embedded query in parentheses itself.
    return sql`${name} as ${db.insert(table).values(rows as never)}`;
  });
  return parts.length > 0 ? sql`with ${sql.join(parts, sql`, `)} ${final}` : final;
}

/*
 * A flush's statement text depends only on its tables, their order, how many rows each has and
 * which columns each row leaves to the default. Drizzle's insert builder (a tenth of a create's
 * CPU) then runs once per such shape, on rows of placeholders, and later flushes of the shape
 * send its text with the placeholders filled: each value encoded by the encoder Drizzle bound to
 * its parameter (its column), as Drizzle's own prepared statements fill theirs.
 */
const dialect = new PgDialect();
const flushTexts = new Map<string, CompiledFlush | null>();
/** Shapes kept (batch sizes times tables); past this, Drizzle builds the statement. */
const MAX_FLUSH_SHAPES = 1000;

interface CompiledFlush {
  sql: string;
  /** The statement's parameters from the flush's values (`flushValues`, the placeholders' order). */
  parameters(values: readonly unknown[]): unknown[];
}

/** Shapes whose text is reused (tests check that the compiled path is the one taken). */
export function compiledFlushShapes(): number {
  let count = 0;
  for (const compiled of flushTexts.values()) if (compiled !== null) count += 1;
  return count;
}

/** The keys of a table's columns, in Drizzle's order (the same for every row of the table). */
const columnKeys = new WeakMap<PgTable, string[]>();
function keysOf(table: PgTable): string[] {
  let keys = columnKeys.get(table);
  if (!keys) {
    keys = Object.keys(getTableColumns(table));
    columnKeys.set(table, keys);
  }
  return keys;
}

function flushShapeKey(batch: [PgTable, object[]][], notifies: boolean): string {
  const parts: string[] = [notifies ? 'notify' : 'quiet'];
  for (const [table, rows] of batch) {
    const keys = keysOf(table);
    const masks = rows.map((row) => {
      let mask = '';
      for (const key of keys) mask += (row as Record<string, unknown>)[key] === undefined ? '0' : '1';
      return mask;
    });
    parts.push(`${getTableName(table)}:${masks.join(';')}`);
  }
  return parts.join('|');
}

/** The values a flush sends, in placeholder order: every column a row sets, then the NOTIFY's workspace. */
function flushValues(batch: [PgTable, object[]][], notifyWorkspaceId: string | null): unknown[] {
  const values: unknown[] = [];
  for (const [table, rows] of batch) {
    const keys = keysOf(table);
    for (const row of rows) {
      for (const key of keys) {
        const value = (row as Record<string, unknown>)[key];
        if (value !== undefined) values.push(value); // undefined: `default` in the text
      }
    }
  }
  if (notifyWorkspaceId !== null) values.push(notifyWorkspaceId);
  return values;
}

/**
 * The shape of this batch as Drizzle builds it on rows of placeholders (placeholder `n` stands
 * for `flushValues(...)[n]`). Null, leaving the shape to Drizzle, when the text would carry a
 * value that is not one of the placeholders (a default Drizzle computes, say), or when its
 * parameters for this batch differ from those Drizzle builds for it.
 */
function compileFlush(
  db: Database,
  batch: [PgTable, object[]][],
  notifyWorkspaceId: string | null,
): CompiledFlush | null {
  let next = 0;
  const placeholders: [PgTable, object[]][] = batch.map(([table, rows]) => [
    table,
    rows.map((row) => {
      const shaped: Record<string, unknown> = {};
      for (const key of keysOf(table)) {
        if ((row as Record<string, unknown>)[key] !== undefined) shaped[key] = sql.placeholder(String(next++));
      }
      return shaped;
    }),
  ]);
  const notify = notifyWorkspaceId === null ? null : sql.placeholder(String(next++));
  const query = dialect.sqlToQuery(flushStatement(db, placeholders, notify));
  const fills: { index: number; encoder: DriverValueEncoder<unknown, unknown> | null }[] = [];
  for (const param of query.params) {
    if (is(param, Param) && is(param.value, Placeholder)) {
      fills.push({ index: Number(param.value.name), encoder: param.encoder });
    } else if (is(param, Placeholder)) {
      fills.push({ index: Number(param.name), encoder: null });
    } else return null;
  }
  const compiled: CompiledFlush = {
    sql: query.sql,
    // A null is sent as null, never through the column's encoder: as Drizzle sends a null value.
    parameters: (values) =>
      fills.map(({ index, encoder }) => {
        const value = values[index];
        return value === null || encoder === null ? value : encoder.mapToDriverValue(value);
      }),
  };
  const built = dialect.sqlToQuery(flushStatement(db, batch, notifyWorkspaceId));
  if (query.sql !== built.sql) return null;
  return sameParameters(built.params, compiled.parameters(flushValues(batch, notifyWorkspaceId))) ? compiled : null;
}

function sameParameters(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((value, i) => sameParameter(value, b[i]));
}

function sameParameter(a: unknown, b: unknown): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b) === 0;
  if (Array.isArray(a) && Array.isArray(b)) return sameParameters(a, b);
  return Object.is(a, b);
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
