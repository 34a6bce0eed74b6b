import { and, asc, eq, isNull, lt, lte, or, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { afterPosition, rowsOf, type WebhookRow } from '../rows';
import { webhooks, workspaceHeads } from '../schema';
import type { ListPosition } from './credential-storage';
import type { WrittenRecords } from './written-records';

/** A webhook with changes it has not acknowledged yet, due for its next attempt. */
export interface DueWebhook {
  workspaceId: string;
  id: string;
}

/** What a failed attempt leaves behind: either when to try again, or why deliveries stop. */
export type FailureOutcome = { retryAt: number } | { disabledReason: string };

const isLive = and(isNull(webhooks.deletedAt), isNull(webhooks.disabledAt));

/**
 * Webhooks and their delivery state. Registration and deletion are ledger writes (in the write's
 * transaction); the delivery columns are moved by the delivery worker, one process at a time per
 * webhook (`claim` takes a lease), with the cursor advanced only from the sequence it started at.
 */
export class WebhookStorage {
  constructor(
    private readonly db: Database,
    /** The rows this transaction writes, for its commit's chain hash (`Stores`); none outside a write transaction. */
    private readonly written: WrittenRecords | null = null,
  ) {}

  async insert(row: WebhookRow): Promise<void> {
    await this.db.insert(webhooks).values(row);
    this.written?.note(webhooks, row);
  }

  async get(workspaceId: string, id: string): Promise<WebhookRow | null> {
    const rows = await this.db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.workspaceId, workspaceId), eq(webhooks.id, id)));
    return rows[0] ?? null;
  }

  /** Webhooks not deleted, in (created_at, id) order. */
  async list(workspaceId: string, after: ListPosition | null, limit: number): Promise<WebhookRow[]> {
    return this.db
      .select()
      .from(webhooks)
      .where(
        and(
          eq(webhooks.workspaceId, workspaceId),
          isNull(webhooks.deletedAt),
          afterPosition(webhooks.createdAt, webhooks.id, after),
        ),
      )
      .orderBy(asc(webhooks.createdAt), asc(webhooks.id))
      .limit(limit);
  }

  /** Delete a webhook: it is kept for its id's sake, but its secret is forgotten and nothing is delivered. */
  async markDeleted(workspaceId: string, id: string, at: number): Promise<void> {
    await this.db
      .update(webhooks)
      .set({ deletedAt: at, secret: '', nextAttemptAt: null })
      .where(and(eq(webhooks.workspaceId, workspaceId), eq(webhooks.id, id), isNull(webhooks.deletedAt)));
  }

  /**
   * Live webhooks behind their workspace's head whose next attempt is due and that no process
   * holds, oldest due first.
   */
  async due(now: number, limit: number): Promise<DueWebhook[]> {
    const rows = await this.db
      .select({ workspaceId: webhooks.workspaceId, id: webhooks.id })
      .from(webhooks)
      .innerJoin(workspaceHeads, eq(workspaceHeads.workspaceId, webhooks.workspaceId))
      .where(
        and(
          isLive,
          lt(webhooks.deliveredSequence, workspaceHeads.sequence),
          or(isNull(webhooks.nextAttemptAt), lte(webhooks.nextAttemptAt, now)),
          or(isNull(webhooks.leaseUntil), lte(webhooks.leaseUntil, now)),
        ),
      )
      .orderBy(sql`${webhooks.nextAttemptAt} asc nulls first`, asc(webhooks.createdAt))
      .limit(limit);
    return rows;
  }

  /**
   * Take the webhook for one batch until `leaseUntil`, or null when it is deleted, disabled, not
   * due or held by another process. The update's row lock makes two concurrent claims exclusive.
   */
  async claim(workspaceId: string, id: string, now: number, leaseUntil: number): Promise<WebhookRow | null> {
    const rows = await this.db
      .update(webhooks)
      .set({ leaseUntil })
      .where(
        and(
          eq(webhooks.workspaceId, workspaceId),
          eq(webhooks.id, id),
          isLive,
          or(isNull(webhooks.nextAttemptAt), lte(webhooks.nextAttemptAt, now)),
          or(isNull(webhooks.leaseUntil), lte(webhooks.leaseUntil, now)),
        ),
      )
      .returning();
    return rows[0] ?? null;
  }

  /**
   * The endpoint acknowledged the batch (or it held nothing for the endpoint): advance the cursor
   * from `from` to `to` and release the lease. False when the cursor is no longer at `from`.
   */
  async acknowledge(workspaceId: string, id: string, from: number, to: number, at: number): Promise<boolean> {
    const rows = await this.db
      .update(webhooks)
      .set({
        deliveredSequence: to,
        lastDeliveredAt: at,
        failingSince: null,
        failedAttempts: 0,
        nextAttemptAt: null,
        leaseUntil: null,
      })
      .where(and(eq(webhooks.workspaceId, workspaceId), eq(webhooks.id, id), eq(webhooks.deliveredSequence, from)))
      .returning({ id: webhooks.id });
    return rows.length > 0;
  }

  /** A failed attempt: record the error and either schedule the retry or disable the webhook. */
  async recordFailure(
    workspaceId: string,
    id: string,
    failure: { error: string; at: number; failingSince: number; outcome: FailureOutcome },
  ): Promise<void> {
    const { outcome } = failure;
    await this.db
      .update(webhooks)
      .set({
        lastError: failure.error,
        lastErrorAt: failure.at,
        failingSince: failure.failingSince,
        failedAttempts: sql`${webhooks.failedAttempts} + 1`,
        nextAttemptAt: 'retryAt' in outcome ? outcome.retryAt : null,
        disabledAt: 'disabledReason' in outcome ? failure.at : null,
        disabledReason: 'disabledReason' in outcome ? outcome.disabledReason : null,
        leaseUntil: null,
      })
      .where(and(eq(webhooks.workspaceId, workspaceId), eq(webhooks.id, id), isNull(webhooks.disabledAt)));
  }

  /** Release a lease without recording anything (the worker is stopping). */
  async release(workspaceId: string, id: string): Promise<void> {
    await this.db
      .update(webhooks)
      .set({ leaseUntil: null })
      .where(and(eq(webhooks.workspaceId, workspaceId), eq(webhooks.id, id)));
  }

  /** Commits recorded but not yet acknowledged, summed over live webhooks. */
  async lag(): Promise<number> {
    const result = await this.db.execute(sql`
      select coalesce(sum(${workspaceHeads.sequence} - ${webhooks.deliveredSequence}), 0)::float8 as lag
        from ${webhooks} join ${workspaceHeads} on ${workspaceHeads.workspaceId} = ${webhooks.workspaceId}
       where ${webhooks.deletedAt} is null and ${webhooks.disabledAt} is null`);
    return Number(rowsOf<{ lag: number }>(result)[0]?.lag ?? 0);
  }
}
