import { and, arrayOverlaps, asc, eq, gt, inArray, or, sql } from 'drizzle-orm';
import type { Database } from '../database';
import type { GrantRow, GrantTarget, NamespaceRow, Visibility } from '../rows';
import { grants, namespaces } from '../schema';
import {
  decodeJsonRow,
  decodeStanding,
  jsonRow,
  type Standing,
  type StandingQuery,
  selectShapedDocument,
  standingMembers,
} from './read-view';
import type { WrittenRecords } from './written-records';

export class NamespaceStorage {
  constructor(
    private readonly db: Database,
    /** Where the one-statement views run (`Stores`): the database's point-read connections or the transaction. */
    private readonly pointReads: Database = db,
    /** The rows this transaction writes, for its commit's chain hash (`Stores`); none outside a write transaction. */
    private readonly written: WrittenRecords | null = null,
  ) {}

  async get(workspaceId: string, id: string): Promise<NamespaceRow | null> {
    const rows = await this.db
      .select()
      .from(namespaces)
      .where(and(eq(namespaces.workspaceId, workspaceId), eq(namespaces.id, id)));
    return rows[0] ?? null;
  }

  /** The caller's standing, the workspace head and one namespace, in one statement. */
  async readView(
    workspaceId: string,
    id: string,
    standing: StandingQuery,
  ): Promise<{ standing: Standing; namespace: NamespaceRow | null }> {
    const document = await selectShapedDocument(
      this.pointReads,
      'namespaces.readView',
      { workspaceId, id, standing },
      ({ workspaceId, id, standing }) => sql`${standingMembers(workspaceId, standing)},
        'namespace', (select ${jsonRow(namespaces, 'n')} from namespaces n where n.workspace_id = ${workspaceId} and n.id = ${id})`,
    );
    return {
      standing: decodeStanding(document),
      namespace: document.namespace
        ? decodeJsonRow<NamespaceRow>(namespaces, document.namespace as Record<string, unknown>)
        : null,
    };
  }

  async getMany(workspaceId: string, ids: readonly string[]): Promise<NamespaceRow[]> {
    if (ids.length === 0) return [];
    return this.db
      .select()
      .from(namespaces)
      .where(and(eq(namespaces.workspaceId, workspaceId), inArray(namespaces.id, [...ids])));
  }

  async insert(row: NamespaceRow): Promise<void> {
    await this.db.insert(namespaces).values(row);
    this.written?.note(namespaces, row);
  }

  /** Rename: rewrite the path key of the namespace and of its whole subtree. */
  async rename(
    workspaceId: string,
    id: string,
    name: string,
    oldKey: Buffer,
    newKey: Buffer,
    updatedAt: number,
  ): Promise<void> {
    await this.db
      .update(namespaces)
      .set({ name, updatedAt })
      .where(and(eq(namespaces.workspaceId, workspaceId), eq(namespaces.id, id)));
    await this.db
      .update(namespaces)
      .set({ pathKey: sql`${newKey} || substring(${namespaces.pathKey} from ${oldKey.length + 1})` })
      .where(
        and(
          eq(namespaces.workspaceId, workspaceId),
          or(eq(namespaces.id, id), sql`${id} = any(${namespaces.ancestorIds})`),
        ),
      );
  }

  /** A page of namespaces in display-path order (ties by id), after a cursor position. */
  async list(
    workspaceId: string,
    options: {
      parentId: string | null | undefined;
      visibility: Visibility;
      after: { pathKey: Buffer; id: string } | null;
      limit: number;
    },
  ): Promise<NamespaceRow[]> {
    const { parentId, visibility, after, limit } = options;
    const visible =
      visibility === 'all'
        ? undefined
        : or(
            visibility.direct.length ? inArray(namespaces.id, [...visibility.direct]) : sql`false`,
            visibility.subtreeRoots.length
              ? arrayOverlaps(namespaces.ancestorIds, [...visibility.subtreeRoots])
              : sql`false`,
          );
    const position = after
      ? or(
          sql`${namespaces.pathKey} > ${after.pathKey}`,
          and(sql`${namespaces.pathKey} = ${after.pathKey}`, gt(namespaces.id, after.id)),
        )
      : undefined;
    return this.db
      .select()
      .from(namespaces)
      .where(
        and(
          eq(namespaces.workspaceId, workspaceId),
          parentId === undefined ? undefined : eq(namespaces.parentId, parentId as string),
          visible,
          position,
        ),
      )
      .orderBy(asc(namespaces.pathKey), asc(namespaces.id))
      .limit(limit);
  }

  async grantsOn(workspaceId: string, namespaceId: string): Promise<GrantRow[]> {
    return this.db
      .select()
      .from(grants)
      .where(and(eq(grants.workspaceId, workspaceId), eq(grants.namespaceId, namespaceId)))
      .orderBy(asc(grants.position));
  }

  /** The grants on each of several namespaces (in their stored order), one statement for the lot. */
  async grantsOnMany(workspaceId: string, namespaceIds: readonly string[]): Promise<GrantRow[]> {
    if (namespaceIds.length === 0) return [];
    return this.db
      .select()
      .from(grants)
      .where(and(eq(grants.workspaceId, workspaceId), inArray(grants.namespaceId, [...namespaceIds])))
      .orderBy(asc(grants.namespaceId), asc(grants.position));
  }

  /** Every grant held by any of these targets anywhere in the workspace (one statement). */
  async grantsFor(workspaceId: string, targets: readonly GrantTarget[]): Promise<GrantRow[]> {
    if (targets.length === 0) return [];
    return this.db
      .select()
      .from(grants)
      .where(
        and(
          eq(grants.workspaceId, workspaceId),
          or(...targets.map((t) => and(eq(grants.targetKind, t.kind), eq(grants.targetId, t.id)))),
        ),
      );
  }

  async replaceGrants(workspaceId: string, namespaceId: string, rows: readonly GrantRow[]): Promise<void> {
    await this.db.delete(grants).where(and(eq(grants.workspaceId, workspaceId), eq(grants.namespaceId, namespaceId)));
    if (rows.length) await this.db.insert(grants).values([...rows]);
  }

  /** Every namespace below any of `ids` (not the namespaces themselves). */
  async descendantsOf(workspaceId: string, ids: readonly string[]): Promise<NamespaceRow[]> {
    if (ids.length === 0) return [];
    return this.db
      .select()
      .from(namespaces)
      .where(and(eq(namespaces.workspaceId, workspaceId), arrayOverlaps(namespaces.ancestorIds, [...ids])));
  }
}
