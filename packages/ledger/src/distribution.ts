/**
 * Where every ledger table lives on a cluster distributed by workspace (Citus; docs/scale-out.md):
 * - `distributed`: sharded by `workspace_id`, all co-located, so a workspace's rows share a node
 *   and a transaction on one workspace runs there with plain Postgres behaviour;
 * - `reference`: small and rarely written, copied to every node (directories);
 * - `local`: on the coordinator only (bookkeeping).
 *
 * `distributionManifest()` is committed as schema/distribution.json (`pnpm generate`), and
 * `lintDistribution` holds the schema to the engine's rules.
 */
import { is } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import * as schema from './schema';

export type Placement = 'distributed' | 'reference' | 'local';

export const DISTRIBUTION_COLUMN = 'workspace_id';

/** Hash partitions of each distributed table in the partitioned layout (`DATABASE_LAYOUT=partitioned`). */
export const PARTITION_COUNT = 8;

/** Every Drizzle table's placement; a table missing here fails the lint. */
export const TABLE_PLACEMENT: Readonly<Record<string, Placement>> = {
  actors: 'reference',
  enrollments: 'reference',
  workspaces: 'reference',
  service_settings: 'reference',
  credential_directory: 'reference',
  membership_directory: 'reference',
  directory_idempotency_records: 'reference',
  idempotency_key_directory: 'reference',
  workspace_heads: 'distributed',
  commits: 'distributed',
  memberships: 'distributed',
  namespaces: 'distributed',
  grants: 'distributed',
  evidence: 'distributed',
  verifications: 'distributed',
  memories: 'distributed',
  revisions: 'distributed',
  idempotency_records: 'distributed',
  deletion_receipts: 'distributed',
  index_state: 'distributed',
  installations: 'distributed',
  credentials: 'distributed',
  webhooks: 'distributed',
};

/** Tables outside the Drizzle schema. */
export const OTHER_TABLES: ReadonlyArray<{ table: string; placement: Placement; owner: string }> = [
  { table: 'drizzle.__drizzle_migrations', placement: 'local', owner: 'drizzle-kit migrator (svc migrate)' },
];

/**
 * Statements allowed to read more than one workspace: the operator's own commands and the
 * background workers' polls. A request never runs one (the partitioned-layout test checks every
 * request statement against one partition per distributed table).
 */
export const CROSS_WORKSPACE_STATEMENTS: ReadonlyArray<{ name: string; runBy: string; why: string }> = [
  {
    name: 'IndexStateStorage.lag',
    runBy: 'indexer poll, svc index status',
    why: 'joins workspace_heads with index_state (co-located) to find the workspaces behind; each is then indexed alone',
  },
  {
    name: 'WebhookStorage.due',
    runBy: 'webhook delivery worker poll',
    why: 'finds endpoints due for delivery; each is then claimed and delivered by workspace',
  },
  {
    name: 'WebhookStorage.lag',
    runBy: 'metrics',
    why: 'the oldest undelivered change over every endpoint',
  },
];

interface TableShape {
  name: string;
  columns: string[];
  /** Primary key and unique indexes or constraints, each as its column names. */
  keys: Array<{ name: string; columns: string[] }>;
  foreignKeys: Array<{ columns: string[]; references: string }>;
}

/** A table's primary key columns, whether declared on a column or as a composite key. */
export function primaryKeyColumns(table: PgTable): string[] {
  const config = getTableConfig(table);
  const primary = config.columns.filter((column) => column.primary).map((column) => column.name);
  return primary.length > 0 ? primary : (config.primaryKeys[0]?.columns.map((c) => c.name) ?? []);
}

function shapeOf(table: PgTable): TableShape {
  const config = getTableConfig(table);
  const keys: TableShape['keys'] = [];
  const primary = config.columns.filter((column) => column.primary).map((column) => column.name);
  if (primary.length > 0) keys.push({ name: `${config.name}_pkey`, columns: primary });
  for (const pk of config.primaryKeys) keys.push({ name: pk.getName(), columns: pk.columns.map((c) => c.name) });
  for (const unique of config.uniqueConstraints) {
    keys.push({ name: unique.getName() ?? `${config.name}_unique`, columns: unique.columns.map((c) => c.name) });
  }
  for (const column of config.columns) {
    if (column.isUnique) keys.push({ name: column.uniqueName ?? `${column.name}_unique`, columns: [column.name] });
  }
  for (const index of config.indexes) {
    if (!index.config.unique) continue;
    const columns = index.config.columns.map((c) => ('name' in c ? String(c.name) : '(expression)'));
    keys.push({ name: index.config.name ?? `${config.name}_unique_index`, columns });
  }
  return {
    name: config.name,
    columns: config.columns.map((column) => column.name),
    keys,
    foreignKeys: config.foreignKeys.map((fk) => {
      const reference = fk.reference();
      return {
        columns: reference.columns.map((c) => c.name),
        references: getTableConfig(reference.foreignTable).name,
      };
    }),
  };
}

