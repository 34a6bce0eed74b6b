import { z } from 'zod';
import { defineOperation } from './operation';
import { idSchema, pageLimitSchema, sequenceSchema, timestampSchema } from './primitives';

/** What a change names (decisions §10). */
export const CHANGE_SUBJECT_TYPES = [
  'workspace',
  'namespace',
  'evidence',
  'verification',
  'memory',
  'revision',
  'grant',
  'receipt',
  'member',
  'installation',
  'credential',
  'webhook',
] as const;
export type ChangeSubjectType = (typeof CHANGE_SUBJECT_TYPES)[number];

/** The longest `wait_ms` of `changes.list`: a long poll for the next commit. */
export const MAX_CHANGES_WAIT_MS = 10_000;

export const changeSubjectSchema = z.strictObject({
  type: z.enum(CHANGE_SUBJECT_TYPES),
  id: idSchema,
  /** Null for workspace-level subjects (members, grants, installations, credentials, webhooks, the workspace). */
  namespace_id: idSchema.nullable(),
});

/** One commit as the change feed shows it: ids only, never text or excerpts. */
export const changeSchema = z.strictObject({
  sequence: sequenceSchema,
  recorded_at: timestampSchema,
  /** The catalog name of the write (`memories.create`, ...). */
  operation: z.string(),
  actor_id: idSchema,
  subjects: z.array(changeSubjectSchema),
});

export type Change = z.infer<typeof changeSchema>;
export type ChangeSubject = z.infer<typeof changeSubjectSchema>;

/** The change feed (decisions §10): the ledger's commits after a sequence, as the caller may see them. */
export const changesList = defineOperation({
  name: 'changes.list',
  summary:
    'List the commits after a sequence with the ids they wrote, as far as the caller may read them; optionally wait for the next one.',
  method: 'GET',
  path: '/v1/changes',
  tool: 'svc_changes_list',
  scope: 'svc:read',
  capability: 'read',
  idempotent: false,
  workspace: 'selected',
  maxItems: 100,
  mutates: false,
  input: {
    params: z.strictObject({}),
    query: z.strictObject({
      after: sequenceSchema.default(0),
      limit: pageLimitSchema,
      namespace_id: idSchema.optional(),
      include_descendants: z.boolean().default(true),
      wait_ms: z.int().min(0).max(MAX_CHANGES_WAIT_MS).default(0),
    }),
    body: null,
  },
  output: z.strictObject({
    changes: z.array(changeSchema).max(100),
    /** Pass as `after` next time: past every commit this page scanned, shown or not. */
    next_after: sequenceSchema,
    head_sequence: sequenceSchema,
  }),
});
