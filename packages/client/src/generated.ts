// Generated from schema/openapi.json by `pnpm generate` (scripts/generate-client.ts). Do not edit.
import type { CallOptions } from './options';

/** Every error code of the service. */
export type ErrorCode = "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable";

/** HTTP status, retryability and message of every error code (decisions.md §7). */
export const ERROR_TABLE: Record<ErrorCode, { status: number; retryable: boolean; message: string }> = {"budget_exceeded":{"message":"The request exceeds an operation limit.","retryable":false,"status":413},"conflict":{"message":"The resource changed. Reload before retrying.","retryable":false,"status":409},"enrollment_required":{"message":"Workspace creation requires pilot enrollment.","retryable":false,"status":403},"forbidden":{"message":"This operation is not permitted.","retryable":false,"status":403},"idempotency_conflict":{"message":"The idempotency key was used for a different request.","retryable":false,"status":409},"idempotency_required":{"message":"An idempotency key is required.","retryable":false,"status":400},"internal":{"message":"The request could not be completed.","retryable":false,"status":500},"invalid_input":{"message":"The request is invalid.","retryable":false,"status":400},"method_not_allowed":{"message":"This method is not supported.","retryable":false,"status":405},"not_found":{"message":"The resource was not found.","retryable":false,"status":404},"projection_pending":{"message":"The search projection is catching up.","retryable":true,"status":409},"rate_limited":{"message":"Too many requests. Retry later.","retryable":true,"status":429},"unauthenticated":{"message":"Authentication is required.","retryable":false,"status":401},"unavailable":{"message":"The service is temporarily unavailable.","retryable":true,"status":503}};

export type Actor = {
  id: string;
  issuer: string;
  subject: string;
};

export type Attestation = {
  claim_sha256: string;
  claim_text: string;
  evidence_ids: Array<string>;
  id: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  recorded_at: number;
  verification_ids: Array<string>;
  verifier_actor_id: string;
};

export type Commit = {
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  recorded_at: number;
  sequence: number;
};

export type Evidence = {
  content_root_sha256: string;
  excerpt: string;
  excerpt_sha256: string;
  id: string;
  namespace_id: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  recorded_at: number;
  recorder_actor_id: string;
  source_locator: string;
};

export type EvidenceDeletionReceipt = {
  erased_excerpt_sha256: string;
  evidence_id: string;
  id: string;
  mode: "purge";
  namespace_id: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  recorded_at: number;
  recorder_actor_id: string;
};

export type Grant = {
  capabilities: Array<"read" | "observe" | "verify" | "correct" | "forget" | "admin">;
  inherit: boolean;
  target: GrantTarget;
};

export type GrantTarget = {
  actor_id: string;
  kind: "actor";
} | {
  kind: "installation";
  product_installation_id: string;
} | {
  credential_id: string;
  kind: "credential";
};

export type Invalidation = {
  cause_revision_id: string;
  reason: "support_corrected" | "support_deleted";
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  recorded_at: number;
};

export type Member = {
  actor_id: string;
  role: "admin" | "member";
};

export type Memory = {
  generation: number;
  id: string;
  key: string | null;
  kind: "claim" | "episode" | "procedure";
  namespace_id: string;
};

export type MemoryDeletionReceipt = {
  erased_key_sha256?: string;
  erased_text_sha256: Array<string>;
  id: string;
  memory_id: string;
  mode: "purge";
  namespace_id: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  recorded_at: number;
  recorder_actor_id: string;
  revision_ids: Array<string>;
};

export type MemoryListItem = {
  memory: Memory;
  revision: Revision;
  stale: boolean;
};

export type MemoryView = {
  evidence: Array<Evidence>;
  memory: Memory;
  revision: Revision;
  stale: boolean;
  verifications: Array<Verification>;
};

export type Namespace = {
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  created_at: number;
  display_path: Array<string>;
  id: string;
  name: string;
  parent_id: string | null;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  updated_at: number;
  workspace_id: string;
};

export type Revision = {
  attestation: Attestation | null;
  evidence_ids: Array<string>;
  generation: number;
  id: string;
  invalidation: Invalidation | null;
  kind: "claim" | "episode" | "procedure";
  memory_id: string;
  namespace_id: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  recorded_at: number;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  recorded_until: number | null;
  status: "candidate" | "asserted";
  support_revision_ids: Array<string>;
  text: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  valid_from: number;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  valid_to: number | null;
};

export type Verification = {
  content_root_sha256: string;
  evidence_id: string;
  excerpt_sha256: string;
  id: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  recorded_at: number;
  verdict: "verified" | "rejected";
  verifier_actor_id: string;
};

export type Workspace = {
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  created_at: number;
  id: string;
  name: string;
};

