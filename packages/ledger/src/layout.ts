/**
 * How `svc migrate` lays the ledger out (docs/scale-out.md):
 * - `plain` (the default): one table each;
 * - `partitioned`: every distributed table `PARTITION BY HASH (workspace_id)` in
 *   `PARTITION_COUNT` partitions, so that plain Postgres refuses what Citus refuses (a key
 *   without `workspace_id`) and EXPLAIN shows how many partitions a statement touches;
 * and, with `citus`, the Citus calls that distribute and replicate the tables afterwards.
 */
import { readMigrationFiles } from 'drizzle-orm/migrator';
import { PgDialect } from 'drizzle-orm/pg-core';
import { DISTRIBUTION_COLUMN, PARTITION_COUNT, TABLE_PLACEMENT } from './distribution';

export type DatabaseLayout = 'plain' | 'partitioned';

export interface MigrateOptions {
  /** `plain` unless told (DATABASE_LAYOUT). */
  layout?: DatabaseLayout | undefined;
  /** Distribute and replicate the tables on Citus after the migrations (CITUS=1). */
  citus?: boolean | undefined;
}

const CREATE_TABLE = /^(\s*CREATE TABLE "([a-z_]+)" \([\s\S]*\))\s*;?\s*$/;

/** The partitions of a distributed table, named `<table>_p<remainder>`. */
export function partitionNames(table: string): string[] {
  return Array.from({ length: PARTITION_COUNT }, (_, remainder) => `${table}_p${remainder}`);
}

/** One migration statement as the partitioned layout runs it (a distributed CREATE TABLE becomes several). */
export function partitionedStatements(statement: string): string[] {
  const match = CREATE_TABLE.exec(statement);
  const table = match?.[2];
  if (!match || table === undefined || TABLE_PLACEMENT[table] !== 'distributed') return [statement];
  return [
    `${match[1]} PARTITION BY HASH ("${DISTRIBUTION_COLUMN}");`,
    ...partitionNames(table).map(
      (name, remainder) =>
        `CREATE TABLE "${name}" PARTITION OF "${table}" FOR VALUES WITH (MODULUS ${PARTITION_COUNT}, REMAINDER ${remainder});`,
    ),
  ];
}

/** The first distributed table, with which every other is co-located. */
export const COLOCATION_TABLE = 'workspace_heads';

/**
 * The Citus calls after the migrations, each a no-op once its table is in `pg_dist_partition`
 * (so `CITUS=1 svc migrate` may run again, and a table a later migration adds gets its call).
 */
export function citusStatements(): string[] {
  const unlessDone = (table: string, call: string) =>
    `SELECT ${call} WHERE NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = '"${table}"'::regclass)`;
  const entries = Object.entries(TABLE_PLACEMENT);
  const reference = entries.filter(([, placement]) => placement === 'reference').map(([table]) => table);
  const distributed = entries
    .filter(([table, placement]) => placement === 'distributed' && table !== COLOCATION_TABLE)
    .map(([table]) => table);
  return [
    ...reference.map((table) => unlessDone(table, `create_reference_table('"${table}"')`)),
    unlessDone(
      COLOCATION_TABLE,
      `create_distributed_table('"${COLOCATION_TABLE}"', '${DISTRIBUTION_COLUMN}', colocate_with => 'none')`,
    ),
    ...distributed.map((table) =>
      unlessDone(
        table,
        `create_distributed_table('"${table}"', '${DISTRIBUTION_COLUMN}', colocate_with => '${COLOCATION_TABLE}')`,
      ),
    ),
  ];
}

/**
 * Apply the drizzle-kit migrations in a layout: what drizzle's own `migrate` does (read the
 * folder, apply what the journal table lacks, through `PgDialect.migrate` on the database's
 * session), with the statements rewritten first.
 */
export async function migrateInLayout(
  db: { readonly _: { readonly session: unknown } },
  migrationsFolder: string,
  layout: DatabaseLayout,
): Promise<void> {
  const migrations = readMigrationFiles({ migrationsFolder });
  if (layout === 'partitioned') {
    for (const migration of migrations) migration.sql = migration.sql.flatMap(partitionedStatements);
  }
  // Any database's session (its schema typing aside) runs the migration statements alike.
  const session = db._.session as Parameters<PgDialect['migrate']>[1];
  await new PgDialect().migrate(migrations, session, { migrationsFolder });
}
