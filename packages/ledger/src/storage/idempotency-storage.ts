import { and, arrayOverlaps, eq, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { idempotencyRecords } from '../schema';

export type IdempotencyRecord = typeof idempotencyRecords.$inferSelect;

export class IdempotencyStorage {
  constructor(private readonly db: Database) {}

  /**
   * Serialize every transaction using this (principal, key) until it ends, so that two
   * identical requests in flight execute once: the later one then finds the stored record.
   */
  async lock(principal: string, key: string): Promise<void> {
    await this.db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`${principal}\u001f${key}`}, 0))`);
  }

  /** The record under this principal and key, in whichever workspace it was used. */
  async find(principal: string, key: string): Promise<IdempotencyRecord | null> {
    const rows = await this.db
      .select()
      .from(idempotencyRecords)
      .where(and(eq(idempotencyRecords.principal, principal), eq(idempotencyRecords.key, key)))
      .limit(1);
    return rows[0] ?? null;
  }

  async insert(record: IdempotencyRecord): Promise<void> {
    await this.db.insert(idempotencyRecords).values(record);
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
