import { and, asc, eq, gte, isNull, lte, sql } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import {
  CHAINING,
  type CommitDigestInput,
  commitDigest,
  digestInputOf,
  emptySources,
  GENESIS_CHAIN_HASH,
  nextChainHash,
  type RecordSources,
  recordKindOf,
  recordsOfKind,
} from '../chain';
import type { Database } from '../database';
import { type CommitRow, rowsOf } from '../rows';
import {
  commits,
  credentials,
  deletionReceipts,
  evidence,
  installations,
  memories,
  namespaces,
  revisions,
  verifications,
  webhooks,
  workspaceHeads,
  workspaces,
} from '../schema';
import type { WrittenRecords } from './written-records';

/** Ids as one text parameter, so that every batch runs the same statement text (ids hold no comma). */
const idIn = (column: AnyPgColumn, ids: readonly string[]) =>
  sql`${column} = any(string_to_array(${ids.join(',')}, ','))`;

/** A workspace's head with its chain hash (null: an older ledger `svc migrate` has not chained yet). */
export interface ChainHead {
  sequence: number;
  recordedAt: number;
  chainHash: string | null;
}

/** The commit fields a chain hash covers. */
export type ChainedCommit = Pick<
  CommitRow,
  'workspaceId' | 'sequence' | 'recordedAt' | 'actorId' | 'operation' | 'subjectIds' | 'chainHash'
>;

/** A revision's record interval, as `svc ledger verify` checks it against the commits that ended it. */
export interface RecordInterval {
  id: string;
  memoryId: string;
  generation: number;
  recordedAt: number;
  recordedUntil: number | null;
  commitSequence: number;
}

/** Reads and writes of the hash chain (docs/ledger-proofs.md); the arithmetic is in `../chain`. */
export class ChainStorage {
  constructor(
    private readonly db: Database,
    /** The rows this transaction wrote (`Stores`): a commit is hashed from them, not from a read-back. */
    private readonly written: WrittenRecords | null = null,
  ) {}

  /** The head with its chain hash: the last commit's (genesis before any; null while unchained). */
  async head(workspaceId: string): Promise<ChainHead | null> {
    return this.readHead(workspaceId, false);
  }

  private async readHead(workspaceId: string, forUpdate: boolean): Promise<ChainHead | null> {
    const result = await this.db.execute(sql`
      select h.sequence, h.recorded_at,
             case when h.sequence = 0 then ${GENESIS_CHAIN_HASH} else c.chain_hash end as chain_hash
        from ${workspaceHeads} h
        left join ${commits} c on c.workspace_id = h.workspace_id and c.sequence = h.sequence
       where h.workspace_id = ${workspaceId}
       ${forUpdate ? sql`for update of h` : sql``}`);
    const row = rowsOf<{ sequence: string | number; recorded_at: number; chain_hash: string | null }>(result)[0];
    return row
      ? { sequence: Number(row.sequence), recordedAt: Number(row.recorded_at), chainHash: row.chain_hash }
      : null;
  }

  /** Commits `from`..`to` (inclusive, at most `limit`) in sequence order. */
  async commits(workspaceId: string, from: number, to: number, limit: number): Promise<CommitRow[]> {
    return this.db
      .select()
      .from(commits)
      .where(and(eq(commits.workspaceId, workspaceId), gte(commits.sequence, from), lte(commits.sequence, to)))
      .orderBy(asc(commits.sequence))
      .limit(limit);
  }

  async commit(workspaceId: string, sequence: number): Promise<CommitRow | null> {
    const rows = await this.commits(workspaceId, sequence, sequence, 1);
    return rows[0] ?? null;
  }

