import { and, asc, eq, getTableColumns, gt, inArray, lte, or, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { evidence, verifications } from '../schema';

export type EvidenceRow = typeof evidence.$inferSelect;
export type VerificationRow = typeof verifications.$inferSelect;

export class EvidenceStorage {
  constructor(private readonly db: Database) {}

  async get(workspaceId: string, id: string): Promise<EvidenceRow | null> {
    const rows = await this.db
      .select()
      .from(evidence)
      .where(and(eq(evidence.workspaceId, workspaceId), eq(evidence.id, id)));
    return rows[0] ?? null;
  }

  async getMany(workspaceId: string, ids: readonly string[]): Promise<EvidenceRow[]> {
    if (ids.length === 0) return [];
    return this.db
      .select()
      .from(evidence)
      .where(and(eq(evidence.workspaceId, workspaceId), inArray(evidence.id, [...ids])));
  }

  async findByHash(workspaceId: string, namespaceId: string, excerptSha256: string): Promise<EvidenceRow | null> {
    const rows = await this.db
      .select()
      .from(evidence)
      .where(
        and(
          eq(evidence.workspaceId, workspaceId),
          eq(evidence.namespaceId, namespaceId),
          eq(evidence.excerptSha256, excerptSha256),
        ),
      );
    return rows[0] ?? null;
  }

  async insert(row: EvidenceRow): Promise<void> {
    await this.db.insert(evidence).values(row);
  }

  async insertVerification(row: VerificationRow): Promise<void> {
    await this.db.insert(verifications).values(row);
  }

  /** Verifications of one evidence item recorded by `knownAt`, oldest first, after a cursor. */
  async verificationsPage(
    workspaceId: string,
    evidenceId: string,
    options: { knownAt: number; after: { recordedAt: number; id: string } | null; limit: number },
  ): Promise<VerificationRow[]> {
    const { knownAt, after, limit } = options;
    return this.db
      .select()
      .from(verifications)
      .where(
        and(
          eq(verifications.workspaceId, workspaceId),
          eq(verifications.evidenceId, evidenceId),
          lte(verifications.recordedAt, knownAt),
          after
            ? or(
                gt(verifications.recordedAt, after.recordedAt),
                and(eq(verifications.recordedAt, after.recordedAt), gt(verifications.id, after.id)),
              )
            : undefined,
        ),
      )
      .orderBy(asc(verifications.recordedAt), asc(verifications.id))
      .limit(limit);
  }

  /** All verifications of several evidence items recorded by `knownAt`, oldest first. */
  async verificationsOf(
    workspaceId: string,
    evidenceIds: readonly string[],
    knownAt: number,
  ): Promise<VerificationRow[]> {
    if (evidenceIds.length === 0) return [];
    return this.db
      .select()
      .from(verifications)
      .where(
        and(
          eq(verifications.workspaceId, workspaceId),
          inArray(verifications.evidenceId, [...evidenceIds]),
          lte(verifications.recordedAt, knownAt),
        ),
      )
      .orderBy(asc(verifications.recordedAt), asc(verifications.id));
  }

  /** Erase the excerpt; the hashes, locator and verifications stay as proof of what it was. */
  async purge(workspaceId: string, id: string, at: number): Promise<void> {
    await this.db
      .update(evidence)
      .set({ excerpt: null, purgedAt: at })
      .where(and(eq(evidence.workspaceId, workspaceId), eq(evidence.id, id)));
  }

  async verificationsByIds(workspaceId: string, ids: readonly string[]): Promise<VerificationRow[]> {
    if (ids.length === 0) return [];
    return this.db
      .select()
      .from(verifications)
      .where(and(eq(verifications.workspaceId, workspaceId), inArray(verifications.id, [...ids])));
  }

  /**
   * The first `perEvidence` verifications (oldest first) of each of several evidence items,
   * recorded by `knownAt`: one statement for the lot (batched nested reads).
   */
  async firstVerificationsOf(
    workspaceId: string,
    evidenceIds: readonly string[],
    knownAt: number,
    perEvidence: number,
  ): Promise<VerificationRow[]> {
    if (evidenceIds.length === 0) return [];
    const ranked = this.db
      .select({
        ...getTableColumns(verifications),
        rank: sql<number>`row_number() over (partition by ${verifications.evidenceId} order by ${verifications.recordedAt}, ${verifications.id})`.as(
          'rank',
        ),
      })
      .from(verifications)
      .where(
        and(
          eq(verifications.workspaceId, workspaceId),
          inArray(verifications.evidenceId, [...evidenceIds]),
          lte(verifications.recordedAt, knownAt),
        ),
      )
      .as('ranked');
    const rows = await this.db
      .select()
      .from(ranked)
      .where(lte(ranked.rank, perEvidence))
      .orderBy(asc(ranked.evidenceId), asc(ranked.recordedAt), asc(ranked.id));
    return rows.map(({ rank: _rank, ...row }) => row);
  }
}
