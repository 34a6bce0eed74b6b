import { and, eq, gt, or, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import type {
  actors,
  commits,
  credentials,
  deletionReceipts,
  evidence,
  grants,
  idempotencyRecords,
  installations,
  memories,
  namespaces,
  revisions,
  verifications,
  webhooks,
  workspaces,
} from './schema';

/*
 * The ledger's rows as the schema infers them, and the small types the storage classes share.
 * They live here, below every storage class and the chain, so that those import them from one
 * place instead of from each other (an import cycle, checked by `pnpm lint`).
 */
export type ActorRow = typeof actors.$inferSelect;
export type WorkspaceRow = typeof workspaces.$inferSelect;
export type CommitRow = typeof commits.$inferSelect;
export type NamespaceRow = typeof namespaces.$inferSelect;
export type GrantRow = typeof grants.$inferSelect;
export type EvidenceRow = typeof evidence.$inferSelect;
export type VerificationRow = typeof verifications.$inferSelect;
export type MemoryRow = typeof memories.$inferSelect;
export type RevisionRow = typeof revisions.$inferSelect;
export type DeletionReceiptRow = typeof deletionReceipts.$inferSelect;
export type InstallationRow = typeof installations.$inferSelect;
export type CredentialRow = typeof credentials.$inferSelect;
export type WebhookRow = typeof webhooks.$inferSelect;
export type IdempotencyRecord = typeof idempotencyRecords.$inferSelect;

/** A workspace member's role. */
export type Role = 'admin' | 'member';

/** Whom a grant is for. */
export interface GrantTarget {
  kind: GrantRow['targetKind'];
  id: string;
}

/** Which namespaces a listing may show: all of them, or those reachable through grants. */
export type Visibility = 'all' | { direct: readonly string[]; subtreeRoots: readonly string[] };

/** `db.execute` answers an array on postgres-js and `{ rows }` on PGlite. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

/**
 * A `json` value as a driver answered it: postgres.js and PGlite parse it, a text cast arrives as
 * a string. Reads that pack many rows into one JSON value (PGlite's protocol parser costs
 * JavaScript per row and field) decode them with this.
 */
export function jsonValue<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** Rows after a listing position in (created_at, id) order: the keyset condition of a cursor. */
export function afterPosition(
  createdAt: AnyPgColumn,
  id: AnyPgColumn,
  after: { createdAt: number; id: string } | null,
): SQL | undefined {
  if (!after) return undefined;
  return or(gt(createdAt, after.createdAt), and(eq(createdAt, after.createdAt), gt(id, after.id)));
}
