/**
 * Moving a ledger into an empty Postgres database (`svc ledger move`, docs/operations.md): every
 * row of every ledger table, read with `COPY (select ...) TO` from the source and written with
 * `COPY ... FROM STDIN` into the target, all in one transaction on the target, so that a move
 * lands whole or leaves the target as it was. COPY's text format is the servers' own rendering of
 * each value (bytea in hex, doubles to the last bit, arrays), so rows arrive byte for byte.
 *
 * Only data crosses: the target's tables are made beforehand by this build's migrations, in the
 * layout asked for (plain, partitioned, Citus). Left behind: the search index's cursors
 * (`index_state`), since the index is derived data rebuilt on the target. Replaced: the target's
 * service settings (the cursor and ledger signing keys a gateway started there may have made),
 * so that the heads the ledger signed and the cursors it handed out stay valid.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql as drizzleSql } from 'drizzle-orm';
import { getTableConfig } from 'drizzle-orm/pg-core';
import postgres from 'postgres';
import { DISTRIBUTION_COLUMN, primaryKeyColumns, tablesOf } from './distribution';
import type { Ledger } from './ledger';
import { rowsOf } from './rows';

export interface TableRows {
  table: string;
  rows: number;
}

/** Tables whose rows a move does not carry: the search index's cursors (the index is rebuilt). */
export const LEFT_BEHIND_BY_MOVE: readonly string[] = ['index_state'];
/** Tables whose rows on the target a move replaces with the source's (service-wide secrets). */
export const REPLACED_BY_MOVE: readonly string[] = ['service_settings'];

interface MovedTable {
  name: string;
  columns: string[];
  key: string[];
  /** Copied one workspace at a time (memory held stays within one workspace's rows). */
  byWorkspace: boolean;
}

/** Every ledger table a move carries, from the schema itself (a table added later is carried too). */
export function movedTables(): MovedTable[] {
  return tablesOf()
    .map((table) => {
      const config = getTableConfig(table);
      const columns = config.columns.map((column) => column.name);
      return {
        name: config.name,
        columns,
        key: primaryKeyColumns(table),
        byWorkspace: columns.includes(DISTRIBUTION_COLUMN),
      };
    })
    .filter((table) => !LEFT_BEHIND_BY_MOVE.includes(table.name));
}

/** The target already holds a ledger: a move only fills an empty one. */
export class TargetHoldsLedgerError extends Error {
  constructor(readonly occupied: TableRows[]) {
    const shown = occupied.slice(0, 3).map((t) => `${t.table} ${t.rows}`);
    if (occupied.length > shown.length) shown.push(`${occupied.length - shown.length} more`);
    super(
      `the target already holds a ledger (rows in ${occupied.length} tables: ${shown.join(', ')}): move into an empty database`,
    );
    this.name = 'TargetHoldsLedgerError';
  }
}

/** The target did not answer (down, wrong address, no such database, refused credentials). */
export class TargetUnreachableError extends Error {
  constructor(reason: string) {
    super(`cannot reach the target database: ${reason}`);
    this.name = 'TargetUnreachableError';
  }
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** One COPY of the move: a table, or one workspace's rows of it. */
interface Chunk {
  table: MovedTable;
  workspaceId: string | null;
  rows: number;
}

type Sql = postgres.Sql | postgres.TransactionSql;

/** A Postgres database a ledger moves into, on a connection of the move's own. */
export class MoveTarget {
  private constructor(private readonly sql: postgres.Sql) {}

  /** Connect and ask once, so that an unreachable target is refused before anything changes. */
  static async connect(url: string): Promise<MoveTarget> {
    const sql = postgres(url, {
      max: 1,
      onnotice: () => {},
      connect_timeout: 5,
      // A large ledger's COPY may take longer than any statement of a request.
      connection: { statement_timeout: 0, application_name: 'svc ledger move' },
    });
    try {
      await sql`select 1`;
    } catch (error) {
      await sql.end({ timeout: 1 });
      throw new TargetUnreachableError((error as Error).message);
    }
    return new MoveTarget(sql);
  }

  /** The ledger tables that hold rows on the target (service settings aside); empty when it may be filled. */
  occupied(): Promise<TableRows[]> {
    return occupiedTables(this.sql);
  }

