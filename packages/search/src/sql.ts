import { type SQL, sql } from 'drizzle-orm';

/** `db.execute` answers an array on postgres.js and `{ rows }` on PGlite. */
export const rowsOf = <T>(result: unknown): T[] =>
  Array.isArray(result) ? (result as T[]) : (((result as { rows?: T[] }).rows ?? []) as T[]);

/** A comma-separated list of parameters, for `in (...)`. */
export const list = (values: readonly string[]): SQL =>
  sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  );

/** The SQLSTATE of a failed statement (Drizzle wraps the driver's error as its `cause`). */
export function sqlState(error: unknown): string | undefined {
  const direct = (error as { code?: unknown } | null)?.code;
  if (typeof direct === 'string') return direct;
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof cause === 'string' ? cause : undefined;
}