  /**
   * The rows these subject ids name: those in `known` (rows this transaction wrote) as they are,
   * the others read by primary key (one statement per kind present).
   */
  async sources(workspaceId: string, subjectIds: readonly string[], known?: RecordSources): Promise<RecordSources> {
    const sources = emptySources();
    const byKind = new Map<string, string[]>();
    for (const id of new Set(subjectIds)) {
      const kind = recordKindOf(id);
      if (kind === null) continue;
      const row = known && recordsOfKind(known, kind).get(id);
      if (row) recordsOfKind(sources, kind).set(id, row);
      else byKind.set(kind, [...(byKind.get(kind) ?? []), id]);
    }
    const ofWorkspace = <T extends { workspaceId: AnyPgColumn; id: AnyPgColumn }>(table: T, ids: string[]) =>
      and(eq(table.workspaceId, workspaceId), idIn(table.id, ids));
    const reads: Promise<void>[] = [];
    const read = <R extends { id: string }>(
      kind: string,
      load: (ids: string[]) => Promise<R[]>,
      into: Map<string, R>,
    ) => {
      const ids = byKind.get(kind);
      if (!ids) return;
      reads.push(
        load(ids).then((rows) => {
          for (const row of rows) into.set(row.id, row);
        }),
      );
    };
    const db = this.db;
    read('workspace', (ids) => db.select().from(workspaces).where(idIn(workspaces.id, ids)), sources.workspaces);
    read('namespace', (ids) => db.select().from(namespaces).where(ofWorkspace(namespaces, ids)), sources.namespaces);
    read('evidence', (ids) => db.select().from(evidence).where(ofWorkspace(evidence, ids)), sources.evidence);
    read(
      'verification',
      (ids) => db.select().from(verifications).where(ofWorkspace(verifications, ids)),
      sources.verifications,
    );
    read('memory', (ids) => db.select().from(memories).where(ofWorkspace(memories, ids)), sources.memories);
    read('revision', (ids) => db.select().from(revisions).where(ofWorkspace(revisions, ids)), sources.revisions);
    read(
      'receipt',
      (ids) => db.select().from(deletionReceipts).where(ofWorkspace(deletionReceipts, ids)),
      sources.receipts,
    );
    read(
      'installation',
      (ids) => db.select().from(installations).where(ofWorkspace(installations, ids)),
      sources.installations,
    );
    read(
      'credential',
      (ids) => db.select().from(credentials).where(ofWorkspace(credentials, ids)),
      sources.credentials,
    );
    read('webhook', (ids) => db.select().from(webhooks).where(ofWorkspace(webhooks, ids)), sources.webhooks);
    await Promise.all(reads);
    const purged = [...sources.revisions.values()].filter((r) => r.text === null).map((r) => r.id);
    if (purged.length > 0) {
      // A purged revision's text hash is kept by its memory's deletion receipt.
      const receipts = await db
        .select({ revisionIds: deletionReceipts.revisionIds, erasedSha256: deletionReceipts.erasedSha256 })
        .from(deletionReceipts)
        .where(
          and(
            eq(deletionReceipts.workspaceId, workspaceId),
            eq(deletionReceipts.subjectKind, 'memory'),
            sql`${deletionReceipts.revisionIds} && string_to_array(${purged.join(',')}, ',')`,
          ),
        );
      for (const receipt of receipts) {
        receipt.revisionIds.forEach((id, i) => {
          const hash = receipt.erasedSha256[i];
          if (hash !== undefined) sources.erasedTextSha256.set(id, hash);
        });
      }
    }
    return sources;
  }

  /** The digest inputs of these commits, from the rows they name. */
  async digestInputs(workspaceId: string, rows: readonly ChainedCommit[]): Promise<CommitDigestInput[]> {
    const sources = await this.sources(
      workspaceId,
      rows.flatMap((c) => c.subjectIds),
    );
    return rows.map((c) => digestInputOf(c, sources));
  }

  /**
   * Chain a commit written by a transaction of its own, once its rows are written: its digest
   * comes from the row objects this transaction inserted (the ones the insert sent), and from
   * the ledger for rows it names without writing them (an earlier write's). `previous` is the
   * chain hash of the commit before, read when the sequence was allocated (null: the workspace
   * is not chained yet, and `svc migrate` chains the commit later).
   */
  async seal(commit: Omit<ChainedCommit, 'chainHash'>, previous: string | null): Promise<string | null> {
    if (previous === null || !CHAINING) return null;
    const sources = await this.sources(commit.workspaceId, commit.subjectIds, this.written?.sources);
    const chainHash = nextChainHash(previous, commitDigest(digestInputOf(commit, sources)));
    await this.db
      .update(commits)
      .set({ chainHash })
      .where(and(eq(commits.workspaceId, commit.workspaceId), eq(commits.sequence, commit.sequence)));
    return chainHash;
  }

