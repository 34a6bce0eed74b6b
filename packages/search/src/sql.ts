import { jsonValue, rowsOf } from '@tms/ledger';
import { type SQL, sql } from 'drizzle-orm';

/**
 * The rows of a statement that packs them into one JSON array of arrays, in a column named
 * `packed` (`json_agg(json_build_array(...))`, null when there are none), as tuples. Searches
 * read hundreds of rows at a time, and on PGlite each row and field of an answer costs
 * JavaScript in the protocol's parser: 480 rows of two ids took about 4 ms to read as rows and
 * under 1 ms as one JSON value.
 */
export function packedRows<T extends unknown[]>(result: unknown): T[] {
  const packed = rowsOf<{ packed: unknown }>(result)[0]?.packed;
  return packed === null || packed === undefined ? [] : jsonValue<T[]>(packed);
}

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
