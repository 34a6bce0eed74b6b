import { and, eq, gt, or, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';

/** `db.execute` answers an array on postgres-js and `{ rows }` on PGlite. */
export function rowsOf<T>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
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
