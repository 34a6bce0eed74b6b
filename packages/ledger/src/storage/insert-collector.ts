import { getTableColumns, getTableName, type SQL, sql } from 'drizzle-orm';
import { type PgColumn, PgDialect, type PgTable } from 'drizzle-orm/pg-core';
import { CHAINING, commitDigest, digestInputOf, emptySources, nextChainHash } from '../chain';
import { compiledStatementRunner, type Database } from '../database';
import { commits, evidence, idempotencyKeyDirectory, idempotencyRecords, memories, revisions } from '../schema';
import { type CommitStamp, notification } from './commit-storage';
import { type EvidenceRow, EvidenceStorage } from './evidence-storage';
import { type IdempotencyRecord, type KeyScope, keyDirectoryRow } from './idempotency-storage';
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
   * chains it). Their digests come from the collected rows, so chaining costs no statement: the
   * commit rows carry their chain hashes into the flush, and the last is the chain's new head.
   */
  chain(previous: string | null): void {
    const collected = (this.rows.get(commits) ?? []) as (typeof commits.$inferInsert)[];
    if (previous === null || collected.length === 0 || !CHAINING) return;
    const sources = emptySources();
    for (const row of (this.rows.get(memories) ?? []) as MemoryRow[]) sources.memories.set(row.id, row);
    for (const row of (this.rows.get(revisions) ?? []) as RevisionRow[]) sources.revisions.set(row.id, row);
    for (const row of (this.rows.get(evidence) ?? []) as EvidenceRow[]) sources.evidence.set(row.id, row);
    let hash = previous;
    for (const row of [...collected].sort((a, b) => a.sequence - b.sequence)) {
      const input = digestInputOf(row, sources);
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
    const params = flushParameters(batch, notifyWorkspaceId);
    let text = flushTexts.get(key);
    if (text === undefined) {
      // Once per shape: the text is Drizzle's, and the parameters computed here must be exactly
      // the ones it sends, or the shape is built by Drizzle every time.
      const query = dialect.sqlToQuery(build());
      text = sameParameters(query.params, params) ? query.sql : null;
      if (flushTexts.size < MAX_FLUSH_SHAPES) flushTexts.set(key, text);
    }
    if (text === null) await db.execute(build());
    else await run(text, params);
  }

  /**
   * `flush` for big batches (a bulk import's): each table's rows travel as one JSON parameter
   * (`json_populate_recordset`), so one statement of a few parameters carries hundreds of rows.
   * Encoding every value as a parameter of its own costs more CPU than the rest of a row's way
   * there, and a batch's parameters would near the protocol's limit of 65535. A table whose rows
   * leave a column to its default is sent as `flush` sends it.
   */
  async flushAsRecordsets(db: Database, notifyWorkspaceId: string | null): Promise<void> {
    const batch = [...this.rows];
    if (!batch.every(([table, rows]) => rows.every((row) => fillsEveryColumn(table, row)))) {
      await this.flush(db, notifyWorkspaceId);
      return;
    }
    this.rows.clear();
    const final = notifyWorkspaceId === null ? sql`select 1` : notification(notifyWorkspaceId);
    const parts = batch.map(([table, rows], i) => {
      const { list, bytea } = recordsetColumns(table);
      const records = JSON.stringify(rows.map((row) => recordsetRow(table, row, bytea)));
      return sql`${sql.identifier(`inserted_${i}`)} as (insert into ${table} (${list}) select ${list} from json_populate_recordset(null::${table}, ${records}::json))`;
    });
    await db.execute(parts.length > 0 ? sql`with ${sql.join(parts, sql`, `)} ${final}` : final);
  }
}

/** A table's insertable columns as a SQL list, and those stored as bytea (sent as `\\x` hex). */
const recordsets = new WeakMap<PgTable, { list: SQL; bytea: Set<string> }>();
function recordsetColumns(table: PgTable): { list: SQL; bytea: Set<string> } {
  let found = recordsets.get(table);
  if (!found) {
    const columns = columnsOf(table);
    found = {
      list: sql.raw(columns.map(([, column]) => `"${column.name}"`).join(', ')),
      bytea: new Set(columns.filter(([, column]) => column.getSQLType() === 'bytea').map(([key]) => key)),
    };
    recordsets.set(table, found);
  }
  return found;
}

function fillsEveryColumn(table: PgTable, row: object): boolean {
  for (const [key] of columnsOf(table)) if ((row as Record<string, unknown>)[key] === undefined) return false;
  return true;
}

