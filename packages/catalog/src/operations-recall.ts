import { z } from 'zod';
import { defineOperation } from './operation';
import {
  boundedText,
  distinctIds,
  distinctList,
  memoryKindSchema,
  sequenceSchema,
  timestampSchema,
} from './primitives';
import { memorySchema, revisionSchema } from './resources';

/** Which ranking arms recall asks (decisions §11): both fused, or one alone. */
export const recallModeSchema = z.enum(['hybrid', 'lexical', 'semantic']);

/**
 * How one arm took part in an answer: `ok` answered, `off` disabled by configuration or not asked
 * for by `mode`, `unavailable` failed (its provider or the embedder is down).
 */
export const armStateSchema = z.enum(['ok', 'off', 'unavailable']);

/** An item's 1-based rank in one arm's ranking, or null when that arm did not propose it. */
const armRankSchema = z.int().min(1).nullable();

/** Recall (decisions §5): the index proposes, the ledger decides. */
export const recall = defineOperation({
  name: 'recall',
  summary: 'Retrieve memories relevant to a query, with an honest status of how complete the answer is.',
  method: 'POST',
  path: '/v1/recall',
  tool: 'svc_recall',
  scope: 'svc:read',
  capability: 'read',
  idempotent: false,
  workspace: 'selected',
  maxItems: 100,
  mutates: false,
  input: {
    params: z.strictObject({}),
    query: z.strictObject({}),
    body: z.strictObject({
      namespace_ids: distinctIds(1, 100),
      include_descendants: z.boolean().default(true),
      query: boundedText(1, 4096),
      kinds: distinctList(memoryKindSchema, 1, 3).optional(),
      as_of: timestampSchema.optional(),
      known_at: timestampSchema.optional(),
      mode: recallModeSchema.default('hybrid'),
      // The budget and each of its fields may be left out (decisions §5).
      budget: z
        .strictObject({
          max_items: z.int().min(1).max(100).default(20),
          max_context_chars: z.int().min(1).max(1048576).default(65536),
        })
        .prefault({}),
      min_sequence: sequenceSchema.optional(),
      wait_ms: z.int().min(0).max(10000).default(0),
      on_pending: z.enum(['report', 'error']).default('report'),
    }),
  },
  output: z.strictObject({
    status: z.enum(['complete', 'partial', 'degraded', 'pending']),
    indexed_sequence: sequenceSchema,
    items: z
      .array(
        z.strictObject({
          memory: memorySchema,
          revision: revisionSchema,
          /** The fused score (decisions §11): higher is better, comparable only within one answer. */
          score: z.number(),
          stale: z.boolean(),
          ranks: z.strictObject({ lexical: armRankSchema, semantic: armRankSchema }),
        }),
      )
      .max(100),
    context_chars: z.int().min(0),
    retrieval: z.strictObject({
      mode: recallModeSchema,
      lexical: armStateSchema,
      semantic: armStateSchema,
    }),
  }),
});