/** Input of `changes.list`: path, query and body fields in one object. */
export type ChangesListInput = {
  /** List the changes after this sequence: the `next_after` of the previous page, 0 to start. */
  after?: number;
  /** Items per page. */
  limit?: number;
  /** Only items in this namespace. */
  namespace_id?: string;
  /** With `namespace_id`: also the namespaces below it. */
  include_descendants?: boolean;
  /** When no change follows `after` yet, wait up to this long for the next commit. */
  wait_ms?: number;
};

/** Answer of `changes.list`. */
export type ChangesListOutput = {
  changes: Array<{
    actor_id: string;
    operation: string;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    recorded_at: number;
    sequence: number;
    subjects: Array<{
      id: string;
      namespace_id: string | null;
      type: "workspace" | "namespace" | "evidence" | "verification" | "memory" | "revision" | "grant" | "receipt" | "member" | "installation" | "credential" | "webhook";
    }>;
  }>;
  head_sequence: number;
  next_after: number;
};

/** Input of `credentials.create`: path, query and body fields in one object. */
export type CredentialsCreateInput = {
  capabilities: Array<"read" | "observe" | "verify" | "correct" | "forget" | "admin">;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  expires_at?: number | null;
  kind: "installation" | "service_key";
  name: string;
  namespace_ids?: Array<string> | null;
  product_installation_id?: string;
};

/** Answer of `credentials.create`. */
export type CredentialsCreateOutput = {
  commit: Commit;
  credential: {
    actor_id: string;
    capabilities: Array<"read" | "observe" | "verify" | "correct" | "forget" | "admin">;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    created_at: number;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    expires_at: number | null;
    id: string;
    kind: "installation" | "service_key";
    name: string;
    namespace_ids: Array<string> | null;
    product_installation_id: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    revoked_at: number | null;
    workspace_id: string;
  };
  secret: string | null;
};

/** Input of `credentials.list`: path, query and body fields in one object. */
export type CredentialsListInput = {
  /** Items per page. */
  limit?: number;
  /** Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it. */
  cursor?: string;
  /** Only the credentials of this product installation. */
  product_installation_id?: string;
};

/** Answer of `credentials.list`. */
export type CredentialsListOutput = {
  credentials: Array<{
    actor_id: string;
    capabilities: Array<"read" | "observe" | "verify" | "correct" | "forget" | "admin">;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    created_at: number;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    expires_at: number | null;
    id: string;
    kind: "installation" | "service_key";
    name: string;
    namespace_ids: Array<string> | null;
    product_installation_id: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    revoked_at: number | null;
    workspace_id: string;
  }>;
  next_cursor: string | null;
};

/** Input of `credentials.revoke`: path, query and body fields in one object. */
export type CredentialsRevokeInput = {
  /** Id of the service key addressed. */
  id: string;
};

/** Answer of `credentials.revoke`. */
export type CredentialsRevokeOutput = {
  commit: Commit | null;
  credential: {
    actor_id: string;
    capabilities: Array<"read" | "observe" | "verify" | "correct" | "forget" | "admin">;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    created_at: number;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    expires_at: number | null;
    id: string;
    kind: "installation" | "service_key";
    name: string;
    namespace_ids: Array<string> | null;
    product_installation_id: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    revoked_at: number | null;
    workspace_id: string;
  };
};

/** Input of `evidence.create`: path, query and body fields in one object. */
export type EvidenceCreateInput = {
  content_root_sha256: string;
  excerpt: string;
  namespace_id: string;
  source_locator: string;
};

/** Answer of `evidence.create`. */
export type EvidenceCreateOutput = {
  commit: Commit;
  evidence: Evidence;
};

/** Input of `evidence.forget`: path, query and body fields in one object. */
export type EvidenceForgetInput = {
  /** Id of the evidence addressed. */
  id: string;
  dry_run?: boolean;
};

/** Answer of `evidence.forget`. */
export type EvidenceForgetOutput = {
  commit: Commit | null;
  receipt: EvidenceDeletionReceipt;
};

/** Input of `evidence.get`: path, query and body fields in one object. */
export type EvidenceGetInput = {
  /** Id of the evidence addressed. */
  id: string;
  /** Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it. */
  cursor?: string;
};

/** Answer of `evidence.get`. */
export type EvidenceGetOutput = {
  evidence: Evidence;
  next_cursor: string | null;
  verifications: Array<Verification>;
};

/** Input of `evidence.verify`: path, query and body fields in one object. */
export type EvidenceVerifyInput = {
  /** Id of the evidence addressed. */
  id: string;
  expected_content_root_sha256: string;
  expected_excerpt_sha256: string;
  verdict: "verified" | "rejected";
};

/** Answer of `evidence.verify`. */
export type EvidenceVerifyOutput = {
  commit: Commit;
  verification: Verification;
};

/** Input of `installations.create`: path, query and body fields in one object. */
export type InstallationsCreateInput = {
  name: string;
};

