import { z } from 'zod';
import { evidenceCreate } from './operations';
import { idSchema } from './primitives';

/**
 * A line of a bulk import (`svc import`, docs/import.md) besides its `memories.create` body: the
 * line's own idempotency key and the evidence its memory cites. Not an operation: the CLI runs
 * each line as `evidence.create` then `memories.create`, and the two share this key.
 */

/** An import key leaves room for the `:evidence` suffix of its evidence's key within an Idempotency-Key. */
export const IMPORT_KEY_MAX_LENGTH = 191;

/** The suffix of the idempotency key of a line's evidence (`<import_key>:evidence`). */
export const IMPORT_EVIDENCE_KEY_SUFFIX = ':evidence';

export const importKeySchema = idSchema.max(IMPORT_KEY_MAX_LENGTH);

/** An `evidence.create` body without `namespace_id`: the memory's namespace is the evidence's. */
export const importEvidenceSchema = evidenceCreate.input.body.omit({ namespace_id: true });

/** The fields a line adds to its `memories.create` body. */
export const importExtrasSchema = z.strictObject({
  import_key: importKeySchema.optional(),
  evidence: importEvidenceSchema.optional(),
});