/** The Drizzle tables of a schema module (the ledger's own by default). */
export function tablesOf(module: Record<string, unknown> = schema): PgTable[] {
  return Object.values(module).filter((value): value is PgTable => is(value, PgTable));
}

/**
 * Where the schema breaks a rule of a cluster distributed by `workspace_id`; empty when none.
 * Statement texts (migrations, storage SQL) are checked for triggers and table locks on
 * distributed tables and for `FOR UPDATE` without a `workspace_id` equality.
 */
export function lintDistribution(
  tables: readonly PgTable[],
  placement: Readonly<Record<string, Placement>> = TABLE_PLACEMENT,
  statements: readonly string[] = [],
): string[] {
  const problems: string[] = [];
  const shapes = tables.map(shapeOf);
  const placed = new Map(shapes.map((shape) => [shape.name, placement[shape.name]]));
  for (const shape of shapes) {
    const where = placed.get(shape.name);
    if (where === undefined) {
      problems.push(`${shape.name}: no placement (distributed, reference or local)`);
      continue;
    }
    if (where === 'distributed') {
      if (!shape.columns.includes(DISTRIBUTION_COLUMN)) {
        problems.push(`${shape.name}: distributed without a ${DISTRIBUTION_COLUMN} column`);
      }
      if (shape.keys.length === 0) problems.push(`${shape.name}: distributed without a primary key`);
      for (const key of shape.keys) {
        if (!key.columns.includes(DISTRIBUTION_COLUMN)) {
          problems.push(`${shape.name}: key ${key.name} (${key.columns.join(', ')}) lacks ${DISTRIBUTION_COLUMN}`);
        }
      }
    }
    for (const fk of shape.foreignKeys) {
      const target = placed.get(fk.references);
      if (where === 'reference' && target === 'distributed') {
        problems.push(`${shape.name}: reference table with a foreign key to distributed ${fk.references}`);
      }
      if (where === 'distributed' && target === 'distributed' && !fk.columns.includes(DISTRIBUTION_COLUMN)) {
        problems.push(`${shape.name}: foreign key to ${fk.references} without ${DISTRIBUTION_COLUMN}`);
      }
      if (where === 'local' && target !== 'local') {
        problems.push(`${shape.name}: local table with a foreign key to ${target} ${fk.references}`);
      }
    }
  }
  for (const name of Object.keys(placement)) {
    if (!placed.has(name)) problems.push(`${name}: placed but not in the schema`);
  }
  const distributed = shapes.filter((shape) => placed.get(shape.name) === 'distributed').map((shape) => shape.name);
  problems.push(...lintStatements(statements, distributed));
  return problems;
}

/** The statement-level rules (see `lintDistribution`). */
export function lintStatements(statements: readonly string[], distributed: readonly string[]): string[] {
  const problems: string[] = [];
  const names = distributed.join('|');
  const trigger = new RegExp(
    `create\\s+(?:or\\s+replace\\s+)?(?:constraint\\s+)?trigger[\\s\\S]*?\\bon\\s+"?(${names})"?\\b`,
    'i',
  );
  const tableLock = new RegExp(`\\block\\s+(?:table\\s+)?"?(${names})"?\\b`, 'i');
  for (const statement of statements) {
    const text = statement.replace(/\s+/g, ' ').trim();
    const short = text.slice(0, 120);
    const triggerMatch = names ? trigger.exec(text) : null;
    if (triggerMatch) problems.push(`trigger on distributed ${triggerMatch[1]}: ${short}`);
    const lockMatch = names ? tableLock.exec(text) : null;
    if (lockMatch) problems.push(`table lock on distributed ${lockMatch[1]}: ${short}`);
    if (/\bselect\b[\s\S]*\bfor\s+(?:no\s+key\s+)?update\b/i.test(text) && !/workspace_id"?\s*=/i.test(text)) {
      problems.push(`FOR UPDATE without a ${DISTRIBUTION_COLUMN} equality: ${short}`);
    }
  }
  return problems;
}

/** schema/distribution.json: every table, its placement, its keys, and the allowed exceptions. */
export function distributionManifest(tables: readonly PgTable[] = tablesOf()): Record<string, unknown> {
  const entries = tables.map(shapeOf).sort((a, b) => a.name.localeCompare(b.name));
  return {
    distributionColumn: DISTRIBUTION_COLUMN,
    colocationGroup: 'workspace_heads',
    partitionedLayout: { method: 'hash', partitions: PARTITION_COUNT },
    tables: Object.fromEntries(
      entries.map((shape) => [
        shape.name,
        {
          placement: TABLE_PLACEMENT[shape.name] ?? null,
          keys: shape.keys.map((key) => key.columns),
        },
      ]),
    ),
    otherTables: Object.fromEntries(OTHER_TABLES.map((t) => [t.table, { placement: t.placement, owner: t.owner }])),
    crossWorkspaceStatements: Object.fromEntries(
      CROSS_WORKSPACE_STATEMENTS.map((s) => [s.name, { runBy: s.runBy, why: s.why }]),
    ),
  };
}