/** One row as `json_populate_recordset` reads it: keyed by column name, bytea as hex, the rest as JSON has it. */
function recordsetRow(table: PgTable, row: object, bytea: ReadonlySet<string>): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const [key, column] of columnsOf(table)) {
    const value = (row as Record<string, unknown>)[key];
    record[column.name] =
      value === null || !bytea.has(key)
        ? value
        : `\\x${Buffer.from(column.mapToDriverValue(value) as Uint8Array).toString('hex')}`;
  }
  return record;
}

function flushStatement(db: Database, batch: [PgTable, object[]][], notifyWorkspaceId: string | null): SQL {
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
 * which columns each row leaves to the default; Drizzle's insert builder (a tenth of a create's
 * CPU) then runs once per such shape, and later flushes of the shape send its text with
 * parameters encoded here column by column, as Drizzle encodes them.
 */
const dialect = new PgDialect();
const flushTexts = new Map<string, string | null>();
/** Shapes kept (batch sizes times tables); past this, Drizzle builds the statement. */
const MAX_FLUSH_SHAPES = 1000;

/** Shapes whose text is reused (tests check that the compiled path is the one taken). */
export function compiledFlushShapes(): number {
  let count = 0;
  for (const text of flushTexts.values()) if (text !== null) count += 1;
  return count;
}

/** The columns an insert names, in Drizzle's order. */
const insertColumns = new WeakMap<PgTable, [string, PgColumn][]>();
function columnsOf(table: PgTable): [string, PgColumn][] {
  let columns = insertColumns.get(table);
  if (!columns) {
    // Drizzle leaves out generated columns (`shouldDisableInsert`, internal to it).
    columns = Object.entries(getTableColumns(table)).filter(
      ([, column]) => !(column as unknown as { shouldDisableInsert(): boolean }).shouldDisableInsert(),
    );
    insertColumns.set(table, columns);
  }
  return columns;
}

function flushShapeKey(batch: [PgTable, object[]][], notifies: boolean): string {
  const parts: string[] = [notifies ? 'notify' : 'quiet'];
  for (const [table, rows] of batch) {
    const columns = columnsOf(table);
    const masks = rows.map((row) => {
      let mask = '';
      for (const [key] of columns) mask += (row as Record<string, unknown>)[key] === undefined ? '0' : '1';
      return mask;
    });
    parts.push(`${getTableName(table)}:${masks.join(';')}`);
  }
  return parts.join('|');
}

function flushParameters(batch: [PgTable, object[]][], notifyWorkspaceId: string | null): unknown[] {
  const params: unknown[] = [];
  for (const [table, rows] of batch) {
    const columns = columnsOf(table);
    for (const row of rows) {
      for (const [key, column] of columns) {
        const value = (row as Record<string, unknown>)[key];
        if (value === undefined) continue; // `default` in the text
        params.push(value === null ? null : column.mapToDriverValue(value));
      }
    }
  }
  if (notifyWorkspaceId !== null) params.push(...dialect.sqlToQuery(notification(notifyWorkspaceId)).params);
  return params;
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

/** `evidence.insert` for a write in a group commit (an imported line's evidence): the row joins the batch's inserts. */
class CollectingEvidenceStorage extends EvidenceStorage {
  constructor(
    db: Database,
    private readonly collector: InsertCollector,
  ) {
    super(db);
  }

  override async insert(row: EvidenceRow): Promise<void> {
    this.collector.add(evidence, row);
  }
}

/**
 * The same stores (reads go to the batch's transaction), except that the inserts a grouped
 * write makes after its commit point are collected for the batch.
 */
export function collectingStores<S extends { db: Database; memories: MemoryStorage; evidence: EvidenceStorage }>(
  stores: S,
  collector: InsertCollector,
): S {
  const copy = Object.assign(Object.create(Object.getPrototypeOf(stores)) as S, stores);
  Object.defineProperty(copy, 'memories', { value: new CollectingMemoryStorage(stores.db, collector) });
  Object.defineProperty(copy, 'evidence', { value: new CollectingEvidenceStorage(stores.db, collector) });
  return copy;
}

/** The stamps of `count` consecutive sequences starting at `first`. */
export function consecutiveStamps(first: CommitStamp, count: number): CommitStamp[] {
  return Array.from({ length: count }, (_, i) => ({ sequence: first.sequence + i, recordedAt: first.recordedAt }));
}
