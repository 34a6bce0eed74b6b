import { and, arrayOverlaps, eq, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { type IdempotencyRecord, type NamespaceRow, rowsOf } from '../rows';
import { directoryIdempotencyRecords, idempotencyKeyDirectory, idempotencyRecords, namespaces } from '../schema';
import {
  decodeJsonRow,
  decodeJsonRows,
  decodeStanding,
  jsonRow,
  namedNamespaces,
  type Standing,
  type StandingQuery,
  selectShapedDocument,
  standingMembers,
} from './read-view';

/**
 * Where a principal's idempotency keys live (decisions §8 scopes a key to the principal):
 * - `workspace`: a credential bound to one workspace uses its keys there only;
 * - `principal`: a person or OAuth client uses a key once in all its workspaces, so each key it
 *   uses in a workspace is also entered in `idempotency_key_directory` (a reference table).
 * Either way a lookup reads one workspace's records and, at most, reference tables.
 */
export type KeyScope = 'workspace' | 'principal';

/** Directory writes (workspaces.create) have no workspace: their records are `workspaceId` ''. */
const DIRECTORY_SCOPE = '';

/** A directory record (`d`) shaped as an `IdempotencyRecord` (no workspace, shows no ledger ids). */
const directoryRecordJson = sql`json_build_object('workspaceId', '', 'principal', d.principal, 'key', d.key, 'operation', d.operation, 'fingerprint', d.fingerprint, 'status', d.status, 'body', d.body, 'subjectIds', '{}'::text[], 'createdAt', d.created_at)`;

/**
 * A key directory entry (`k`) shaped as an `IdempotencyRecord`: the key was used in another
 * workspace, whose id is in the fingerprint, so it conflicts with any request here (its answer
 * is not read: it lives in that workspace's rows).
 */
const usedElsewhereJson = sql`json_build_object('workspaceId', k.workspace_id, 'principal', k.principal, 'key', k.key, 'operation', '', 'fingerprint', k.fingerprint, 'status', 409, 'body', '', 'subjectIds', '{}'::text[], 'createdAt', k.created_at)`;

/**
 * The record under (principal, key) for a request in `workspaceId` ('' outside any workspace),
 * as a JSON expression: the workspace's own record, else (for a principal-scoped key) where the
 * key was used elsewhere, else the record of a write outside any workspace. Every lookup names
 * the workspace or reads a reference table: none spreads over a cluster's shards.
 */
function recordLookup(principal: string, key: string, workspaceId: string, scope: KeyScope): SQL {
  const own = sql`(select ${jsonRow(idempotencyRecords, 'i')} from idempotency_records i where i.workspace_id = ${workspaceId} and i.principal = ${principal} and i.key = ${key})`;
  const directoryWrite = sql`(select ${directoryRecordJson} from directory_idempotency_records d where d.principal = ${principal} and d.key = ${key})`;
  if (scope === 'workspace') return workspaceId === DIRECTORY_SCOPE ? directoryWrite : own;
  const elsewhere = sql`(select ${usedElsewhereJson} from idempotency_key_directory k where k.principal = ${principal} and k.key = ${key} and k.workspace_id <> ${workspaceId})`;
  return workspaceId === DIRECTORY_SCOPE
    ? sql`coalesce(${directoryWrite}, ${elsewhere})`
    : sql`coalesce(${own}, ${elsewhere}, ${directoryWrite})`;
}

function decodeRecord(found: unknown): IdempotencyRecord | null {
  return found ? decodeJsonRow<IdempotencyRecord>(idempotencyRecords, found as Record<string, unknown>) : null;
}

/** The key directory's entry for a principal-scoped record. */
export function keyDirectoryRow(record: IdempotencyRecord): typeof idempotencyKeyDirectory.$inferInsert {
  return {
    principal: record.principal,
    key: record.key,
    workspaceId: record.workspaceId,
    fingerprint: record.fingerprint,
    createdAt: record.createdAt,
  };
}

export class IdempotencyStorage {
  constructor(private readonly db: Database) {}

  /**
   * Serialize every transaction using this (principal, key) until it ends, so that two
   * identical requests in flight execute once: the later one then finds the stored record.
   */
  async lock(principal: string, key: string): Promise<void> {
    await this.db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${principal}\u001f${key}`}, 0))`);
  }

  /**
   * `lock` for several (principal, key) lock names (`principal\u001fkey`) at once (a group
   * commit's writes), and from here on no statement of the transaction runs longer than
   * `timeoutMs`. The locks are tried in one statement, in name order; a lock held elsewhere is
   * then waited for by a statement of its own, which the timeout bounds (a deadlock with another
   * batch fails this one, whose writes then run alone).
   */
  async lockAll(lockNames: readonly string[], timeoutMs: number | null): Promise<void> {
    const names = [...new Set(lockNames)].sort();
    const timeout = timeoutMs === null ? sql`null` : sql`set_config('statement_timeout', ${String(timeoutMs)}, true)`;
    const list = names.length
      ? sql.join(
          names.map((name) => sql`${name}`),
          sql`, `,
        )
      : sql``;
    const result = await this.db.execute(
      sql`select ${timeout} as timeout, array(select u.name from unnest(array[${list}]::text[]) with ordinality as u(name, i) where not pg_try_advisory_xact_lock(hashtextextended(u.name, 0)) order by u.i) as busy`,
    );
    const busy = rowsOf<{ busy: string[] | null }>(result)[0]?.busy ?? [];
    for (const name of busy) await this.db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`);
  }

  /**
   * After `lock`: the record under this principal and key, with the caller's standing in a
   * workspace and the namespaces a write names, in one statement (its snapshot is taken after
   * the lock was granted, so it sees the record of whoever held the lock before). The record is
   * looked up as `recordLookup` says.
   */
  async findWithStanding(
    principal: string,
    key: string,
    workspaceId: string,
    query: StandingQuery,
    namespaceIds: readonly string[],
    scope: KeyScope,
  ): Promise<{ record: IdempotencyRecord | null; standing: Standing; namespaces: NamespaceRow[] }> {
    const document = await selectShapedDocument(
      this.db,
      `idempotency.findWithStanding.${scope}`,
      { principal, key, workspaceId, query, namespaceIds },
      ({ principal, key, workspaceId, query, namespaceIds }) => {
        const named = namedNamespaces(workspaceId, namespaceIds);
        const record = recordLookup(principal, key, workspaceId, scope);
        return sql`${standingMembers(workspaceId, query)}, 'namespaces', ${named}, 'record', ${record}`;
      },
    );
    return {
      record: decodeRecord(document.record),
      standing: decodeStanding(document),
      namespaces: decodeJsonRows<NamespaceRow>(namespaces, document.namespaces),
    };
  }

  /** After `lock`: the record under this principal and key, as `recordLookup` says. */
  async find(principal: string, key: string, workspaceId: string, scope: KeyScope): Promise<IdempotencyRecord | null> {
    const result = await this.db.execute(sql`select ${recordLookup(principal, key, workspaceId, scope)} as record`);
    return decodeRecord(rowsOf<{ record: unknown }>(result)[0]?.record ?? null);
  }

  /**
   * A workspace's record joins its rows (and, for a principal in every workspace, the key
   * directory); a write outside any workspace (workspaces.create) keeps its record in the
   * (reference) directory table. One statement either way.
   */
  async insert(record: IdempotencyRecord, scope: KeyScope): Promise<void> {
    if (record.workspaceId === DIRECTORY_SCOPE) {
      const { workspaceId: _scope, subjectIds: _shown, ...rest } = record;
      await this.db.insert(directoryIdempotencyRecords).values(rest);
      return;
    }
    if (scope === 'workspace') {
      await this.db.insert(idempotencyRecords).values(record);
      return;
    }
    await this.db.execute(
      sql`with key_directory as ${this.db.insert(idempotencyKeyDirectory).values(keyDirectoryRow(record))}, record as ${this.db.insert(idempotencyRecords).values(record)} select 1`,
    );
  }

  /**
   * Blank every stored answer that shows any of these ids: a purge must not leave the erased
   * content replayable. A blanked record replays as `not_found`.
   */
  async eraseBySubjects(workspaceId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .update(idempotencyRecords)
      .set({ body: '', status: 404 })
      .where(
        and(eq(idempotencyRecords.workspaceId, workspaceId), arrayOverlaps(idempotencyRecords.subjectIds, [...ids])),
      );
  }
}