/** Answer of `installations.create`. */
export type InstallationsCreateOutput = {
  commit: Commit;
  installation: {
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    created_at: number;
    id: string;
    name: string;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    revoked_at: number | null;
    workspace_id: string;
  };
};

/** Input of `installations.list`: path, query and body fields in one object. */
export type InstallationsListInput = {
  /** Items per page. */
  limit?: number;
  /** Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it. */
  cursor?: string;
};

/** Answer of `installations.list`. */
export type InstallationsListOutput = {
  installations: Array<{
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    created_at: number;
    id: string;
    name: string;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    revoked_at: number | null;
    workspace_id: string;
  }>;
  next_cursor: string | null;
};

/** Input of `installations.revoke`: path, query and body fields in one object. */
export type InstallationsRevokeInput = {
  /** Id of the product installation addressed. */
  id: string;
};

/** Answer of `installations.revoke`. */
export type InstallationsRevokeOutput = {
  commit: Commit | null;
  installation: {
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    created_at: number;
    id: string;
    name: string;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    revoked_at: number | null;
    workspace_id: string;
  };
};

/** Input of `ledger.head`: path, query and body fields in one object. */
export type LedgerHeadInput = Record<string, never>;

/** Answer of `ledger.head`. */
export type LedgerHeadOutput = {
  head: {
    chain_hash: string;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    recorded_at: number;
    sequence: number;
    workspace_id: string;
  };
  signature: string;
};

/** Input of `ledger.proof`: path, query and body fields in one object. */
export type LedgerProofInput = {
  /** Id of the revision, evidence or verification addressed. */
  id: string;
  /** Prove against the head at this sequence (a head kept earlier); default: the latest. */
  head_sequence?: number;
};

/** Answer of `ledger.proof`. */
export type LedgerProofOutput = {
  digest_input: string;
  head: {
    head: {
      chain_hash: string;
      /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
      recorded_at: number;
      sequence: number;
      workspace_id: string;
    };
    signature: string;
  };
  links: Array<string>;
  previous_chain_hash: string;
  sequence: number;
  subject_id: string;
};

/** Input of `me.get`: path, query and body fields in one object. */
export type MeGetInput = Record<string, never>;

/** Answer of `me.get`. */
export type MeGetOutput = {
  actor: Actor;
  caller_kind: "session" | "oauth" | "installation" | "service_key";
  scopes: Array<string>;
  workspace_id: string | null;
};

/** Input of `memories.attest`: path, query and body fields in one object. */
export type MemoriesAttestInput = {
  /** Id of the memory addressed. */
  id: string;
  evidence_ids: Array<string>;
  expected_generation: number;
  verification_ids: Array<string>;
};

/** Answer of `memories.attest`. */
export type MemoriesAttestOutput = {
  commit: Commit;
  memory: Memory;
  revision: Revision;
};

/** Input of `memories.correct`: path, query and body fields in one object. */
export type MemoriesCorrectInput = {
  /** Id of the memory addressed. */
  id: string;
  dry_run?: boolean;
  evidence_ids?: Array<string>;
  expected_generation: number;
  support_revision_ids?: Array<string>;
  text?: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  valid_from?: number;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  valid_to?: number | null;
};

/** Answer of `memories.correct`. */
export type MemoriesCorrectOutput = {
  commit: Commit | null;
  invalidated_revision_ids: Array<string>;
  memory: Memory;
  revision: Revision;
};

/** Input of `memories.create`: path, query and body fields in one object. */
export type MemoriesCreateInput = {
  evidence_ids?: Array<string>;
  key?: string;
  kind: "claim" | "episode" | "procedure";
  namespace_id: string;
  support_revision_ids?: Array<string>;
  text: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  valid_from: number;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  valid_to?: number | null;
};

/** Answer of `memories.create`. */
export type MemoriesCreateOutput = {
  commit: Commit;
  memory: Memory;
  revision: Revision;
};

/** Input of `memories.forget`: path, query and body fields in one object. */
export type MemoriesForgetInput = {
  /** Id of the memory addressed. */
  id: string;
  dry_run?: boolean;
  expected_generation: number;
  mode: "retract" | "purge";
};

/** Answer of `memories.forget`. */
export type MemoriesForgetOutput = {
  commit: Commit | null;
  memory: Memory;
  revision: Revision;
} | {
  commit: Commit | null;
  receipt: MemoryDeletionReceipt;
};

/** Input of `memories.get`: path, query and body fields in one object. */
export type MemoriesGetInput = {
  /** Id of the memory addressed. */
  id: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  as_of?: number;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  known_at?: number;
  /** Whether the view carries the evidence behind the revision. */
  include_evidence?: boolean;
};

/** Answer of `memories.get`. */
export type MemoriesGetOutput = {
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  as_of: number;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  known_at: number;
  view: MemoryView;
};

