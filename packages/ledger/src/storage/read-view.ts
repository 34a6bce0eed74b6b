import { getTableColumns, type SQL, sql } from 'drizzle-orm';
import { PgDialect, type PgTable } from 'drizzle-orm/pg-core';
import { compiledStatementRunner, type Database } from '../database';
import { type GrantRow, type GrantTarget, type NamespaceRow, type Role, rowsOf } from '../rows';
import { grants, namespaces } from '../schema';
import type { CommitStamp } from './commit-storage';

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

export type Json = Record<string, unknown>;

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

/** A table's columns as `decodeJsonRow` walks them, computed once per table. */
const decodingColumns = new WeakMap<
  PgTable,
  { key: string; column: ReturnType<typeof getTableColumns>[string]; bytea: boolean }[]
>();

function columnsToDecode(table: PgTable) {
  let columns = decodingColumns.get(table);
  if (!columns) {
    columns = Object.entries(getTableColumns(table)).map(([key, column]) => ({
      key,
      column,
      bytea: column.getSQLType() === 'bytea',
    }));
    decodingColumns.set(table, columns);
  }
  return columns;
}

/** A row built by `jsonRow`, mapped through each column's decoder as a Drizzle select would. */
export function decodeJsonRow<T>(table: PgTable, value: Json): T {
  const row: Json = {};
  for (const { key, column, bytea } of columnsToDecode(table)) {
    const raw = value[key];
    if (raw === null || raw === undefined) {
      row[key] = null;
      continue;
    }
    row[key] = column.mapFromDriverValue(bytea ? Buffer.from(raw as string, 'hex') : raw);
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

/** `json_agg` of the workspace's namespaces among `ids` (the namespaces a request names), `[]` for none. */
export function namedNamespaces(workspaceId: string, ids: readonly string[]): SQL {
  if (ids.length === 0) return sql`'[]'::json`;
  return jsonRows(
    namespaces,
    'n',
    sql`from namespaces n where n.workspace_id = ${workspaceId} and n.id in (${list(ids)})`,
    sql`n.id`,
  );
}

/** `json_agg` of the workspace's namespaces below any of `ids` (not those themselves), `[]` for none. */
export function namespacesBelow(workspaceId: string, ids: readonly string[]): SQL {
  if (ids.length === 0) return sql`'[]'::json`;
  return jsonRows(
    namespaces,
    'd',
    sql`from namespaces d where d.workspace_id = ${workspaceId} and d.ancestor_ids && array[${list(ids)}]::text[]`,
    sql`d.id`,
  );
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
  return parseDocument(await db.execute(documentStatement(members)));
}

function documentStatement(members: SQL): SQL {
  return sql`select json_build_object(${members})::text as document`;
}

function parseDocument(result: unknown): Json {
  const text = rowsOf<{ document: string }>(result)[0]?.document;
  if (text === undefined) throw new Error('a one-row read answered no row');
  return JSON.parse(text) as Json;
}

/**
 * Statement texts built once per shape. Building a one-statement read with Drizzle's `sql`
 * templates (dozens of nested fragments, every column named) and compiling it costs more CPU
 * than the rest of a `memories.get`; yet its text depends only on the shape of its inputs (which
 * of them are null, how many grant targets, ...), never on their values. So the text is
 * compiled once per shape, with stand-in values, and split at its parameters; later reads of
 * that shape only interleave their values. Texts (and so the statements prepared on Postgres)
 * and parameters are exactly those of building afresh.
 */
interface Shape {
  /** The text between parameters (one more than the slots). */
  pieces: string[];
  /** The whole text, with `$1`..`$n` where the parameters go: what Drizzle would compile. */
  text: string;
  /** For each parameter, which input value it is (an index into the values `standIn` collects), or a constant of the builder. */
  slots: ({ input: number } | { constant: unknown })[];
}

const dialect = new PgDialect();
const STAND_IN = '\u0000tms-input:';
/** Shapes kept (credentials with many grant targets make many shapes); past this, build afresh. */
const MAX_SHAPES = 500;
const shapes = new Map<string, Shape | null>();

/**
 * The shape of `inputs` as a key, with its strings and numbers (the values, which become
 * parameters) replaced by stand-ins and collected into `values`. Nulls, booleans, absent fields
 * and array lengths are the shape: a builder may branch on those only. Null for inputs of a kind
 * this does not know (then the statement is built afresh).
 */
function standIn(input: unknown, values: unknown[]): { key: string; standIn: unknown } | null {
  if (typeof input === 'string' || typeof input === 'number') {
    values.push(input);
    return { key: '$', standIn: `${STAND_IN}${values.length - 1}` };
  }
  if (input === null || input === undefined || typeof input === 'boolean') {
    return { key: String(input), standIn: input };
  }
  if (Array.isArray(input)) {
    const keys: string[] = [];
    const items: unknown[] = [];
    for (const item of input) {
      const part = standIn(item, values);
      if (!part) return null;
      keys.push(part.key);
      items.push(part.standIn);
    }
    return { key: `[${keys.join(',')}]`, standIn: items };
  }
  if (typeof input === 'object' && Object.getPrototypeOf(input) === Object.prototype) {
    const keys: string[] = [];
    const fields: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(input)) {
      const part = standIn(value, values);
      if (!part) return null;
      keys.push(`${name}:${part.key}`);
      fields[name] = part.standIn;
    }
    return { key: `{${keys.join(',')}}`, standIn: fields };
  }
  return null;
}

/** Compile a statement built from stand-ins into its shape; null when its text cannot be split safely. */
function compileShape(statement: SQL): Shape | null {
  const query = dialect.sqlToQuery(statement);
  const pieces = query.sql.split(/\$\d+/);
  const numbers = query.sql.match(/\$\d+/g) ?? [];
  // Parameters numbered $1..$n in order, each once, and no stand-in written into the text.
  if (numbers.length !== query.params.length || query.sql.includes(STAND_IN)) return null;
  if (numbers.some((n, i) => n !== `$${i + 1}`)) return null;
  const slots: Shape['slots'] = [];
  for (const param of query.params) {
    if (typeof param === 'string' && param.startsWith(STAND_IN)) {
      slots.push({ input: Number(param.slice(STAND_IN.length)) });
    } else if (typeof param === 'string' && param.includes(STAND_IN)) {
      // An input some encoder rewrote: its value cannot simply be put in its place.
      return null;
    } else {
      slots.push({ constant: param }); // the builder's own (a grant target kind)
    }
  }
  return { pieces, text: query.sql, slots };
}

/**
 * `selectDocument` of the members `build` makes from `inputs`, whose statement text is compiled
 * once per shape of the inputs (see `standIn`) under `name`, which must name the builder.
 */
export async function selectShapedDocument<I>(
  db: Database,
  name: string,
  inputs: I,
  build: (inputs: I) => SQL,
): Promise<Json> {
  const values: unknown[] = [];
  const split = standIn(inputs, values);
  const key = split ? `${name}|${split.key}` : null;
  let shape = key === null ? null : shapes.get(key);
  if (shape === undefined && key !== null && split && shapes.size < MAX_SHAPES) {
    shape = compileShape(documentStatement(build(split.standIn as I)));
    // Once per shape: the reused text must be exactly what building afresh gives (a builder that
    // branched on a value would differ), or the shape is not reused.
    const fresh = documentStatement(build(inputs));
    const freshQuery = dialect.sqlToQuery(fresh);
    if (shape && (freshQuery.sql !== shape.text || !sameQuery(freshQuery, dialect.sqlToQuery(fill(shape, values))))) {
      shape = null;
    }
    shapes.set(key, shape);
    if (!shape) return parseDocument(await db.execute(fresh));
  }
  if (!shape) return parseDocument(await db.execute(documentStatement(build(inputs))));
  const run = compiledStatementRunner(db);
  if (run) return parseDocument(await run(shape.text, parametersOf(shape, values)));
  return parseDocument(await db.execute(fill(shape, values)));
}

function parametersOf(shape: Shape, values: readonly unknown[]): unknown[] {
  return shape.slots.map((slot) => ('input' in slot ? values[slot.input] : slot.constant));
}

function fill(shape: Shape, values: readonly unknown[]): SQL {
  return sql(shape.pieces as unknown as TemplateStringsArray, ...parametersOf(shape, values));
}

function sameQuery(a: { sql: string; params: unknown[] }, b: { sql: string; params: unknown[] }): boolean {
  return a.sql === b.sql && a.params.length === b.params.length && a.params.every((p, i) => p === b.params[i]);
}
