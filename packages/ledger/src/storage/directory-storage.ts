import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { newId } from '../ids';
import { type ActorRow, afterPosition, type WorkspaceRow } from '../rows';
import { actors, enrollments, membershipDirectory, serviceSettings, workspaces } from '../schema';
import type { WrittenRecords } from './written-records';

/** Directory tables: actors, pilot enrollment, workspaces and service settings. */
export class DirectoryStorage {
  constructor(
    private readonly db: Database,
    /** The rows this transaction writes, for its commit's chain hash (`Stores`); none outside a write transaction. */
    private readonly written: WrittenRecords | null = null,
  ) {}

  async findActor(issuer: string, subject: string): Promise<ActorRow | null> {
    const rows = await this.db
      .select()
      .from(actors)
      .where(and(eq(actors.issuer, issuer), eq(actors.subject, subject)));
    return rows[0] ?? null;
  }

  async getActor(id: string): Promise<ActorRow | null> {
    const rows = await this.db.select().from(actors).where(eq(actors.id, id));
    return rows[0] ?? null;
  }

  /** The actor for (issuer, subject), created on first sight. */
  async findOrCreateActor(issuer: string, subject: string, now: number): Promise<ActorRow> {
    const inserted = await this.db
      .insert(actors)
      .values({ id: newId('act'), issuer, subject, createdAt: now })
      .onConflictDoNothing()
      .returning();
    if (inserted[0]) return inserted[0];
    const found = await this.findActor(issuer, subject);
    if (!found) throw new Error('actor vanished after insert conflict');
    return found;
  }

  async existingActorIds(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db
      .select({ id: actors.id })
      .from(actors)
      .where(inArray(actors.id, [...ids]));
    return new Set(rows.map((r) => r.id));
  }

  /** Enroll (issuer, subject) for workspace creation; false when it already was. */
  async enroll(issuer: string, subject: string, now: number): Promise<boolean> {
    const rows = await this.db
      .insert(enrollments)
      .values({ issuer, subject, enrolledAt: now })
      .onConflictDoNothing()
      .returning({ issuer: enrollments.issuer });
    return rows.length > 0;
  }

  async isEnrolled(issuer: string, subject: string): Promise<boolean> {
    const rows = await this.db
      .select({ issuer: enrollments.issuer })
      .from(enrollments)
      .where(and(eq(enrollments.issuer, issuer), eq(enrollments.subject, subject)));
    return rows.length > 0;
  }

  async insertWorkspace(row: WorkspaceRow): Promise<void> {
    await this.db.insert(workspaces).values(row);
    this.written?.note(workspaces, row);
  }

  async getWorkspace(id: string): Promise<WorkspaceRow | null> {
    const rows = await this.db.select().from(workspaces).where(eq(workspaces.id, id));
    return rows[0] ?? null;
  }

  /**
   * Workspaces where the actor is a member, by (created_at, id), after a cursor position: from
   * reference tables only, so on a cluster any node answers without visiting a shard.
   */
  async listWorkspacesOf(
    actorId: string,
    after: { createdAt: number; id: string } | null,
    limit: number,
  ): Promise<WorkspaceRow[]> {
    const position = afterPosition(workspaces.createdAt, workspaces.id, after);
    return this.db
      .select({
        id: workspaces.id,
        name: workspaces.name,
        createdAt: workspaces.createdAt,
        createdBy: workspaces.createdBy,
      })
      .from(workspaces)
      .innerJoin(membershipDirectory, eq(membershipDirectory.workspaceId, workspaces.id))
      .where(and(eq(membershipDirectory.actorId, actorId), position))
      .orderBy(asc(workspaces.createdAt), asc(workspaces.id))
      .limit(limit);
  }

  /** A service-wide secret, created once by whichever process asks first. */
  async secret(key: string, make: () => string): Promise<string> {
    await this.db.insert(serviceSettings).values({ key, value: make() }).onConflictDoNothing();
    const rows = await this.db.select().from(serviceSettings).where(eq(serviceSettings.key, key));
    const value = rows[0]?.value;
    if (value === undefined) throw new Error(`service setting ${key} missing`);
    return value;
  }

  /** Cheap round trip for readiness checks. */
  async ping(): Promise<void> {
    await this.db.execute(sql`select 1`);
  }
}
