import { and, asc, eq } from 'drizzle-orm';
import type { Database } from '../database';
import { memberships } from '../schema';

export type Role = 'admin' | 'member';
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

  async list(workspaceId: string): Promise<MemberRow[]> {
    return this.db
      .select({ actorId: memberships.actorId, role: memberships.role })
      .from(memberships)
      .where(eq(memberships.workspaceId, workspaceId))
      .orderBy(asc(memberships.position));
  }

  /** Replace the whole member list (in the order given). */
  async replace(workspaceId: string, members: readonly MemberRow[]): Promise<void> {
    await this.db.delete(memberships).where(eq(memberships.workspaceId, workspaceId));
    if (members.length === 0) return;
    await this.db
      .insert(memberships)
      .values(members.map((m, position) => ({ workspaceId, actorId: m.actorId, role: m.role, position })));
  }
}
