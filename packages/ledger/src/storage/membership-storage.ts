import { and, asc, eq, sql } from 'drizzle-orm';
import type { Database } from '../database';
import type { NamespaceRow, Role } from '../rows';
import { membershipDirectory, memberships, namespaces } from '../schema';
import {
  decodeJsonRows,
  decodeStanding,
  namedNamespaces,
  namespacesBelow,
  type Standing,
  type StandingQuery,
  selectShapedDocument,
  standingMembers,
} from './read-view';

export interface MemberRow {
  actorId: string;
  role: Role;
}

export class MembershipStorage {
  constructor(private readonly db: Database) {}

  async roleOf(workspaceId: string, actorId: string): Promise<Role | null> {
    const rows = await this.db
      .select({ role: memberships.role })
      .from(memberships)
      .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.actorId, actorId)));
    return rows[0]?.role ?? null;
  }

  /**
   * The caller's standing in a workspace (role or grants, and the head), the namespaces a read
   * names and, for `subtreeRoots`, every namespace below them (a recall's scope), in one statement.
   */
  async standing(
    workspaceId: string,
    query: StandingQuery,
    namespaceIds: readonly string[],
    subtreeRoots: readonly string[] = [],
  ): Promise<{ standing: Standing; namespaces: NamespaceRow[]; descendants: NamespaceRow[] }> {
    const document = await selectShapedDocument(
      this.db,
      'memberships.standing',
      { workspaceId, query, namespaceIds, subtreeRoots },
      ({ workspaceId, query, namespaceIds, subtreeRoots }) => {
        const named = namedNamespaces(workspaceId, namespaceIds);
        const below = namespacesBelow(workspaceId, subtreeRoots);
        return sql`${standingMembers(workspaceId, query)}, 'namespaces', ${named}, 'descendants', ${below}`;
      },
    );
    return {
      standing: decodeStanding(document),
      namespaces: decodeJsonRows<NamespaceRow>(namespaces, document.namespaces),
      descendants: decodeJsonRows<NamespaceRow>(namespaces, document.descendants),
    };
  }

  async list(workspaceId: string): Promise<MemberRow[]> {
    return this.db
      .select({ actorId: memberships.actorId, role: memberships.role })
      .from(memberships)
      .where(eq(memberships.workspaceId, workspaceId))
      .orderBy(asc(memberships.position));
  }

  /** Replace the whole member list (in the order given), and the actors' directory entries with it. */
  async replace(workspaceId: string, members: readonly MemberRow[]): Promise<void> {
    await this.db.delete(memberships).where(eq(memberships.workspaceId, workspaceId));
    await this.db.delete(membershipDirectory).where(eq(membershipDirectory.workspaceId, workspaceId));
    if (members.length === 0) return;
    await this.db
      .insert(memberships)
      .values(members.map((m, position) => ({ workspaceId, actorId: m.actorId, role: m.role, position })));
    await this.db.insert(membershipDirectory).values(members.map((m) => ({ workspaceId, actorId: m.actorId })));
  }
}
