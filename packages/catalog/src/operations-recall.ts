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
      budget: z.strictObject({
        max_items: z.int().min(1).max(100).default(20),
        max_context_chars: z.int().min(1).max(1048576),
      }),
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
          score: z.number(),
          stale: z.boolean(),
        }),
      )
      .max(100),
    context_chars: z.int().min(0),
  }),
});
