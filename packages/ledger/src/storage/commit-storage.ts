import { and, asc, eq, fillPlaceholders, gt, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { CHAINING, GENESIS_CHAIN_HASH } from '../chain';
import { compiledStatementRunner, type Database } from '../database';
import { type CommitRow, rowsOf } from '../rows';
import { commits, workspaceHeads } from '../schema';

/** The channel a write notifies, with its workspace id as payload. */
export const COMMIT_CHANNEL = 'tms_commits';

export interface CommitStamp {
  sequence: number;
  recordedAt: number;
}

/** A stamp as allocated, with the chain hash of the commit before it (null: not chained yet). */
export interface AllocatedStamp extends CommitStamp {
  previousChainHash: string | null;
}

/**
 * The statement that wakes indexers of a workspace (delivered when the transaction commits).
 * The channel is part of the text, so that the workspace is its one parameter (a group commit's
 * compiled flush fills it as a placeholder).
 */
export function notification(workspaceId: SQLWrapper | string): SQL {
  return sql`select pg_notify(${sql.raw(`'${COMMIT_CHANNEL}'`)}, ${workspaceId})`;
}

/**
 * Take `count` sequences of a workspace: the head's update, returning the chain hash of the
 * commit before them (read by its key; genesis before sequence 1). The comparison build of the
 * bench reads nothing, as before the chain. Values may be placeholders (see `ALLOCATE`).
 */
function allocateStatement(workspaceId: SQLWrapper | string, count: SQLWrapper | number): SQL {
  const previousChainHash = CHAINING
    ? sql`case when ${workspaceHeads.sequence} = ${count}::int then ${GENESIS_CHAIN_HASH}
        else (select c.chain_hash from ${commits} c
               where c.workspace_id = ${workspaceId} and c.sequence = ${workspaceHeads.sequence} - ${count}::int) end`
    : sql`null::text`;
  return sql`
      update ${workspaceHeads}
         set sequence = sequence + ${count}::int,
             recorded_at = greatest(recorded_at, extract(epoch from clock_timestamp())::float8)
       where workspace_id = ${workspaceId}
   returning sequence, recorded_at, ${previousChainHash} as chain_hash`;
}

/**
 * Every write runs the allocation under the head lock, so its text is compiled from
 * `allocateStatement` once (Drizzle's building would be a few percent of a grouped write's CPU)
 * and run with its values put in the placeholders' places.
 */
const ALLOCATE = new PgDialect().sqlToQuery(
  allocateStatement(sql.placeholder('workspaceId'), sql.placeholder('count')),
);

interface HeadReturned {
  sequence: string | number;
  recorded_at: number;
  chain_hash: string | null;
}

/** Per-workspace commit sequence and the commit log. */
export class CommitStorage {
  constructor(private readonly db: Database) {}

  async createHead(workspaceId: string): Promise<void> {
    await this.db.insert(workspaceHeads).values({ workspaceId, sequence: 0, recordedAt: 0 });
  }

  /**
   * Take the next sequence of the workspace. The row lock it takes is held until the
   * transaction ends, so sequences are gap-free and in commit order; call it as late as
   * possible. `recorded_at` never goes backwards: max(database clock, previous). The chain hash
   * of the commit before comes back in the same statement.
   */
  async allocate(workspaceId: string): Promise<AllocatedStamp> {
    return this.allocateMany(workspaceId, 1);
  }

  /**
   * Take the next `count` sequences of the workspace in one statement (a group commit): the
   * first stamp is returned, the others follow it with the same `recorded_at`. Locks the head
   * like `allocate`.
   */
  async allocateMany(workspaceId: string, count: number): Promise<AllocatedStamp> {
    const run = compiledStatementRunner(this.db);
    const result = run
      ? await run(ALLOCATE.sql, fillPlaceholders(ALLOCATE.params, { workspaceId, count }))
      : await this.db.execute(allocateStatement(workspaceId, count));
    const row = rowsOf<HeadReturned>(result)[0];
    if (!row) throw new Error(`no head row for workspace ${workspaceId}`);
    const first = Number(row.sequence) - count + 1;
    let previous = row.chain_hash;
    if (previous === null && CHAINING) {
      // A writer this update waited for on the head lock committed the commit before after the
      // statement's snapshot was taken, so the read in `returning` missed it; a statement of its
      // own sees it (read committed). Null again: the ledger is not chained yet.
      previous = await this.chainHashAt(workspaceId, first - 1);
    }
    return { sequence: first, recordedAt: Number(row.recorded_at), previousChainHash: previous };
  }

  /** The chain hash of one commit (genesis before sequence 1; null when absent or not chained). */
  async chainHashAt(workspaceId: string, sequence: number): Promise<string | null> {
    if (sequence === 0) return GENESIS_CHAIN_HASH;
    const rows = await this.db
      .select({ chainHash: commits.chainHash })
      .from(commits)
      .where(and(eq(commits.workspaceId, workspaceId), eq(commits.sequence, sequence)));
    return rows[0]?.chainHash ?? null;
  }

  /** Record a commit and wake indexers (NOTIFY is delivered when the transaction commits). */
  async insert(row: typeof commits.$inferInsert): Promise<void> {
    await this.db.insert(commits).values(row);
    await this.db.execute(notification(row.workspaceId));
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