  /**
   * Revisions' record intervals in (memory, generation) order, after `after` (exclusive; null:
   * from the first), at most `limit`: pages along the `revisions_generation` index.
   */
  async recordIntervals(
    workspaceId: string,
    after: { memoryId: string; generation: number } | null,
    limit: number,
  ): Promise<RecordInterval[]> {
    return this.db
      .select({
        id: revisions.id,
        memoryId: revisions.memoryId,
        generation: revisions.generation,
        recordedAt: revisions.recordedAt,
        recordedUntil: revisions.recordedUntil,
        commitSequence: revisions.commitSequence,
      })
      .from(revisions)
      .where(
        and(
          eq(revisions.workspaceId, workspaceId),
          after
            ? sql`(${revisions.memoryId}, ${revisions.generation}) > (${after.memoryId}, ${after.generation})`
            : undefined,
        ),
      )
      .orderBy(asc(revisions.memoryId), asc(revisions.generation))
      .limit(limit);
  }

  /**
   * The namespace of a revision, evidence or verification and the sequence of the commit that
   * wrote it (purged rows included: a proof carries hashes only); null when there is none.
   */
  async writerOf(workspaceId: string, id: string): Promise<{ namespaceId: string; sequence: number } | null> {
    const kind = recordKindOf(id);
    if (kind === 'revision' || kind === 'evidence') {
      const table = kind === 'revision' ? revisions : evidence;
      const rows = await this.db
        .select({ namespaceId: table.namespaceId, sequence: table.commitSequence })
        .from(table)
        .where(and(eq(table.workspaceId, workspaceId), eq(table.id, id)));
      return rows[0] ?? null;
    }
    if (kind !== 'verification') return null;
    // A verification's commit is the one recorded at its time that names it.
    const result = await this.db.execute(sql`
      select e.namespace_id, c.sequence
        from ${verifications} v
        join ${evidence} e on e.workspace_id = v.workspace_id and e.id = v.evidence_id
        join ${commits} c on c.workspace_id = v.workspace_id and c.recorded_at = v.recorded_at
                         and v.id = any(c.subject_ids)
       where v.workspace_id = ${workspaceId} and v.id = ${id}`);
    const row = rowsOf<{ namespace_id: string; sequence: string | number }>(result)[0];
    return row ? { namespaceId: row.namespace_id, sequence: Number(row.sequence) } : null;
  }

  /** Workspaces whose last commit is not chained yet (ledgers written before the chain existed). */
  async unchainedWorkspaces(): Promise<{ workspaceId: string; sequence: number }[]> {
    return this.db
      .select({ workspaceId: workspaceHeads.workspaceId, sequence: workspaceHeads.sequence })
      .from(workspaceHeads)
      .innerJoin(
        commits,
        and(eq(commits.workspaceId, workspaceHeads.workspaceId), eq(commits.sequence, workspaceHeads.sequence)),
      )
      .where(isNull(commits.chainHash))
      .orderBy(asc(workspaceHeads.workspaceId));
  }

  /**
   * Where chaining a workspace stands: the last commit of its chained prefix and that commit's
   * chain hash (sequence 0 and the genesis hash when commit 1 is not chained yet). Commits are
   * chained in order, so the commits after it are the ones left to chain.
   */
  async chainedPrefix(workspaceId: string): Promise<{ sequence: number; chainHash: string }> {
    const [firstUnchained] = await this.db
      .select({ sequence: commits.sequence })
      .from(commits)
      .where(and(eq(commits.workspaceId, workspaceId), isNull(commits.chainHash)))
      .orderBy(asc(commits.sequence))
      .limit(1);
    const sequence = (firstUnchained?.sequence ?? 1) - 1;
    const chainHash = sequence > 0 ? (await this.commit(workspaceId, sequence))?.chainHash : null;
    return chainHash ? { sequence, chainHash } : { sequence: 0, chainHash: GENESIS_CHAIN_HASH };
  }

  /** Store chain hashes computed by the migration (one statement for the batch). */
  async setChainHashes(workspaceId: string, hashes: readonly { sequence: number; chainHash: string }[]): Promise<void> {
    if (hashes.length === 0) return;
    await this.db.execute(sql`
      update ${commits} as c set chain_hash = v.chain_hash
        from (select unnest(string_to_array(${hashes.map((h) => h.sequence).join(',')}, ','))::bigint as sequence,
                     unnest(string_to_array(${hashes.map((h) => h.chainHash).join(',')}, ',')) as chain_hash) as v
       where c.workspace_id = ${workspaceId} and c.sequence = v.sequence`);
  }

  /** Lock the head (inside a transaction) and read it: the migration's last step races no writer. */
  async lockHead(workspaceId: string): Promise<ChainHead | null> {
    return this.readHead(workspaceId, true);
  }
}
