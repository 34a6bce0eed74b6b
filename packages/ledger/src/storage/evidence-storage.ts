import { and, asc, eq, getTableColumns, gt, inArray, lte, or, sql } from 'drizzle-orm';
import type { Database } from '../database';
import type { EvidenceRow, NamespaceRow, VerificationRow } from '../rows';
import { evidence, namespaces, verifications } from '../schema';
import {
  decodeJsonRow,
  decodeJsonRows,
  decodeStanding,
  jsonRow,
  jsonRows,
  type Standing,
  type StandingQuery,
  selectShapedDocument,
  standingMembers,
} from './read-view';
import type { WrittenRecords } from './written-records';

/** `evidence.get` in one statement: standing, head, the evidence, its namespace and a verification page. */
export interface EvidenceReadView {
  standing: Standing;
  evidence: EvidenceRow | null;
  namespace: NamespaceRow | null;
  /** Up to `limit` verifications after the position, oldest first (as `verificationsPage`). */
  verifications: VerificationRow[];
}

export class EvidenceStorage {
  constructor(
    private readonly db: Database,
    /** Where the one-statement views run (`Stores`): the database's point-read connections or the transaction. */
    private readonly pointReads: Database = db,
    /** The rows this transaction writes, for its commit's chain hash (`Stores`); none outside a write transaction. */
    private readonly written: WrittenRecords | null = null,
  ) {}

  async get(workspaceId: string, id: string): Promise<EvidenceRow | null> {
    const rows = await this.db
      .select()
      .from(evidence)
      .where(and(eq(evidence.workspaceId, workspaceId), eq(evidence.id, id)));
    return rows[0] ?? null;
  }

  /** The caller's standing, the evidence item, its namespace and one page of its verifications, in one statement. */
  async readView(
    workspaceId: string,
    evidenceId: string,
    standing: StandingQuery,
    page: { knownAt: number; after: { recordedAt: number; id: string } | null; limit: number },
  ): Promise<EvidenceReadView> {
    const document = await selectShapedDocument(
      this.pointReads,
      'evidence.readView',
      { workspaceId, evidenceId, standing, knownAt: page.knownAt, after: page.after, limit: page.limit },
      ({ workspaceId, evidenceId, standing, knownAt, after, limit }) => {
        const position = after
          ? sql`and (v.recorded_at > ${after.recordedAt} or (v.recorded_at = ${after.recordedAt} and v.id > ${after.id}))`
          : sql``;
        return sql`${standingMembers(workspaceId, standing)},
        'evidence', (select ${jsonRow(evidence, 'e')} from evidence e where e.workspace_id = ${workspaceId} and e.id = ${evidenceId}),
        'namespace', (select ${jsonRow(namespaces, 'n')} from evidence e join namespaces n on n.workspace_id = e.workspace_id and n.id = e.namespace_id where e.workspace_id = ${workspaceId} and e.id = ${evidenceId}),
        'verifications', ${jsonRows(
          verifications,
          'v',
          sql`from (select * from verifications v where v.workspace_id = ${workspaceId} and v.evidence_id = ${evidenceId} and v.recorded_at <= ${knownAt} ${position} order by v.recorded_at, v.id limit ${limit}) v`,
          sql`v.recorded_at, v.id`,
        )}`;
      },
    );
    return {
      standing: decodeStanding(document),
      evidence: document.evidence
        ? decodeJsonRow<EvidenceRow>(evidence, document.evidence as Record<string, unknown>)
        : null,
      namespace: document.namespace
        ? decodeJsonRow<NamespaceRow>(namespaces, document.namespace as Record<string, unknown>)
        : null,
      verifications: decodeJsonRows<VerificationRow>(verifications, document.verifications),
    };
  }

  /**
   * Evidence a revision cites, with their namespaces and every verification of them recorded by
   * `knownAt` (oldest first, as `verificationsOf`), in one statement.
   */
  async citedView(
    workspaceId: string,
    ids: readonly string[],
    knownAt: number,
  ): Promise<{ evidence: EvidenceRow[]; namespaces: NamespaceRow[]; verifications: VerificationRow[] }> {
    if (ids.length === 0) return { evidence: [], namespaces: [], verifications: [] };
    const document = await selectShapedDocument(
      this.pointReads,
      'evidence.citedView',
      { workspaceId, ids, knownAt },
      (inputs) => {
        const { workspaceId, knownAt } = inputs;
        const idList = sql.join(
          inputs.ids.map((id) => sql`${id}`),
          sql`, `,
        );
        return sql`'evidence', ${jsonRows(evidence, 'e', sql`from evidence e where e.workspace_id = ${workspaceId} and e.id in (${idList})`, sql`e.id`)},
        'namespaces', ${jsonRows(namespaces, 'n', sql`from namespaces n where n.workspace_id = ${workspaceId} and n.id in (select e.namespace_id from evidence e where e.workspace_id = ${workspaceId} and e.id in (${idList}))`, sql`n.id`)},
        'verifications', ${jsonRows(verifications, 'v', sql`from verifications v where v.workspace_id = ${workspaceId} and v.evidence_id in (${idList}) and v.recorded_at <= ${knownAt}`, sql`v.recorded_at, v.id`)}`;
      },
    );
    return {
      evidence: decodeJsonRows<EvidenceRow>(evidence, document.evidence),
      namespaces: decodeJsonRows<NamespaceRow>(namespaces, document.namespaces),
      verifications: decodeJsonRows<VerificationRow>(verifications, document.verifications),
    };
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
    this.written?.note(evidence, row);
  }

  async insertVerification(row: VerificationRow): Promise<void> {
    await this.db.insert(verifications).values(row);
    this.written?.note(verifications, row);
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
