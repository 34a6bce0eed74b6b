import { z } from 'zod';
import {
  boundedText,
  capabilitySchema,
  cursorSchema,
  generationSchema,
  idSchema,
  memoryKeySchema,
  memoryKindSchema,
  nameSchema,
  sha256Schema,
  timestampSchema,
} from './primitives';

export const workspaceSchema = z.strictObject({
  id: idSchema,
  name: nameSchema,
  created_at: timestampSchema,
});

export const namespaceSchema = z.strictObject({
  id: idSchema,
  workspace_id: idSchema,
  parent_id: idSchema.nullable(),
  name: nameSchema,
  display_path: z.array(nameSchema).min(1).max(32),
  created_at: timestampSchema,
  updated_at: timestampSchema,
});

export const grantTargetSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('actor'), actor_id: idSchema }),
  z.strictObject({ kind: z.literal('installation'), product_installation_id: idSchema }),
  z.strictObject({ kind: z.literal('credential'), credential_id: idSchema }),
]);

export const grantSchema = z.strictObject({
  target: grantTargetSchema,
  capabilities: z.array(capabilitySchema).max(6),
  inherit: z.boolean(),
});

export const evidenceSchema = z.strictObject({
  id: idSchema,
  namespace_id: idSchema,
  source_locator: boundedText(1, 2048),
  content_root_sha256: sha256Schema,
  excerpt: boundedText(1, 65536),
  excerpt_sha256: sha256Schema,
  recorder_actor_id: idSchema,
  recorded_at: timestampSchema,
});

export const verdictSchema = z.enum(['verified', 'rejected']);

export const verificationSchema = z.strictObject({
  id: idSchema,
  evidence_id: idSchema,
  content_root_sha256: sha256Schema,
  excerpt_sha256: sha256Schema,
  verdict: verdictSchema,
  verifier_actor_id: idSchema,
  recorded_at: timestampSchema,
});

export const memorySchema = z.strictObject({
  id: idSchema,
  namespace_id: idSchema,
  kind: memoryKindSchema,
  generation: generationSchema,
  /** The caller's own name for the memory (decisions §12); null when it has none. */
  key: memoryKeySchema.nullable(),
});

export const attestationSchema = z.strictObject({
  id: idSchema,
  claim_text: boundedText(1, 32768),
  claim_sha256: sha256Schema,
  evidence_ids: z.array(idSchema).min(1).max(32),
  verification_ids: z.array(idSchema).min(1).max(32),
  verifier_actor_id: idSchema,
  recorded_at: timestampSchema,
});

export const invalidationSchema = z.strictObject({
  recorded_at: timestampSchema,
  cause_revision_id: idSchema,
  reason: z.enum(['support_corrected', 'support_deleted']),
});

export const revisionSchema = z.strictObject({
  id: idSchema,
  memory_id: idSchema,
  namespace_id: idSchema,
  kind: memoryKindSchema,
  generation: generationSchema,
  text: boundedText(1, 32768),
  status: z.enum(['candidate', 'asserted']),
  valid_from: timestampSchema,
  valid_to: timestampSchema.nullable(),
  recorded_at: timestampSchema,
  recorded_until: timestampSchema.nullable(),
  evidence_ids: z.array(idSchema).max(32),
  support_revision_ids: z.array(idSchema).max(32),
  attestation: attestationSchema.nullable(),
  invalidation: invalidationSchema.nullable(),
});

export const memoryViewSchema = z.strictObject({
  memory: memorySchema,
  revision: revisionSchema,
  evidence: z.array(evidenceSchema).max(32),
  verifications: z.array(verificationSchema).max(32),
  stale: z.boolean(),
});

export const memberRoleSchema = z.enum(['admin', 'member']);

export const memberSchema = z.strictObject({
  actor_id: idSchema,
  role: memberRoleSchema,
});

export const actorSchema = z.strictObject({
  id: idSchema,
  issuer: z.string().min(1),
  subject: z.string().min(1),
});

export const callerKindSchema = z.enum(['session', 'oauth', 'installation', 'service_key']);

export const nextCursorSchema = cursorSchema.nullable();

export type Workspace = z.infer<typeof workspaceSchema>;
export type Namespace = z.infer<typeof namespaceSchema>;
export type Grant = z.infer<typeof grantSchema>;
export type GrantTarget = z.infer<typeof grantTargetSchema>;
export type Evidence = z.infer<typeof evidenceSchema>;
export type Verification = z.infer<typeof verificationSchema>;
export type Memory = z.infer<typeof memorySchema>;
export type Attestation = z.infer<typeof attestationSchema>;
export type Invalidation = z.infer<typeof invalidationSchema>;
export type Revision = z.infer<typeof revisionSchema>;
export type MemoryView = z.infer<typeof memoryViewSchema>;
export type Member = z.infer<typeof memberSchema>;
export type CallerKind = z.infer<typeof callerKindSchema>;

/** Proof of a purge: what was erased, by hash only (decisions §3). */
export const memoryDeletionReceiptSchema = z.strictObject({
  id: idSchema,
  memory_id: idSchema,
  namespace_id: idSchema,
  mode: z.literal('purge'),
  revision_ids: z.array(idSchema).min(1),
  erased_text_sha256: z.array(sha256Schema).min(1),
  /** The SHA-256 of the erased key; present only when the memory held one (decisions §12). */
  erased_key_sha256: sha256Schema.optional(),
  recorder_actor_id: idSchema,
  recorded_at: timestampSchema,
});

export const evidenceDeletionReceiptSchema = z.strictObject({
  id: idSchema,
  evidence_id: idSchema,
  namespace_id: idSchema,
  mode: z.literal('purge'),
  erased_excerpt_sha256: sha256Schema,
  recorder_actor_id: idSchema,
  recorded_at: timestampSchema,
});

/** A memory as listed or recalled: the identity, its revision at (as_of, known_at), staleness. */
export const memoryListItemSchema = z.strictObject({
  memory: memorySchema,
  revision: revisionSchema,
  stale: z.boolean(),
});

export type MemoryDeletionReceipt = z.infer<typeof memoryDeletionReceiptSchema>;
export type EvidenceDeletionReceipt = z.infer<typeof evidenceDeletionReceiptSchema>;