/** Input of `memories.history`: path, query and body fields in one object. */
export type MemoriesHistoryInput = {
  /** Id of the memory addressed. */
  id: string;
  /** Items per page. */
  limit?: number;
  /** Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it. */
  cursor?: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  known_at?: number;
};

/** Answer of `memories.history`. */
export type MemoriesHistoryOutput = {
  next_cursor: string | null;
  revisions: Array<Revision>;
};

/** Input of `memories.list`: path, query and body fields in one object. */
export type MemoriesListInput = {
  /** Only items in this namespace. */
  namespace_id: string;
  /** Only memories of this kind. */
  kind?: "claim" | "episode" | "procedure";
  /** Only the memories holding this key (compared exactly) as seen at `as_of` and `known_at`: at most one. */
  key?: string;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  as_of?: number;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  known_at?: number;
  /** Items per page. */
  limit?: number;
  /** Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it. */
  cursor?: string;
};

/** Answer of `memories.list`. */
export type MemoriesListOutput = {
  items: Array<MemoryListItem>;
  next_cursor: string | null;
};

/** Input of `namespaces.create`: path, query and body fields in one object. */
export type NamespacesCreateInput = {
  name: string;
  parent_id: string | null;
};

/** Answer of `namespaces.create`. */
export type NamespacesCreateOutput = {
  commit: Commit;
  namespace: Namespace;
};

/** Input of `namespaces.get`: path, query and body fields in one object. */
export type NamespacesGetInput = {
  /** Id of the namespace addressed. */
  id: string;
};

/** Answer of `namespaces.get`. */
export type NamespacesGetOutput = {
  namespace: Namespace;
};

/** Input of `namespaces.grants.list`: path, query and body fields in one object. */
export type NamespacesGrantsListInput = {
  /** Id of the namespace addressed. */
  id: string;
};

/** Answer of `namespaces.grants.list`. */
export type NamespacesGrantsListOutput = {
  grants: Array<Grant>;
  namespace_id: string;
};

/** Input of `namespaces.grants.put`: path, query and body fields in one object. */
export type NamespacesGrantsPutInput = {
  /** Id of the namespace addressed. */
  id: string;
  grants: Array<{
    capabilities: Array<"read" | "observe" | "verify" | "correct" | "forget" | "admin">;
    inherit: boolean;
    target: GrantTarget;
  }>;
};

/** Answer of `namespaces.grants.put`. */
export type NamespacesGrantsPutOutput = {
  commit: Commit;
  grants: Array<Grant>;
  namespace_id: string;
};

/** Input of `namespaces.list`: path, query and body fields in one object. */
export type NamespacesListInput = {
  /** Items per page. */
  limit?: number;
  /** Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it. */
  cursor?: string;
  /** List the readable children of this namespace instead of the whole workspace. */
  parent_id?: string;
};

/** Answer of `namespaces.list`. */
export type NamespacesListOutput = {
  namespaces: Array<Namespace>;
  next_cursor: string | null;
};

/** Input of `namespaces.update`: path, query and body fields in one object. */
export type NamespacesUpdateInput = {
  /** Id of the namespace addressed. */
  id: string;
  name: string;
};

/** Answer of `namespaces.update`. */
export type NamespacesUpdateOutput = {
  commit: Commit;
  namespace: Namespace;
};

/** Input of `recall`: path, query and body fields in one object. */
export type RecallInput = {
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  as_of?: number;
  budget?: {
    max_context_chars?: number;
    max_items?: number;
  };
  include_descendants?: boolean;
  kinds?: Array<"claim" | "episode" | "procedure">;
  /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
  known_at?: number;
  min_sequence?: number;
  mode?: "hybrid" | "lexical" | "semantic";
  namespace_ids: Array<string>;
  on_pending?: "report" | "error";
  query: string;
  wait_ms?: number;
};

/** Answer of `recall`. */
export type RecallOutput = {
  context_chars: number;
  indexed_sequence: number;
  items: Array<{
    memory: Memory;
    ranks: {
      lexical: number | null;
      semantic: number | null;
    };
    revision: Revision;
    score: number;
    stale: boolean;
  }>;
  retrieval: {
    lexical: "ok" | "off" | "unavailable";
    mode: "hybrid" | "lexical" | "semantic";
    semantic: "ok" | "off" | "unavailable";
  };
  status: "complete" | "partial" | "degraded" | "pending";
};

/** Input of `webhooks.create`: path, query and body fields in one object. */
export type WebhooksCreateInput = {
  description?: string;
  namespace_id?: string;
  url: string;
};

