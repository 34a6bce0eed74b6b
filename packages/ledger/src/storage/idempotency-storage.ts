import { and, arrayOverlaps, eq, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { rowsOf } from '../rows';
import { directoryIdempotencyRecords, idempotencyRecords, namespaces } from '../schema';
import type { NamespaceRow } from './namespace-storage';
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

export type IdempotencyRecord = typeof idempotencyRecords.$inferSelect;

/** A directory record (`d`) shaped as an `IdempotencyRecord` (no workspace, shows no ledger ids). */
const directoryRecordJson = sql`json_build_object('workspaceId', '', 'principal', d.principal, 'key', d.key, 'operation', d.operation, 'fingerprint', d.fingerprint, 'status', d.status, 'body', d.body, 'subjectIds', '{}'::text[], 'createdAt', d.created_at)`;

/** Directory writes (workspaces.create) have no workspace: their records are `workspaceId` ''. */
const DIRECTORY_SCOPE = '';

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
   * the lock was granted, so it sees the record of whoever held the lock before). A principal
   * bound to this workspace (a credential) has its records here only.
   */
  async findWithStanding(
    principal: string,
    key: string,
    workspaceId: string,
    query: StandingQuery,
    namespaceIds: readonly string[],
    principalBoundToWorkspace = false,
  ): Promise<{ record: IdempotencyRecord | null; standing: Standing; namespaces: NamespaceRow[] }> {
    const document = await selectShapedDocument(
      this.db,
      principalBoundToWorkspace ? 'idempotency.findWithStanding.bound' : 'idempotency.findWithStanding',
      { principal, key, workspaceId, query, namespaceIds },
      ({ principal, key, workspaceId, query, namespaceIds }) => {
        const named = namedNamespaces(workspaceId, namespaceIds);
        const record = principalBoundToWorkspace
          ? sql`(select ${jsonRow(idempotencyRecords, 'i')} from idempotency_records i where i.workspace_id = ${workspaceId} and i.principal = ${principal} and i.key = ${key})`
          : sql`coalesce((select ${jsonRow(idempotencyRecords, 'i')} from idempotency_records i where i.principal = ${principal} and i.key = ${key} limit 1), (select ${directoryRecordJson} from directory_idempotency_records d where d.principal = ${principal} and d.key = ${key}))`;
        return sql`${standingMembers(workspaceId, query)}, 'namespaces', ${named}, 'record', ${record}`;
      },
    );
    const found = document.record as Record<string, unknown> | null;
    return {
      record: found ? decodeJsonRow<IdempotencyRecord>(idempotencyRecords, found) : null,
      standing: decodeStanding(document),
      namespaces: decodeJsonRows<NamespaceRow>(namespaces, document.namespaces),
    };
  }

  /**
   * The record under this principal and key, in whichever workspace (or the directory) it was
   * used. A principal bound to one workspace (a credential) uses its keys there only, so its
   * records are looked up in that workspace alone.
   */
  async find(
    principal: string,
    key: string,
    boundWorkspaceId: string | null = null,
  ): Promise<IdempotencyRecord | null> {
    const rows = await this.db
      .select()
      .from(idempotencyRecords)
      .where(
        and(
          boundWorkspaceId === null ? undefined : eq(idempotencyRecords.workspaceId, boundWorkspaceId),
          eq(idempotencyRecords.principal, principal),
          eq(idempotencyRecords.key, key),
        ),
      )
      .limit(1);
    if (rows[0] || boundWorkspaceId !== null) return rows[0] ?? null;
    const directory = await this.db
      .select()
      .from(directoryIdempotencyRecords)
      .where(and(eq(directoryIdempotencyRecords.principal, principal), eq(directoryIdempotencyRecords.key, key)));
    const found = directory[0];
    return found ? { ...found, workspaceId: DIRECTORY_SCOPE, subjectIds: [] } : null;
  }

  /** A workspace's record joins its rows; a directory write's goes to the (reference) directory table. */
  async insert(record: IdempotencyRecord): Promise<void> {
    if (record.workspaceId !== DIRECTORY_SCOPE) {
      await this.db.insert(idempotencyRecords).values(record);
      return;
    }
    const { workspaceId: _scope, subjectIds: _shown, ...rest } = record;
    await this.db.insert(directoryIdempotencyRecords).values(rest);
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