  /**
   * Copy every row of `source` into the target (migrated beforehand) in one transaction, after
   * checking it again for a ledger; `onProgress` hears the rows copied so far and the total. Each
   * table's count on the target is compared with the source's before the transaction commits.
   * Answers each table's rows and the workspaces moved.
   */
  async copyFrom(
    source: Ledger,
    onProgress?: (copied: number, total: number) => void,
  ): Promise<{ tables: TableRows[]; workspaces: string[] }> {
    const chunks = await chunksOf(source);
    const total = chunks.reduce((n, chunk) => n + chunk.rows, 0);
    const expected = new Map<string, number>();
    for (const chunk of chunks) expected.set(chunk.table.name, (expected.get(chunk.table.name) ?? 0) + chunk.rows);
    const tables = await this.sql.begin(async (tx) => {
      const occupied = await occupiedTables(tx);
      if (occupied.length > 0) throw new TargetHoldsLedgerError(occupied);
      for (const name of REPLACED_BY_MOVE) await tx.unsafe(`delete from ${ident(name)}`);
      let copied = 0;
      onProgress?.(copied, total);
      for (const chunk of chunks) {
        const data = await source.handle.copyOut(selectOf(chunk));
        const columns = chunk.table.columns.map(ident).join(', ');
        const into = await tx.unsafe(`copy ${ident(chunk.table.name)} (${columns}) from stdin`).writable();
        await pipeline(Readable.from([data]), into);
        copied += chunk.rows;
        onProgress?.(copied, total);
      }
      const landed: TableRows[] = [];
      for (const table of movedTables()) {
        const rows = await countRows(tx, table.name);
        const want = expected.get(table.name) ?? 0;
        if (rows !== want) throw new Error(`${table.name}: ${rows} rows arrived where the source holds ${want}`);
        landed.push({ table: table.name, rows });
      }
      return landed;
    });
    const workspaces = chunks
      .filter((chunk) => chunk.table.name === 'workspace_heads' && chunk.workspaceId !== null)
      .map((chunk) => chunk.workspaceId as string);
    return { tables, workspaces };
  }

  /** Planner statistics for the loaded tables (a bulk load leaves none, and autovacuum may be off). */
  async analyze(): Promise<void> {
    for (const table of movedTables()) await this.sql.unsafe(`analyze ${ident(table.name)}`);
  }

  close(): Promise<void> {
    return this.sql.end({ timeout: 5 });
  }
}

function selectOf(chunk: Chunk): string {
  const { table } = chunk;
  const where =
    chunk.workspaceId === null ? '' : ` where ${ident(DISTRIBUTION_COLUMN)} = ${literal(chunk.workspaceId)}`;
  return `select ${table.columns.map(ident).join(', ')} from ${ident(table.name)}${where} order by ${table.key.map(ident).join(', ')}`;
}

/** What the source holds, table by table and, for tables by workspace, workspace by workspace. */
async function chunksOf(source: Ledger): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for (const table of movedTables()) {
    const name = drizzleSql.identifier(table.name);
    if (!table.byWorkspace) {
      const result = await source.handle.db.execute(drizzleSql`select count(*)::int as n from ${name}`);
      const rows = Number(rowsOf<{ n: number }>(result)[0]?.n ?? 0);
      if (rows > 0) chunks.push({ table, workspaceId: null, rows });
      continue;
    }
    const column = drizzleSql.identifier(DISTRIBUTION_COLUMN);
    const result = await source.handle.db.execute(
      drizzleSql`select ${column} as workspace_id, count(*)::int as n from ${name} group by 1 order by 1`,
    );
    for (const row of rowsOf<{ workspace_id: string; n: number }>(result)) {
      chunks.push({ table, workspaceId: row.workspace_id, rows: Number(row.n) });
    }
  }
  return chunks;
}

async function countRows(sql: Sql, table: string): Promise<number> {
  const [row] = await sql.unsafe<{ n: string }[]>(`select count(*) as n from ${ident(table)}`);
  return Number(row?.n ?? 0);
}

async function occupiedTables(sql: Sql): Promise<TableRows[]> {
  const names = movedTables()
    .map((table) => table.name)
    .filter((name) => !REPLACED_BY_MOVE.includes(name));
  const present = await sql<{ name: string }[]>`
    select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public' and c.relname in ${sql(names)} and not c.relispartition`;
  const occupied: TableRows[] = [];
  for (const { name } of present) {
    const rows = await countRows(sql, name);
    if (rows > 0) occupied.push({ table: name, rows });
  }
  return occupied.sort((a, b) => a.table.localeCompare(b.table));
}
