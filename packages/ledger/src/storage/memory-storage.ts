import { and, desc, eq, inArray, lt, lte } from 'drizzle-orm';
import type { Database } from '../database';
import { memories, revisions } from '../schema';

export type MemoryRow = typeof memories.$inferSelect;
export type RevisionRow = typeof revisions.$inferSelect;

export class MemoryStorage {
  constructor(private readonly db: Database) {}

  async get(workspaceId: string, id: string): Promise<MemoryRow | null> {
    const rows = await this.db
      .select()
      .from(memories)
      .where(and(eq(memories.workspaceId, workspaceId), eq(memories.id, id)));
    return rows[0] ?? null;
  }

  async insert(memory: MemoryRow, revision: RevisionRow): Promise<void> {
    await this.db.insert(memories).values(memory);
    await this.db.insert(revisions).values(revision);
  }

  async getRevisions(workspaceId: string, ids: readonly string[]): Promise<RevisionRow[]> {
    if (ids.length === 0) return [];
    return this.db
      .select()
      .from(revisions)
      .where(and(eq(revisions.workspaceId, workspaceId), inArray(revisions.id, [...ids])));
  }

  /**
   * Revisions of a memory recorded by `knownAt`, newest generation first, optionally only
   * those older than a generation (history paging).
   */
  async revisionsKnownAt(
    workspaceId: string,
    memoryId: string,
    options: { knownAt: number; beforeGeneration?: number | undefined; limit?: number | undefined },
  ): Promise<RevisionRow[]> {
    const query = this.db
      .select()
      .from(revisions)
      .where(
        and(
          eq(revisions.workspaceId, workspaceId),
          eq(revisions.memoryId, memoryId),
          lte(revisions.recordedAt, options.knownAt),
          options.beforeGeneration === undefined ? undefined : lt(revisions.generation, options.beforeGeneration),
        ),
      )
      .orderBy(desc(revisions.generation));
    return options.limit === undefined ? query : query.limit(options.limit);
  }
}
