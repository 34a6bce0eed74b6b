import { partitionNames, TABLE_PLACEMENT } from '@tms/ledger';
import { connectSql } from '@tms/testkit/postgres-server';

// Replays captured statements under EXPLAIN on a partitioned-layout database and tells how many
// partitions of each distributed table each one touches, and how many workspaces each write
// transaction touches (docs/scale-out.md).

export interface Captured {
  connection: number;
  text: string;
  params: unknown[];
}

const DISTRIBUTED = Object.entries(TABLE_PLACEMENT)
  .filter(([, placement]) => placement === 'distributed')
  .map(([table]) => table);
const PARENT_OF = new Map(DISTRIBUTED.flatMap((table) => partitionNames(table).map((name) => [name, table])));
const WORKSPACE_ID = /^ws_[0-9a-hjkmnp-tv-z]{24}$/;
const CONTROL =
  /^\s*(begin|commit|rollback|savepoint|release|set |select set_config|select 1$|select pg_advisory|select pg_try_advisory|listen|unlisten)/i;
const WRITE = /\b(insert\s+into|update\s+"?[a-z_]+"?\s+set|delete\s+from)\b/i;

/** The distributed tables a statement names. */
export function distributedTablesIn(text: string): string[] {
  return DISTRIBUTED.filter((table) => new RegExp(`(^|[\\s,(."])${table}("|\\s|$|\\)|,)`, 'i').test(text));
}

/** Statements grouped into transactions per connection (a statement outside one is its own). */
export function transactionsOf(captured: readonly Captured[]): Captured[][] {
  const open = new Map<number, Captured[]>();
  const done: Captured[][] = [];
  for (const statement of captured) {
    const text = statement.text.trim().toLowerCase();
    if (text.startsWith('begin')) {
      open.set(statement.connection, []);
      continue;
    }
    const current = open.get(statement.connection);
    if (text.startsWith('commit') || text.startsWith('rollback')) {
      if (current) done.push(current);
      open.delete(statement.connection);
      continue;
    }
    if (current) current.push(statement);
    else done.push([statement]);
  }
  return done;
}

/** Workspace ids among a statement's parameters (arrays and JSON texts included). */
export function workspaceIdsIn(params: readonly unknown[]): Set<string> {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      if (WORKSPACE_ID.test(value)) found.add(value);
      else if (value.includes('ws_'))
        for (const match of value.match(/ws_[0-9a-hjkmnp-tv-z]{24}/g) ?? []) found.add(match);
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item);
    }
  };
  for (const param of params) visit(param);
  return found;
}

/** Whether a transaction writes (a row of any table). */
export function writes(transaction: readonly Captured[]): boolean {
  return transaction.some((statement) => WRITE.test(statement.text));
}

/**
 * The workspace_id values of the rows each `insert into "<distributed>" (...) values (...)` in a
 * statement writes (Drizzle's shape: one tuple of `$n` or `default` per row).
 */
export function insertedWorkspaceIds(statement: Captured): Map<string, Set<string>> {
  const result = new Map<string, Set<string>>();
  const insert = /insert into "([a-z_]+)" \(([^)]*)\) values /gi;
  for (let match = insert.exec(statement.text); match; match = insert.exec(statement.text)) {
    const table = match[1] as string;
    if (TABLE_PLACEMENT[table] !== 'distributed') continue;
    const columns = (match[2] as string).split(',').map((c) => c.trim().replace(/"/g, ''));
    const at = columns.indexOf('workspace_id');
    const values = new Set<string>();
    const tuple = /\s*\(([^()]*)\)\s*(,)?/y;
    tuple.lastIndex = insert.lastIndex;
    for (let row = tuple.exec(statement.text); row; row = tuple.exec(statement.text)) {
      const token = (row[1] as string).split(',')[at]?.trim() ?? '';
      const param = /^\$(\d+)$/.exec(token);
      values.add(param ? String(statement.params[Number(param[1]) - 1]) : `literal ${token}`);
      if (!row[2]) break;
    }
    result.set(table, values);
  }
  return result;
}

/** Relation names anywhere in an EXPLAIN (FORMAT JSON) plan. */
function relationsOf(plan: unknown, into: string[] = []): string[] {
  if (Array.isArray(plan)) for (const item of plan) relationsOf(item, into);
  else if (plan && typeof plan === 'object') {
    for (const [key, value] of Object.entries(plan)) {
      if (key === 'Relation Name' && typeof value === 'string') into.push(value);
      else relationsOf(value, into);
    }
  }
  return into;
}

export interface StatementVerdict {
  text: string;
  /** Distributed table -> the partitions its plan scans or modifies. */
  partitions: Map<string, Set<string>>;
  /** Distributed table -> workspace ids of the rows an INSERT ... VALUES writes into it. */
  inserted: Map<string, Set<string>>;
}

/** EXPLAIN every statement that names a distributed table, with its own parameters. */
export async function explainAll(databaseUrl: string, captured: readonly Captured[]): Promise<StatementVerdict[]> {
  const sql = connectSql(databaseUrl, 1);
  const verdicts: StatementVerdict[] = [];
  const seen = new Set<string>();
  try {
    for (const statement of captured) {
      if (CONTROL.test(statement.text)) continue;
      const tables = distributedTablesIn(statement.text);
      if (tables.length === 0) continue;
      const identity = JSON.stringify([statement.text, statement.params], (_k, v) =>
        typeof v === 'bigint' ? String(v) : v,
      );
      if (seen.has(identity)) continue;
      seen.add(identity);
      const rows = await sql.unsafe(`explain (format json) ${statement.text}`, statement.params as never[]);
      const plan = (rows[0] as Record<string, unknown>)['QUERY PLAN'];
      const partitions = new Map<string, Set<string>>(tables.map((table) => [table, new Set<string>()]));
      for (const relation of relationsOf(plan)) {
        const parent = PARENT_OF.get(relation);
        if (parent) partitions.get(parent)?.add(relation);
      }
      verdicts.push({ text: statement.text, partitions, inserted: insertedWorkspaceIds(statement) });
    }
  } finally {
    await sql.end();
  }
  return verdicts;
}
