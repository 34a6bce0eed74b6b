import { and, asc, eq, gt, type SQL, sql } from 'drizzle-orm';
import { GENESIS_CHAIN_HASH } from '../chain';
import type { Database } from '../database';
import { rowsOf } from '../rows';
import { commits, workspaceHeads } from '../schema';

/** The channel a write notifies, with its workspace id as payload. */
export const COMMIT_CHANNEL = 'tms_commits';

export type CommitRow = typeof commits.$inferSelect;

export interface CommitStamp {
  sequence: number;
  recordedAt: number;
}

/** A stamp as allocated, with the chain hash the head held before it (null: not chained yet). */
export interface AllocatedStamp extends CommitStamp {
  previousChainHash: string | null;
}

/** The statement that wakes indexers of a workspace (delivered when the transaction commits). */
export function notification(workspaceId: string): SQL {
  return sql`select pg_notify(${COMMIT_CHANNEL}, ${workspaceId})`;
}

interface HeadReturned {
  sequence: string | number;
  recorded_at: number;
  chain_hash: string | null;
}

/** Per-workspace commit sequence and the commit log. */
export class CommitStorage {
  constructor(private readonly db: Database) {}

  async createHead(workspaceId: string): Promise<void> {
    await this.db
      .insert(workspaceHeads)
      .values({ workspaceId, sequence: 0, recordedAt: 0, chainHash: GENESIS_CHAIN_HASH });
  }

  /**
   * Take the next sequence of the workspace. The row lock it takes is held until the
   * transaction ends, so sequences are gap-free and in commit order; call it as late as
   * possible. `recorded_at` never goes backwards: max(database clock, previous). The head's
   * chain hash comes back in the same statement (the update leaves it as the last writer set it).
   */
  async allocate(workspaceId: string): Promise<AllocatedStamp> {
    const result = await this.db.execute(sql`
      update ${workspaceHeads}
         set sequence = sequence + 1,
             recorded_at = greatest(recorded_at, extract(epoch from clock_timestamp())::float8)
       where workspace_id = ${workspaceId}
   returning sequence, recorded_at, chain_hash`);
    const row = rowsOf<HeadReturned>(result)[0];
    if (!row) throw new Error(`no head row for workspace ${workspaceId}`);
    return { sequence: Number(row.sequence), recordedAt: Number(row.recorded_at), previousChainHash: row.chain_hash };
  }

  /**
   * Take the next `count` sequences of the workspace in one statement (a group commit): the
   * first stamp is returned, the others follow it with the same `recorded_at`. Locks the head
   * like `allocate`.
   */
  async allocateMany(workspaceId: string, count: number): Promise<AllocatedStamp> {
    const result = await this.db.execute(sql`
      update ${workspaceHeads}
         set sequence = sequence + ${count}::int,
             recorded_at = greatest(recorded_at, extract(epoch from clock_timestamp())::float8)
       where workspace_id = ${workspaceId}
   returning sequence, recorded_at, chain_hash`);
    const row = rowsOf<HeadReturned>(result)[0];
    if (!row) throw new Error(`no head row for workspace ${workspaceId}`);
    return {
      sequence: Number(row.sequence) - count + 1,
      recordedAt: Number(row.recorded_at),
      previousChainHash: row.chain_hash,
    };
  }

  /** Record a commit and wake indexers (NOTIFY is delivered when the transaction commits). */
  async insert(row: typeof commits.$inferInsert): Promise<void> {
    await this.db.insert(commits).values(row);
    await this.db.execute(sql`select pg_notify(${COMMIT_CHANNEL}, ${row.workspaceId})`);
  }

  /** Commits of a workspace after a sequence, in order. */
  async after(workspaceId: string, sequence: number, limit: number): Promise<CommitRow[]> {
    return this.db
      .select()
      .from(commits)
      .where(and(eq(commits.workspaceId, workspaceId), gt(commits.sequence, sequence)))
      .orderBy(asc(commits.sequence))
      .limit(limit);
  }

  async head(workspaceId: string): Promise<CommitStamp | null> {
    const rows = await this.db.select().from(workspaceHeads).where(eq(workspaceHeads.workspaceId, workspaceId));
    const row = rows[0];
    return row ? { sequence: row.sequence, recordedAt: row.recordedAt } : null;
  }
}
