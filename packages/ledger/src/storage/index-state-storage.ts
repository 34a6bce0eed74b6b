import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { rowsOf } from '../rows';
import { indexState } from '../schema';

export interface IndexLag {
  workspaceId: string;
  headSequence: number;
  indexedSequence: number;
  /** When the first commit the provider has not indexed was recorded (unix seconds); null when caught up. */
  oldestUnindexedAt: number | null;
  /** When this cursor last advanced (unix seconds); null when it never did. */
  updatedAt: number | null;
}

/** The indexer's progress per workspace and provider. */
export class IndexStateStorage {
  constructor(private readonly db: Database) {}

  async indexedSequence(workspaceId: string, provider: string): Promise<number> {
    const rows = await this.db
      .select({ sequence: indexState.indexedSequence })
      .from(indexState)
      .where(and(eq(indexState.workspaceId, workspaceId), eq(indexState.provider, provider)));
    return rows[0]?.sequence ?? 0;
  }

  /** The indexed sequence of each of several providers (arms) of a workspace, in their order, in one statement. */
  async indexedSequences(workspaceId: string, providers: readonly string[]): Promise<number[]> {
    if (providers.length === 0) return [];
    const rows = await this.db
      .select({ provider: indexState.provider, sequence: indexState.indexedSequence })
      .from(indexState)
      .where(and(eq(indexState.workspaceId, workspaceId), inArray(indexState.provider, [...providers])));
    const sequenceOf = new Map(rows.map((r) => [r.provider, r.sequence]));
    return providers.map((provider) => sequenceOf.get(provider) ?? 0);
  }

  /** Move the indexed sequence forward (never back, whoever else advanced it). */
  async advance(workspaceId: string, provider: string, sequence: number, now: number): Promise<void> {
    await this.db
      .insert(indexState)
      .values({ workspaceId, provider, indexedSequence: sequence, updatedAt: now })
      .onConflictDoUpdate({
        target: [indexState.workspaceId, indexState.provider],
        set: { indexedSequence: sql`greatest(${indexState.indexedSequence}, ${sequence})`, updatedAt: now },
      });
  }

  /** Start over (rebuild). */
  async reset(workspaceId: string, provider: string, now: number): Promise<void> {
    await this.db
      .insert(indexState)
      .values({ workspaceId, provider, indexedSequence: 0, updatedAt: now })
      .onConflictDoUpdate({
        target: [indexState.workspaceId, indexState.provider],
        set: { indexedSequence: 0, updatedAt: now },
      });
  }

  /** Every workspace with its head and indexed sequence, optionally only those behind. */
  async lag(provider: string, onlyBehind: boolean): Promise<IndexLag[]> {
    const result = await this.db.execute(sql`
      select h.workspace_id, h.sequence as head, coalesce(s.indexed_sequence, 0) as indexed,
             c.recorded_at as oldest_unindexed_at, s.updated_at
        from workspace_heads h
        left join index_state s on s.workspace_id = h.workspace_id and s.provider = ${provider}
        left join commits c on c.workspace_id = h.workspace_id and c.sequence = coalesce(s.indexed_sequence, 0) + 1
       where ${onlyBehind ? sql`h.sequence > coalesce(s.indexed_sequence, 0)` : sql`true`}
       order by h.workspace_id`);
    return rowsOf<{
      workspace_id: string;
      head: string | number;
      indexed: string | number;
      oldest_unindexed_at: string | number | null;
      updated_at: string | number | null;
    }>(result).map((r) => ({
      workspaceId: r.workspace_id,
      headSequence: Number(r.head),
      indexedSequence: Number(r.indexed),
      oldestUnindexedAt: r.oldest_unindexed_at === null ? null : Number(r.oldest_unindexed_at),
      updatedAt: r.updated_at === null ? null : Number(r.updated_at),
    }));
  }

  /**
   * Claim a workspace for this transaction: only one indexer works a workspace at a time, and
   * the claim ends with the transaction (or with the process, if it dies). Each arm (lexical,
   * semantic) claims separately.
   */
  async tryClaim(workspaceId: string, arm: 'lexical' | 'semantic' = 'lexical'): Promise<boolean> {
    // One claim per arm: the semantic arm embeds slowly and must never hold the lexical arm back.
    const key = arm === 'lexical' ? `tms-indexer\u001f${workspaceId}` : `tms-indexer-semantic\u001f${workspaceId}`;
    const result = await this.db.execute(sql`select pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) as claimed`);
    return rowsOf<{ claimed: boolean }>(result)[0]?.claimed === true;
  }
}
