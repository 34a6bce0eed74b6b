import type {
  Change,
  Credential,
  Evidence,
  EvidenceDeletionReceipt,
  Grant,
  Installation,
  MemoryDeletionReceipt,
  Namespace,
  Revision,
  Verification,
  Webhook,
  Workspace,
} from '@tms/catalog';
import {
  type Change as ChangeRow,
  type CommitStamp,
  type CredentialRow,
  type DeletionReceiptRow,
  decodePathKey,
  type EvidenceRow,
  type GrantRow,
  type InstallationRow,
  type NamespaceRow,
  type RevisionRow,
  type VerificationRow,
  type WebhookRow,
  type WorkspaceRow,
} from '@tms/ledger';

/** Row-to-resource mappers: the one place that decides what a client sees of a row. */

/** A stored grant as `namespaces.grants.put` accepted it. */
export const presentGrant = (row: GrantRow): Grant => ({
  target:
    row.targetKind === 'actor'
      ? { kind: 'actor', actor_id: row.targetId }
      : row.targetKind === 'installation'
        ? { kind: 'installation', product_installation_id: row.targetId }
        : { kind: 'credential', credential_id: row.targetId },
  capabilities: row.capabilities as Grant['capabilities'],
  inherit: row.inherit,
});

/** One SHA-256 for the ledger and the domain (the chain's digests must agree with every stored hash). */
export { sha256Hex } from '@tms/ledger';

export const presentCommit = (stamp: CommitStamp) => ({ sequence: stamp.sequence, recorded_at: stamp.recordedAt });

/** A commit of the change feed: ids and the operation's name only. */
export const presentChange = (change: ChangeRow): Change => ({
  sequence: change.sequence,
  recorded_at: change.recordedAt,
  operation: change.operation,
  actor_id: change.actorId,
  subjects: change.subjects.map((s) => ({ type: s.type, id: s.id, namespace_id: s.namespaceId })),
});

export const presentWorkspace = (row: WorkspaceRow): Workspace => ({
  id: row.id,
  name: row.name,
  created_at: row.createdAt,
});

export const presentNamespace = (row: NamespaceRow): Namespace => ({
  id: row.id,
  workspace_id: row.workspaceId,
  parent_id: row.parentId,
  name: row.name,
  display_path: decodePathKey(row.pathKey),
  created_at: row.createdAt,
  updated_at: row.updatedAt,
});

export function presentEvidence(row: EvidenceRow): Evidence {
  if (row.excerpt === null) throw new Error(`evidence ${row.id} is purged and must not be presented`);
  return {
    id: row.id,
    namespace_id: row.namespaceId,
    source_locator: row.sourceLocator,
    content_root_sha256: row.contentRootSha256,
    excerpt: row.excerpt,
    excerpt_sha256: row.excerptSha256,
    recorder_actor_id: row.recorderActorId,
    recorded_at: row.recordedAt,
  };
}

export const presentVerification = (row: VerificationRow): Verification => ({
  id: row.id,
  evidence_id: row.evidenceId,
  content_root_sha256: row.contentRootSha256,
  excerpt_sha256: row.excerptSha256,
  verdict: row.verdict,
  verifier_actor_id: row.verifierActorId,
  recorded_at: row.recordedAt,
});

/**
 * A revision as known at `knownAt`: a supersession or invalidation recorded later is not
 * shown yet (decisions §2).
 */
export function presentRevision(row: RevisionRow, knownAt: number = Number.POSITIVE_INFINITY): Revision {
  if (row.text === null) throw new Error(`revision ${row.id} is purged and must not be presented`);
  const attested = row.attestationId !== null && (row.attestationRecordedAt ?? Number.POSITIVE_INFINITY) <= knownAt;
  const invalidated = row.invalidatedAt !== null && row.invalidatedAt <= knownAt;
  return {
    id: row.id,
    memory_id: row.memoryId,
    namespace_id: row.namespaceId,
    kind: row.kind,
    generation: row.generation,
    text: row.text,
    status: row.status,
    valid_from: row.validFrom,
    valid_to: row.validTo,
    recorded_at: row.recordedAt,
    recorded_until: row.recordedUntil !== null && row.recordedUntil <= knownAt ? row.recordedUntil : null,
    evidence_ids: row.evidenceIds,
    support_revision_ids: row.supportRevisionIds,
    attestation: attested
      ? {
          id: row.attestationId as string,
          claim_text: row.text,
          claim_sha256: row.claimSha256 as string,
          evidence_ids: row.attestationEvidenceIds ?? [],
          verification_ids: row.attestationVerificationIds ?? [],
          verifier_actor_id: row.attestationVerifierActorId as string,
          recorded_at: row.attestationRecordedAt as number,
        }
      : null,
    invalidation: invalidated
      ? {
          recorded_at: row.invalidatedAt as number,
          cause_revision_id: row.invalidationCauseRevisionId as string,
          reason: row.invalidationReason as 'support_corrected' | 'support_deleted',
        }
      : null,
  };
}

export const presentInstallation = (row: InstallationRow): Installation => ({
  id: row.id,
  workspace_id: row.workspaceId,
  name: row.name,
  created_at: row.createdAt,
  revoked_at: row.revokedAt,
});

/** A credential's metadata: the secret is never part of it (only its hash is stored). */
export const presentCredential = (row: CredentialRow): Credential => ({
  id: row.id,
  workspace_id: row.workspaceId,
  kind: row.kind,
  product_installation_id: row.installationId,
  name: row.name,
  actor_id: row.actorId,
  capabilities: row.capabilities as Credential['capabilities'],
  namespace_ids: row.namespaceIds,
  expires_at: row.expiresAt,
  created_at: row.createdAt,
  revoked_at: row.revokedAt,
});

/** A kept deletion receipt as the purge answered it: ids and hashes, never the erased content. */
export function presentDeletionReceipt(row: DeletionReceiptRow): MemoryDeletionReceipt | EvidenceDeletionReceipt {
  const common = { namespace_id: row.namespaceId, mode: 'purge' as const };
  const recorded = { recorder_actor_id: row.recorderActorId, recorded_at: row.recordedAt };
  if (row.subjectKind === 'evidence') {
    return {
      id: row.id,
      evidence_id: row.subjectId,
      ...common,
      erased_excerpt_sha256: row.erasedSha256[0] as string,
      ...recorded,
    };
  }
  return {
    id: row.id,
    memory_id: row.subjectId,
    ...common,
    revision_ids: row.revisionIds,
    erased_text_sha256: row.erasedSha256,
    ...(row.erasedKeySha256 === null ? {} : { erased_key_sha256: row.erasedKeySha256 }),
    ...recorded,
  };
}

/** A webhook and its delivery state; never its secret. */
export const presentWebhook = (row: WebhookRow): Webhook => ({
  id: row.id,
  workspace_id: row.workspaceId,
  url: row.url,
  namespace_id: row.namespaceId,
  description: row.description,
  state: row.deletedAt !== null ? 'deleted' : row.disabledAt !== null ? 'disabled' : 'active',
  disabled_reason: row.disabledReason,
  state_since: row.deletedAt ?? row.disabledAt,
  delivered_sequence: row.deliveredSequence,
  last_delivered_at: row.lastDeliveredAt,
  last_error: row.lastError,
  last_error_at: row.lastErrorAt,
  failing_since: row.failingSince,
  next_attempt_at: row.nextAttemptAt,
  created_at: row.createdAt,
});
