import { z } from 'zod';
import { defineOperation } from './operation';
import {
  boundedText,
  commitSchema,
  cursorSchema,
  distinctIds,
  generationSchema,
  idSchema,
  memoryKeySchema,
  memoryKindSchema,
  pageLimitSchema,
  timestampSchema,
} from './primitives';
import {
  evidenceDeletionReceiptSchema,
  memoryDeletionReceiptSchema,
  memoryListItemSchema,
  memorySchema,
  nextCursorSchema,
  revisionSchema,
} from './resources';

/** Operations of the memory lifecycle (decisions §3): list, attest, correct, forget. */

const idParams = z.strictObject({ id: idSchema });
/** A dry run writes nothing and answers what would happen, with `commit: null`. */
const dryRun = z.boolean().default(false);
const maybeCommit = commitSchema.nullable();

export const memoriesList = defineOperation({
  name: 'memories.list',
  summary:
    'List the memories of a namespace current at known_at and valid at as_of (optionally the one holding a key).',
  method: 'GET',
  path: '/v1/memories',
  tool: 'svc_memories_list',
  scope: 'svc:read',
  capability: 'read',
  idempotent: false,
  workspace: 'selected',
  maxItems: 100,
  mutates: false,
  input: {
    params: z.strictObject({}),
    query: z.strictObject({
      namespace_id: idSchema,
      kind: memoryKindSchema.optional(),
      key: memoryKeySchema.optional(),
      as_of: timestampSchema.optional(),
      known_at: timestampSchema.optional(),
      limit: pageLimitSchema,
      cursor: cursorSchema.optional(),
    }),
    body: null,
  },
  output: z.strictObject({ items: z.array(memoryListItemSchema).max(100), next_cursor: nextCursorSchema }),
});

export const memoriesAttest = defineOperation({
  name: 'memories.attest',
  summary: 'Promote the current revision to asserted, citing verified evidence, as a new revision.',
  method: 'POST',
  path: '/v1/memories/{id}/attestations',
  tool: 'svc_memories_attest',
  scope: 'svc:verify',
  capability: 'verify',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: {
    params: idParams,
    query: z.strictObject({}),
    body: z.strictObject({
      expected_generation: generationSchema,
      evidence_ids: distinctIds(1, 32),
      verification_ids: distinctIds(1, 32),
    }),
  },
  output: z.strictObject({ memory: memorySchema, revision: revisionSchema, commit: commitSchema }),
});

export const memoriesCorrect = defineOperation({
  name: 'memories.correct',
  summary: 'Supersede the current revision with a corrected one; dependents are invalidated.',
  method: 'POST',
  path: '/v1/memories/{id}/corrections',
  tool: 'svc_memories_correct',
  scope: 'svc:correct',
  capability: 'correct',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: {
    params: idParams,
    query: z.strictObject({}),
    body: z
      .strictObject({
        expected_generation: generationSchema,
        text: boundedText(1, 32768).optional(),
        valid_from: timestampSchema.optional(),
        valid_to: timestampSchema.nullable().optional(),
        evidence_ids: distinctIds(0, 32).optional(),
        support_revision_ids: distinctIds(0, 32).optional(),
        dry_run: dryRun,
      })
      .refine(
        (b) =>
          b.text !== undefined ||
          b.valid_from !== undefined ||
          b.valid_to !== undefined ||
          b.evidence_ids !== undefined ||
          b.support_revision_ids !== undefined,
        { message: 'a correction changes at least one field' },
      ),
  },
  output: z.strictObject({
    memory: memorySchema,
    revision: revisionSchema,
    invalidated_revision_ids: z.array(idSchema),
    commit: maybeCommit,
  }),
});

export const memoriesForget = defineOperation({
  name: 'memories.forget',
  summary: 'Retract a memory (known until now) or purge it (erased at every known_at, with a receipt).',
  method: 'POST',
  path: '/v1/memories/{id}/forget',
  tool: 'svc_memories_forget',
  scope: 'svc:forget',
  capability: 'forget',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: {
    params: idParams,
    query: z.strictObject({}),
    body: z.strictObject({
      mode: z.enum(['retract', 'purge']),
      expected_generation: generationSchema,
      dry_run: dryRun,
    }),
  },
  output: z.union([
    z.strictObject({ memory: memorySchema, revision: revisionSchema, commit: maybeCommit }),
    z.strictObject({ receipt: memoryDeletionReceiptSchema, commit: maybeCommit }),
  ]),
});

export const evidenceForget = defineOperation({
  name: 'evidence.forget',
  summary: 'Purge an evidence excerpt from the ledger, answering a deletion receipt.',
  method: 'POST',
  path: '/v1/evidence/{id}/forget',
  tool: 'svc_evidence_forget',
  scope: 'svc:forget',
  capability: 'forget',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: {
    params: idParams,
    query: z.strictObject({}),
    body: z.strictObject({ dry_run: dryRun }),
  },
  output: z.strictObject({ receipt: evidenceDeletionReceiptSchema, commit: maybeCommit }),
});
