import { getTableColumns, type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Database } from '../database';
import { rowsOf } from '../rows';
import { grants, namespaces } from '../schema';
import type { CommitStamp } from './commit-storage';
import type { Role } from './membership-storage';
import type { GrantRow, GrantTarget, NamespaceRow } from './namespace-storage';

/**
 * One-statement reads: the caller's standing in a workspace, its head and a resource come back
 * as one JSON document from one SQL statement, decoded here into the same rows Drizzle's selects
 * give. The rules that decide on them stay in the domain (access, temporal selection).
 */

/** Whose standing to load: a member (by actor), a credential (by its grant targets), or the operator. */
export interface StandingQuery {
  /** The actor whose grants (and, unless the operator, membership role) apply; null for a credential. */
  actorId: string | null;
  /** For a credential: its grant targets and its namespace ceiling (null: anywhere). */
  credential: { targets: readonly GrantTarget[]; roots: readonly string[] | null } | null;
  /** The operator: admin of any workspace that exists, so its existence is asked instead of a role. */
  operator: boolean;
}

/** What a StandingQuery loaded, read in the same snapshot as the resource. */
export interface Standing {
  /** The member's role; null when not a member (or when no member was asked about). */
  role: Role | null;
  /** Whether the workspace exists (asked for the operator only; true otherwise). */
  workspaceExists: boolean;
  /** Every grant held by the member or by the credential's targets anywhere in the workspace. */
  grants: GrantRow[];
  /** For a credential with a ceiling: the namespaces of its ceiling and of its grants. */
  ceilingNamespaces: NamespaceRow[];
  /** The workspace head (its last commit), or null. */
  head: CommitStamp | null;
}

type Json = Record<string, unknown>;

const ident = (name: string) => sql.identifier(name);

/** `json_build_object` of one table row under `alias`, keyed by the Drizzle field names (bytea as hex). */
export function jsonRow(table: PgTable, alias: string): SQL {
  const parts = Object.entries(getTableColumns(table)).map(([key, column]) => {
    const ref = sql`${ident(alias)}.${ident(column.name)}`;
    const value = column.getSQLType() === 'bytea' ? sql`encode(${ref}, 'hex')` : ref;
    return sql`${sql.raw(`'${key}'`)}, ${value}`;
  });
  return sql`json_build_object(${sql.join(parts, sql`, `)})`;
}

/** A row built by `jsonRow`, mapped through each column's decoder as a Drizzle select would. */
export function decodeJsonRow<T>(table: PgTable, value: Json): T {
  const row: Json = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const raw = value[key];
    if (raw === null || raw === undefined) {
      row[key] = null;
      continue;
    }
    const driverValue = column.getSQLType() === 'bytea' ? Buffer.from(raw as string, 'hex') : raw;
    row[key] = column.mapFromDriverValue(driverValue);
  }
  return row as T;
}

export function decodeJsonRows<T>(table: PgTable, values: unknown): T[] {
  return ((values as Json[] | null) ?? []).map((v) => decodeJsonRow<T>(table, v));
}

/** `json_agg` of the rows of `from` (a FROM ... WHERE clause using `alias`), `[]` when none. */
export function jsonRows(table: PgTable, alias: string, from: SQL, orderBy: SQL): SQL {
  return sql`coalesce((select json_agg(${jsonRow(table, alias)} order by ${orderBy}) ${from}), '[]'::json)`;
}

const list = (ids: readonly string[]) =>
  sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );

/** The grants a StandingQuery names, as a WHERE condition on `grants` aliased `g`. */
function grantCondition(query: StandingQuery): SQL {
  const targets: readonly GrantTarget[] = query.credential
    ? query.credential.targets
    : query.actorId !== null
      ? [{ kind: 'actor', id: query.actorId }]
      : [];
  if (targets.length === 0) return sql`false`;
  return sql.join(
    targets.map((t) => sql`(g.target_kind = ${t.kind} and g.target_id = ${t.id})`),
    sql` or `,
  );
}

/** The JSON members (`'key', value` pairs) of a standing, for one workspace. */
export function standingMembers(workspaceId: string, query: StandingQuery): SQL {
  const role =
    query.actorId !== null && !query.credential && !query.operator
      ? sql`(select m.role from memberships m where m.workspace_id = ${workspaceId} and m.actor_id = ${query.actorId})`
      : sql`null::text`;
  const workspaceExists = query.operator
    ? sql`exists (select 1 from workspaces w where w.id = ${workspaceId})`
    : sql`true`;
  const grantRows = jsonRows(
    grants,
    'g',
    sql`from grants g where g.workspace_id = ${workspaceId} and (${grantCondition(query)})`,
    sql`g.namespace_id, g.position`,
  );
  const roots = query.credential?.roots ?? null;
  // A ceiling narrows grants by namespace position: its roots and the granted namespaces.
  const ceiling =
    query.credential && roots !== null
      ? jsonRows(
          namespaces,
          'cn',
          sql`from namespaces cn where cn.workspace_id = ${workspaceId} and (${
            roots.length ? sql`cn.id in (${list(roots)})` : sql`false`
          } or cn.id in (select g.namespace_id from grants g where g.workspace_id = ${workspaceId} and (${grantCondition(query)})))`,
          sql`cn.id`,
        )
      : sql`'[]'::json`;
  const head = sql`(select json_build_object('sequence', h.sequence, 'recordedAt', h.recorded_at) from workspace_heads h where h.workspace_id = ${workspaceId})`;
  return sql`'role', ${role}, 'workspaceExists', ${workspaceExists}, 'grants', ${grantRows}, 'ceiling', ${ceiling}, 'head', ${head}`;
}

export function decodeStanding(value: Json): Standing {
  const head = value.head as { sequence: number | string; recordedAt: number } | null;
  return {
    role: (value.role as Role | null) ?? null,
    workspaceExists: value.workspaceExists === true,
    grants: decodeJsonRows<GrantRow>(grants, value.grants),
    ceilingNamespaces: decodeJsonRows<NamespaceRow>(namespaces, value.ceiling),
    head: head ? { sequence: Number(head.sequence), recordedAt: Number(head.recordedAt) } : null,
  };
}

/**
 * Run `select json_build_object(<members>)::text` and parse it: one statement, one row. The text
 * cast makes both drivers hand back the same string.
 */
export async function selectDocument(db: Database, members: SQL): Promise<Json> {
  const result = await db.execute(sql`select json_build_object(${members})::text as document`);
  const text = rowsOf<{ document: string }>(result)[0]?.document;
  if (text === undefined) throw new Error('a one-row read answered no row');
  return JSON.parse(text) as Json;
}
