import { z } from 'zod';

/** The largest integer a JSON client can round-trip exactly (2^53 - 1). */
export const MAX_SAFE_INTEGER = 9007199254740991;

export const CAPABILITIES = ['read', 'observe', 'verify', 'correct', 'forget', 'admin'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const MEMORY_KINDS = ['claim', 'episode', 'procedure'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** Lengths in the spec count characters, i.e. Unicode code points, as JSON Schema does. */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count += 1;
  return count;
}

/**
 * A string of `min`..`max` code points with no unpaired UTF-16 surrogate. The JSON Schema
 * keywords are attached as metadata because JSON Schema also counts code points.
 */
export function boundedText(min: number, max: number) {
  return z
    .string()
    .refine((value) => value.isWellFormed(), { message: 'unpaired surrogate' })
    .refine(
      (value) => {
        // Cheap bounds first: UTF-16 length is between the code point count and twice it.
        if (value.length < min || value.length > max * 2) return false;
        const n = codePointLength(value);
        return n >= min && n <= max;
      },
      { message: `length must be ${min}-${max} characters` },
    )
    .meta({ minLength: min, maxLength: max });
}

export const idSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/);

export const workspaceIdSchema = idSchema.regex(/^ws_/);

/** The first second of year 0001 UTC, in Unix seconds. */
export const MIN_TIMESTAMP = -62135596800;
/** The first second of year 10000 UTC, in Unix seconds: times lie before it. */
export const TIMESTAMP_LIMIT = 253402300800;

const MILLISECOND_HINT = ' (got a value in milliseconds?)';

/** Why a finite number is no time (decisions §1): null if it lies in the years 0001-9999. */
export function timestampProblem(t: number): string | null {
  if (t >= MIN_TIMESTAMP && t < TIMESTAMP_LIMIT) return null;
  // Date.now() and friends: the value read as milliseconds would be a time.
  const looksLikeMilliseconds = t / 1000 >= MIN_TIMESTAMP && t / 1000 < TIMESTAMP_LIMIT;
  return `must be Unix seconds between year 0001 and 9999${looksLikeMilliseconds ? MILLISECOND_HINT : ''}`;
}

/**
 * A time: UTC Unix seconds (fractions allowed) in the years 0001-9999, i.e.
 * `MIN_TIMESTAMP <= t < TIMESTAMP_LIMIT`. Bounded so that a millisecond value (`Date.now()`)
 * is refused with a detail saying seconds are expected, never stored as a date 50 000 years out.
 */
export const timestampSchema = z
  .number()
  .superRefine((t, ctx) => {
    const problem = timestampProblem(t);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({
    description: 'UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999',
    minimum: MIN_TIMESTAMP,
    exclusiveMaximum: TIMESTAMP_LIMIT,
  });

export const sha256Schema = z.string().regex(/^[a-f0-9]{64}$/);

export const cursorSchema = boundedText(1, 512);

/** The most code points a memory's external key holds (decisions §12). */
export const MAX_MEMORY_KEY_LENGTH = 256;

/** A control character (Unicode category Cc): C0 (U+0000-U+001F), DEL (U+007F) and C1 (U+0080-U+009F). */
const CONTROL_CHARACTER = /\p{Cc}/u;

/**
 * A memory's external key (decisions §12): a caller's own name for the memory, 1-256 code
 * points, no control character, no unpaired surrogate. Keys are compared exactly, code point for
 * code point (no case folding, no Unicode normalisation).
 */
export const memoryKeySchema = boundedText(1, MAX_MEMORY_KEY_LENGTH)
  .refine((value) => !CONTROL_CHARACTER.test(value), { message: 'must not contain control characters' })
  .meta({ pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*$' });

export const capabilitySchema = z.enum(CAPABILITIES);

export const memoryKindSchema = z.enum(MEMORY_KINDS);

export const nameSchema = boundedText(1, 160);

export const sequenceSchema = z.int().min(0).max(MAX_SAFE_INTEGER);

export const generationSchema = z.int().min(1).max(MAX_SAFE_INTEGER);

export const commitSchema = z.strictObject({
  sequence: sequenceSchema,
  recorded_at: timestampSchema,
});

export const pageLimitSchema = z.int().min(1).max(100).default(50);

/** A list of distinct items (duplicates are `invalid_input`), `min`..`max` long. */
export function distinctList<T extends z.ZodType>(item: T, min: number, max: number) {
  return z
    .array(item)
    .min(min)
    .max(max)
    .refine((items) => new Set(items).size === items.length, { message: 'duplicate items' })
    .meta({ uniqueItems: true });
}

/** A list of distinct ids. */
export const distinctIds = (min: number, max: number) => distinctList(idSchema, min, max);