/** Answer of `webhooks.create`. */
export type WebhooksCreateOutput = {
  commit: Commit;
  secret: string | null;
  webhook: {
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    created_at: number;
    delivered_sequence: number;
    description: string | null;
    disabled_reason: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    failing_since: number | null;
    id: string;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    last_delivered_at: number | null;
    last_error: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    last_error_at: number | null;
    namespace_id: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    next_attempt_at: number | null;
    state: "active" | "disabled" | "deleted";
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    state_since: number | null;
    url: string;
    workspace_id: string;
  };
};

/** Input of `webhooks.delete`: path, query and body fields in one object. */
export type WebhooksDeleteInput = {
  /** Id of the webhook addressed. */
  id: string;
};

/** Answer of `webhooks.delete`. */
export type WebhooksDeleteOutput = {
  commit: Commit | null;
  webhook: {
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    created_at: number;
    delivered_sequence: number;
    description: string | null;
    disabled_reason: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    failing_since: number | null;
    id: string;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    last_delivered_at: number | null;
    last_error: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    last_error_at: number | null;
    namespace_id: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    next_attempt_at: number | null;
    state: "active" | "disabled" | "deleted";
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    state_since: number | null;
    url: string;
    workspace_id: string;
  };
};

/** Input of `webhooks.list`: path, query and body fields in one object. */
export type WebhooksListInput = {
  /** Items per page. */
  limit?: number;
  /** Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it. */
  cursor?: string;
};

/** Answer of `webhooks.list`. */
export type WebhooksListOutput = {
  next_cursor: string | null;
  webhooks: Array<{
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    created_at: number;
    delivered_sequence: number;
    description: string | null;
    disabled_reason: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    failing_since: number | null;
    id: string;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    last_delivered_at: number | null;
    last_error: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    last_error_at: number | null;
    namespace_id: string | null;
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    next_attempt_at: number | null;
    state: "active" | "disabled" | "deleted";
    /** UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999 */
    state_since: number | null;
    url: string;
    workspace_id: string;
  }>;
};

/** Input of `workspaces.create`: path, query and body fields in one object. */
export type WorkspacesCreateInput = {
  name: string;
};

/** Answer of `workspaces.create`. */
export type WorkspacesCreateOutput = {
  workspace: Workspace;
};

/** Input of `workspaces.list`: path, query and body fields in one object. */
export type WorkspacesListInput = {
  /** Items per page. */
  limit?: number;
  /** Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it. */
  cursor?: string;
};

/** Answer of `workspaces.list`. */
export type WorkspacesListOutput = {
  enrollment: {
    can_create_workspace: boolean;
    policy: "admin_managed_pilot";
  };
  next_cursor: string | null;
  workspaces: Array<Workspace>;
};

/** Input of `workspaces.members.put`: path, query and body fields in one object. */
export type WorkspacesMembersPutInput = {
  /** Id of the workspace addressed. */
  id: string;
  members: Array<Member>;
};

/** Answer of `workspaces.members.put`. */
export type WorkspacesMembersPutOutput = {
  commit: Commit;
  members: Array<Member>;
  workspace_id: string;
};

