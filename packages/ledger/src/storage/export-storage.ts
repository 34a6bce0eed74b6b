import { and, asc, eq, gt, isNotNull, lte, type SQL, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type { Database } from '../database';
import type {
  CommitRow,
  DeletionReceiptRow,
  EvidenceRow,
  MemoryRow,
  NamespaceRow,
  RevisionRow,
  VerificationRow,
} from '../rows';
import { commits, deletionReceipts, evidence, memories, namespaces, revisions, verifications } from '../schema';

/** Where an export reads: one workspace, optionally one namespace's subtree, up to a head. */
export interface ExportScope {
  workspaceId: string;
  /** Only this namespace and its descendants; null for the whole workspace. */
  subtreeRootId: string | null;
  /** The last commit exported (the head when the export started). */
  headSequence: number;
  /** Memory generations are counted as recorded by this time (the head's `recorded_at`). */
  knownAt: number;
}

/** The rows a page of commits wrote, each unpurged and within the scope. */
export interface ExportPage {
  commits: Pick<
    CommitRow,
    'workspaceId' | 'sequence' | 'recordedAt' | 'operation' | 'actorId' | 'subjectIds' | 'chainHash'
  >[];
  namespaces: NamespaceRow[];
  evidence: EvidenceRow[];
  verifications: VerificationRow[];
  /** Revisions written by these commits, with their memory when the revision created it. */
  revisions: { revision: RevisionRow; memory: (MemoryRow & { knownGeneration: number }) | null }[];
  receipts: DeletionReceiptRow[];
}

/**
 * Ids of one kind as a single text parameter, so that every page runs the same statement texts
 * whatever the number of ids (ids never contain a comma).
 */
const idIn = (column: AnyPgColumn, ids: readonly string[]) =>
  sql`${column} = any(string_to_array(${ids.join(',')}, ','))`;

const ofKind = (subjectIds: readonly string[], prefix: string) =>
  subjectIds.filter((id) => id.startsWith(`${prefix}_`));

/**
 * Keyset-paged reads of a workspace's ledger in commit order for `svc export`. A page is a
 * bounded run of commits; the rows they wrote are then fetched by primary key, so a page costs
 * at most six statements whatever the size of the ledger.
 */
export class ExportStorage {
  constructor(private readonly db: Database) {}

  private inScope(scope: ExportScope, namespaceColumn: AnyPgColumn): SQL | undefined {
    const root = scope.subtreeRootId;
    if (root === null) return undefined;
    return sql`${namespaceColumn} in (select n.id from namespaces n where n.workspace_id = ${scope.workspaceId}
      and (n.id = ${root} or ${root} = any(n.ancestor_ids)))`;
  }

  /** The namespace (unpurgeable, so present or absent) a subtree export starts from. */
  async namespace(workspaceId: string, id: string): Promise<NamespaceRow | null> {
    const rows = await this.db
      .select()
      .from(namespaces)
      .where(and(eq(namespaces.workspaceId, workspaceId), eq(namespaces.id, id)));
    return rows[0] ?? null;
  }

  /** The next at most `limit` commits after `afterSequence` (up to the head) and what they wrote. */
  async page(scope: ExportScope, afterSequence: number, limit: number): Promise<ExportPage> {
    const ws = scope.workspaceId;
    const page = await this.db
      .select({
        workspaceId: commits.workspaceId,
        sequence: commits.sequence,
        recordedAt: commits.recordedAt,
        operation: commits.operation,
        actorId: commits.actorId,
        subjectIds: commits.subjectIds,
        chainHash: commits.chainHash,
      })
      .from(commits)
      .where(
        and(
          eq(commits.workspaceId, ws),
          gt(commits.sequence, afterSequence),
          lte(commits.sequence, scope.headSequence),
        ),
      )
      .orderBy(asc(commits.sequence))
      .limit(limit);
    const result: ExportPage = {
      commits: page,
      namespaces: [],
      evidence: [],
      verifications: [],
      revisions: [],
      receipts: [],
    };
    const first = page[0];
    const last = page.at(-1);
    if (!first || !last) return result;
    const subjects = page.flatMap((c) => c.subjectIds);
    const written = (column: AnyPgColumn) => sql`${column} between ${first.sequence} and ${last.sequence}`;

    const namespaceIds = ofKind(subjects, 'ns');
    if (namespaceIds.length > 0) {
      result.namespaces = await this.db
        .select()
        .from(namespaces)
        .where(
          and(eq(namespaces.workspaceId, ws), idIn(namespaces.id, namespaceIds), this.inScope(scope, namespaces.id)),
        );
    }
    const evidenceIds = ofKind(subjects, 'ev');
    if (evidenceIds.length > 0) {
      result.evidence = await this.db
        .select()
        .from(evidence)
        .where(
          and(
            eq(evidence.workspaceId, ws),
            idIn(evidence.id, evidenceIds),
            written(evidence.commitSequence),
            isNotNull(evidence.excerpt),
            this.inScope(scope, evidence.namespaceId),
          ),
        );
    }
    const verificationIds = ofKind(subjects, 'vf');
    if (verificationIds.length > 0) {
      // Verifications hold hashes only, so those of purged evidence stay (as their proof).
      result.verifications = (
        await this.db
          .select({ verification: verifications })
          .from(verifications)
          .innerJoin(evidence, and(eq(evidence.workspaceId, ws), eq(evidence.id, verifications.evidenceId)))
          .where(
            and(
              eq(verifications.workspaceId, ws),
              idIn(verifications.id, verificationIds),
              this.inScope(scope, evidence.namespaceId),
            ),
          )
      ).map((r) => r.verification);
    }
    const revisionIds = ofKind(subjects, 'rev');
    if (revisionIds.length > 0) {
      // The generation a memory shows is the highest recorded by knownAt, as memories.get counts it.
      const knownGeneration = sql<number>`(select max(g.generation) from revisions g
        where g.workspace_id = ${ws} and g.memory_id = ${memories.id} and g.recorded_at <= ${scope.knownAt})`.mapWith(
        Number,
      );
      const rows = await this.db
        .select({ revision: revisions, memory: memories, knownGeneration })
        .from(revisions)
        .leftJoin(
          memories,
          and(eq(memories.workspaceId, ws), eq(memories.id, revisions.memoryId), eq(revisions.generation, 1)),
        )
        .where(
          and(
            eq(revisions.workspaceId, ws),
            idIn(revisions.id, revisionIds),
            written(revisions.commitSequence),
            isNotNull(revisions.text),
            this.inScope(scope, revisions.namespaceId),
          ),
        );
      result.revisions = rows.map((r) => ({
        revision: r.revision,
        memory: r.memory ? { ...r.memory, knownGeneration: r.knownGeneration } : null,
      }));
    }
    const receiptIds = ofKind(subjects, 'rcp');
    if (receiptIds.length > 0) {
      result.receipts = await this.db
        .select()
        .from(deletionReceipts)
        .where(
          and(
            eq(deletionReceipts.workspaceId, ws),
            idIn(deletionReceipts.id, receiptIds),
            this.inScope(scope, deletionReceipts.namespaceId),
          ),
        );
    }
    return result;
  }
}