/** Input, output and error codes of each operation, by operation name. */
export interface Operations {
  "changes.list": { input: ChangesListInput; output: ChangesListOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "credentials.create": { input: CredentialsCreateInput; output: CredentialsCreateOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "credentials.list": { input: CredentialsListInput; output: CredentialsListOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "credentials.revoke": { input: CredentialsRevokeInput; output: CredentialsRevokeOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "evidence.create": { input: EvidenceCreateInput; output: EvidenceCreateOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "evidence.forget": { input: EvidenceForgetInput; output: EvidenceForgetOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "evidence.get": { input: EvidenceGetInput; output: EvidenceGetOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "evidence.verify": { input: EvidenceVerifyInput; output: EvidenceVerifyOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "installations.create": { input: InstallationsCreateInput; output: InstallationsCreateOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "installations.list": { input: InstallationsListInput; output: InstallationsListOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "installations.revoke": { input: InstallationsRevokeInput; output: InstallationsRevokeOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "ledger.head": { input: LedgerHeadInput; output: LedgerHeadOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "ledger.proof": { input: LedgerProofInput; output: LedgerProofOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "me.get": { input: MeGetInput; output: MeGetOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "memories.attest": { input: MemoriesAttestInput; output: MemoriesAttestOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "memories.correct": { input: MemoriesCorrectInput; output: MemoriesCorrectOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "memories.create": { input: MemoriesCreateInput; output: MemoriesCreateOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "memories.forget": { input: MemoriesForgetInput; output: MemoriesForgetOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "memories.get": { input: MemoriesGetInput; output: MemoriesGetOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "memories.history": { input: MemoriesHistoryInput; output: MemoriesHistoryOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "memories.list": { input: MemoriesListInput; output: MemoriesListOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "namespaces.create": { input: NamespacesCreateInput; output: NamespacesCreateOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "namespaces.get": { input: NamespacesGetInput; output: NamespacesGetOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "namespaces.grants.list": { input: NamespacesGrantsListInput; output: NamespacesGrantsListOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "namespaces.grants.put": { input: NamespacesGrantsPutInput; output: NamespacesGrantsPutOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "namespaces.list": { input: NamespacesListInput; output: NamespacesListOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "namespaces.update": { input: NamespacesUpdateInput; output: NamespacesUpdateOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "recall": { input: RecallInput; output: RecallOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "webhooks.create": { input: WebhooksCreateInput; output: WebhooksCreateOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "webhooks.delete": { input: WebhooksDeleteInput; output: WebhooksDeleteOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "webhooks.list": { input: WebhooksListInput; output: WebhooksListOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "workspaces.create": { input: WorkspacesCreateInput; output: WorkspacesCreateOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
  "workspaces.list": { input: WorkspacesListInput; output: WorkspacesListOutput; errors: "budget_exceeded" | "enrollment_required" | "forbidden" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "rate_limited" | "unauthenticated" | "unavailable" };
  "workspaces.members.put": { input: WorkspacesMembersPutInput; output: WorkspacesMembersPutOutput; errors: "budget_exceeded" | "conflict" | "enrollment_required" | "forbidden" | "idempotency_conflict" | "idempotency_required" | "internal" | "invalid_input" | "method_not_allowed" | "not_found" | "projection_pending" | "rate_limited" | "unauthenticated" | "unavailable" };
}

export type OperationName = keyof Operations;

/** How to call each operation: the runtime dispatches on this table alone. */
export const OPERATION_TABLE = {
  "changes.list": {"method":"GET","path":"/v1/changes","pathParams":[],"query":["after","limit","namespace_id","include_descendants","wait_ms"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":{"param":"after","next":"next_after","items":"changes"}},
  "credentials.create": {"method":"POST","path":"/v1/credentials","pathParams":[],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "credentials.list": {"method":"GET","path":"/v1/credentials","pathParams":[],"query":["limit","cursor","product_installation_id"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":{"param":"cursor","next":"next_cursor","items":"credentials"}},
  "credentials.revoke": {"method":"POST","path":"/v1/credentials/{id}/revoke","pathParams":["id"],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "evidence.create": {"method":"POST","path":"/v1/evidence","pathParams":[],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "evidence.forget": {"method":"POST","path":"/v1/evidence/{id}/forget","pathParams":["id"],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "evidence.get": {"method":"GET","path":"/v1/evidence/{id}","pathParams":["id"],"query":["cursor"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":{"param":"cursor","next":"next_cursor","items":"verifications"}},
  "evidence.verify": {"method":"POST","path":"/v1/evidence/{id}/verifications","pathParams":["id"],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "installations.create": {"method":"POST","path":"/v1/installations","pathParams":[],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "installations.list": {"method":"GET","path":"/v1/installations","pathParams":[],"query":["limit","cursor"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":{"param":"cursor","next":"next_cursor","items":"installations"}},
  "installations.revoke": {"method":"POST","path":"/v1/installations/{id}/revoke","pathParams":["id"],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "ledger.head": {"method":"GET","path":"/v1/ledger/head","pathParams":[],"query":[],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":null},
  "ledger.proof": {"method":"GET","path":"/v1/ledger/proofs/{id}","pathParams":["id"],"query":["head_sequence"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":null},
  "me.get": {"method":"GET","path":"/v1/me","pathParams":[],"query":[],"body":false,"idempotent":false,"mutates":false,"workspace":false,"pager":null},
  "memories.attest": {"method":"POST","path":"/v1/memories/{id}/attestations","pathParams":["id"],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "memories.correct": {"method":"POST","path":"/v1/memories/{id}/corrections","pathParams":["id"],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "memories.create": {"method":"POST","path":"/v1/memories","pathParams":[],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "memories.forget": {"method":"POST","path":"/v1/memories/{id}/forget","pathParams":["id"],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "memories.get": {"method":"GET","path":"/v1/memories/{id}","pathParams":["id"],"query":["as_of","known_at","include_evidence"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":null},
  "memories.history": {"method":"GET","path":"/v1/memories/{id}/history","pathParams":["id"],"query":["limit","cursor","known_at"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":{"param":"cursor","next":"next_cursor","items":"revisions"}},
  "memories.list": {"method":"GET","path":"/v1/memories","pathParams":[],"query":["namespace_id","kind","key","as_of","known_at","limit","cursor"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":{"param":"cursor","next":"next_cursor","items":"items"}},
  "namespaces.create": {"method":"POST","path":"/v1/namespaces","pathParams":[],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "namespaces.get": {"method":"GET","path":"/v1/namespaces/{id}","pathParams":["id"],"query":[],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":null},
  "namespaces.grants.list": {"method":"GET","path":"/v1/namespaces/{id}/grants","pathParams":["id"],"query":[],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":null},
  "namespaces.grants.put": {"method":"PUT","path":"/v1/namespaces/{id}/grants","pathParams":["id"],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "namespaces.list": {"method":"GET","path":"/v1/namespaces","pathParams":[],"query":["limit","cursor","parent_id"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":{"param":"cursor","next":"next_cursor","items":"namespaces"}},
  "namespaces.update": {"method":"PATCH","path":"/v1/namespaces/{id}","pathParams":["id"],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "recall": {"method":"POST","path":"/v1/recall","pathParams":[],"query":[],"body":true,"idempotent":false,"mutates":false,"workspace":true,"pager":null},
  "webhooks.create": {"method":"POST","path":"/v1/webhooks","pathParams":[],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "webhooks.delete": {"method":"DELETE","path":"/v1/webhooks/{id}","pathParams":["id"],"query":[],"body":false,"idempotent":true,"mutates":true,"workspace":true,"pager":null},
  "webhooks.list": {"method":"GET","path":"/v1/webhooks","pathParams":[],"query":["limit","cursor"],"body":false,"idempotent":false,"mutates":false,"workspace":true,"pager":{"param":"cursor","next":"next_cursor","items":"webhooks"}},
  "workspaces.create": {"method":"POST","path":"/v1/workspaces","pathParams":[],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":false,"pager":null},
  "workspaces.list": {"method":"GET","path":"/v1/workspaces","pathParams":[],"query":["limit","cursor"],"body":false,"idempotent":false,"mutates":false,"workspace":false,"pager":{"param":"cursor","next":"next_cursor","items":"workspaces"}},
  "workspaces.members.put": {"method":"PUT","path":"/v1/workspaces/{id}/members","pathParams":["id"],"query":[],"body":true,"idempotent":true,"mutates":true,"workspace":false,"pager":null},
} as const;

/** One method per operation, nested by the dots of its name. */
export interface ClientMethods {
  changes: {
    /** GET /v1/changes: List the commits after a sequence with the ids they wrote, as far as the caller may read them; optionally wait for the next one. */
    list(input?: ChangesListInput, options?: CallOptions): Promise<ChangesListOutput>;
  };
  credentials: {
    /** POST /v1/credentials: Issue an installation credential or a service key; the answer shows its secret this once (workspace admins only). */
    create(input: CredentialsCreateInput, options?: CallOptions): Promise<CredentialsCreateOutput>;
    /** GET /v1/credentials: List installation credentials and service keys of the workspace (never their secrets). */
    list(input?: CredentialsListInput, options?: CallOptions): Promise<CredentialsListOutput>;
    /** POST /v1/credentials/{id}/revoke: Revoke an installation credential or a service key, effective on the next request. */
    revoke(input: CredentialsRevokeInput, options?: CallOptions): Promise<CredentialsRevokeOutput>;
  };
  evidence: {
    /** POST /v1/evidence: Record an exact source excerpt; deduplicated per namespace by its SHA-256. */
    create(input: EvidenceCreateInput, options?: CallOptions): Promise<EvidenceCreateOutput>;
    /** POST /v1/evidence/{id}/forget: Purge an evidence excerpt from the ledger, answering a deletion receipt. */
    forget(input: EvidenceForgetInput, options?: CallOptions): Promise<EvidenceForgetOutput>;
    /** GET /v1/evidence/{id}: Read evidence with a page of its verifications (oldest first, 32 a page). */
    get(input: EvidenceGetInput, options?: CallOptions): Promise<EvidenceGetOutput>;
    /** POST /v1/evidence/{id}/verifications: Record a verdict on evidence after comparing both expected hashes with the ledger. */
    verify(input: EvidenceVerifyInput, options?: CallOptions): Promise<EvidenceVerifyOutput>;
  };
  installations: {
    /** POST /v1/installations: Install a product into the workspace; grants may then target it (workspace admins only). */
    create(input: InstallationsCreateInput, options?: CallOptions): Promise<InstallationsCreateOutput>;
    /** GET /v1/installations: List the product installations of the workspace, oldest first (workspace admins only). */
    list(input?: InstallationsListInput, options?: CallOptions): Promise<InstallationsListOutput>;
    /** POST /v1/installations/{id}/revoke: Revoke an installation and every credential issued for it, effective on the next request. */
    revoke(input: InstallationsRevokeInput, options?: CallOptions): Promise<InstallationsRevokeOutput>;
  };
  ledger: {
    /** GET /v1/ledger/head: The workspace's latest sequence and chain hash, signed by the service's ledger key, for a reader to keep. */
    head(input?: LedgerHeadInput, options?: CallOptions): Promise<LedgerHeadOutput>;
    /** GET /v1/ledger/proofs/{id}: Prove a revision, evidence or verification: the commit that wrote it, its digest input (hashes only) and the chain from there to a signed head. */
    proof(input: LedgerProofInput, options?: CallOptions): Promise<LedgerProofOutput>;
  };
  me: {
    /** GET /v1/me: Who the server resolved the caller to: actor, caller kind, workspace and scopes. */
    get(input?: MeGetInput, options?: CallOptions): Promise<MeGetOutput>;
  };
  memories: {
    /** POST /v1/memories/{id}/attestations: Promote the current revision to asserted, citing verified evidence, as a new revision. */
    attest(input: MemoriesAttestInput, options?: CallOptions): Promise<MemoriesAttestOutput>;
    /** POST /v1/memories/{id}/corrections: Supersede the current revision with a corrected one; dependents are invalidated. */
    correct(input: MemoriesCorrectInput, options?: CallOptions): Promise<MemoriesCorrectOutput>;
    /** POST /v1/memories: Create a memory with its first revision (asserted when verified evidence backs it). */
    create(input: MemoriesCreateInput, options?: CallOptions): Promise<MemoriesCreateOutput>;
    /** POST /v1/memories/{id}/forget: Retract a memory (known until now) or purge it (erased at every known_at, with a receipt). */
    forget(input: MemoriesForgetInput, options?: CallOptions): Promise<MemoriesForgetOutput>;
    /** GET /v1/memories/{id}: Read a memory as it held at as_of and as the service knew it at known_at. */
    get(input: MemoriesGetInput, options?: CallOptions): Promise<MemoriesGetOutput>;
    /** GET /v1/memories/{id}/history: List the revisions of a memory, newest generation first, as known at known_at. */
    history(input: MemoriesHistoryInput, options?: CallOptions): Promise<MemoriesHistoryOutput>;
    /** GET /v1/memories: List the memories of a namespace current at known_at and valid at as_of (optionally the one holding a key). */
    list(input: MemoriesListInput, options?: CallOptions): Promise<MemoriesListOutput>;
  };
  namespaces: {
    /** POST /v1/namespaces: Create a namespace at the root (workspace admins) or under a parent (admin on the parent). */
    create(input: NamespacesCreateInput, options?: CallOptions): Promise<NamespacesCreateOutput>;
    /** GET /v1/namespaces/{id}: Read one namespace. */
    get(input: NamespacesGetInput, options?: CallOptions): Promise<NamespacesGetOutput>;
    grants: {
      /** GET /v1/namespaces/{id}/grants: Read the grants on a namespace, in their stored order (admins of the namespace only). */
      list(input: NamespacesGrantsListInput, options?: CallOptions): Promise<NamespacesGrantsListOutput>;
      /** PUT /v1/namespaces/{id}/grants: Replace the grants on a namespace; omitted grants are revoked at once. */
      put(input: NamespacesGrantsPutInput, options?: CallOptions): Promise<NamespacesGrantsPutOutput>;
    };
    /** GET /v1/namespaces: List readable namespaces by display path, or the readable children of parent_id. */
    list(input?: NamespacesListInput, options?: CallOptions): Promise<NamespacesListOutput>;
    /** PATCH /v1/namespaces/{id}: Rename a namespace. */
    update(input: NamespacesUpdateInput, options?: CallOptions): Promise<NamespacesUpdateOutput>;
  };
  /** POST /v1/recall: Retrieve memories relevant to a query, with an honest status of how complete the answer is. */
  recall(input: RecallInput, options?: CallOptions): Promise<RecallOutput>;
  webhooks: {
    /** POST /v1/webhooks: Register an endpoint for signed deliveries of the workspace changes; the answer shows its signing secret this once (workspace admins only). */
    create(input: WebhooksCreateInput, options?: CallOptions): Promise<WebhooksCreateOutput>;
    /** DELETE /v1/webhooks/{id}: Delete a webhook: no delivery starts after this answer. Deleting it again answers `commit: null`. */
    delete(input: WebhooksDeleteInput, options?: CallOptions): Promise<WebhooksDeleteOutput>;
    /** GET /v1/webhooks: List the webhooks of the workspace with their delivery state, oldest first (workspace admins only). */
    list(input?: WebhooksListInput, options?: CallOptions): Promise<WebhooksListOutput>;
  };
  workspaces: {
    /** POST /v1/workspaces: Create a workspace; the enrolled human caller becomes its first admin. */
    create(input: WorkspacesCreateInput, options?: CallOptions): Promise<WorkspacesCreateOutput>;
    /** GET /v1/workspaces: List the workspaces the caller belongs to, and whether it may create one. */
    list(input?: WorkspacesListInput, options?: CallOptions): Promise<WorkspacesListOutput>;
    members: {
      /** PUT /v1/workspaces/{id}/members: Replace the member list of a workspace (workspace admins only). */
      put(input: WorkspacesMembersPutInput, options?: CallOptions): Promise<WorkspacesMembersPutOutput>;
    };
  };
}
