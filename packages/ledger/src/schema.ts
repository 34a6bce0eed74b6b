/**
 * The ledger tables. Every table but the directory ones (actors, enrollments, workspaces,
 * service_settings and the `*_directory*` tables) carries `workspace_id` first in each primary and unique key, so the
 * ledger can be distributed by workspace (decisions §1).
 *
 * Strings that clients send are stored as UTF-8 bytes (`utf8` columns) so that every
 * well-formed string, U+0000 included, round-trips exactly. Times are Unix seconds in
 * double precision.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  doublePrecision,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** A client string kept as its exact UTF-8 bytes. */
export const utf8 = customType<{ data: string; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  toDriver: (value) => Buffer.from(value, 'utf8'),
  fromDriver: (value) => Buffer.from(value).toString('utf8'),
});

/** Raw bytes (order-preserving sort keys). */
export const bytes = customType<{ data: Buffer; driverData: Uint8Array }>({
  dataType: () => 'bytea',
  toDriver: (value) => value,
  fromDriver: (value) => Buffer.from(value),
});

const seconds = (name: string) => doublePrecision(name);

// ---- directory -------------------------------------------------------------------------

export const actors = pgTable(
  'actors',
  {
    id: text('id').primaryKey(),
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    createdAt: seconds('created_at').notNull(),
  },
  (t) => [uniqueIndex('actors_issuer_subject').on(t.issuer, t.subject)],
);

export const enrollments = pgTable(
  'enrollments',
  {
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    enrolledAt: seconds('enrolled_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.issuer, t.subject] })],
);

export const workspaces = pgTable('workspaces', {
  id: text('id').primaryKey(),
  name: utf8('name').notNull(),
  createdAt: seconds('created_at').notNull(),
  createdBy: text('created_by').notNull(),
});

/** Process-independent secrets (the cursor signing key), created on first use. */
export const serviceSettings = pgTable('service_settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
});

/**
 * Which workspace holds each credential: a secret names its credential id, and this directory
 * (a reference table on a cluster, docs/scale-out.md) turns the id into the workspace whose
 * shard holds the row, so authenticating reads one shard.
 */
export const credentialDirectory = pgTable('credential_directory', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull(),
});

/** The workspaces each actor is a member of (a copy of `memberships` by actor, for workspaces.list). */
export const membershipDirectory = pgTable(
  'membership_directory',
  {
    actorId: text('actor_id').notNull(),
    workspaceId: text('workspace_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.actorId, t.workspaceId] })],
);

/** Stored results of directory writes (workspaces.create), which have no workspace yet (decisions §8). */
export const directoryIdempotencyRecords = pgTable(
  'directory_idempotency_records',
  {
    principal: text('principal').notNull(),
    key: text('key').notNull(),
    operation: text('operation').notNull(),
    fingerprint: text('fingerprint').notNull(),
    status: integer('status').notNull(),
    body: text('body').notNull(),
    createdAt: seconds('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.principal, t.key] })],
);

/**
 * Where each idempotency key of a principal not bound to one workspace (a person, an OAuth
 * client) was first used, with that request's fingerprint: decisions §8 scopes a key to the
 * principal in every workspace, and this copy answers "used elsewhere" without reading every
 * workspace's records. The stored answer itself stays with the workspace's rows.
 */
export const idempotencyKeyDirectory = pgTable(
  'idempotency_key_directory',
  {
    principal: text('principal').notNull(),
    key: text('key').notNull(),
    workspaceId: text('workspace_id').notNull(),
    fingerprint: text('fingerprint').notNull(),
    createdAt: seconds('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.principal, t.key] })],
);

// ---- per workspace ---------------------------------------------------------------------

/**
 * The last commit of a workspace; locked late in every write transaction. The chain's head hash
 * is that commit's `chain_hash` (kept once, on the commit row).
 */
export const workspaceHeads = pgTable('workspace_heads', {
  workspaceId: text('workspace_id').primaryKey(),
  sequence: bigint('sequence', { mode: 'number' }).notNull(),
  recordedAt: seconds('recorded_at').notNull(),
});

export const commits = pgTable(
  'commits',
  {
    workspaceId: text('workspace_id').notNull(),
    sequence: bigint('sequence', { mode: 'number' }).notNull(),
    recordedAt: seconds('recorded_at').notNull(),
    operation: text('operation').notNull(),
    actorId: text('actor_id').notNull(),
    /** Ids of the ledger rows this commit wrote (namespaces, evidence, revisions, ...). */
    subjectIds: text('subject_ids').array().notNull(),
    /** SHA-256(previous chain_hash ‖ digest of this commit), hex (docs/ledger-proofs.md); null until chained. */
    chainHash: text('chain_hash'),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.sequence] })],
);

export const memberships = pgTable(
  'memberships',
  {
    workspaceId: text('workspace_id').notNull(),
    actorId: text('actor_id').notNull(),
    role: text('role', { enum: ['admin', 'member'] }).notNull(),
    position: integer('position').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.actorId] })],
);

export const namespaces = pgTable(
  'namespaces',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    parentId: text('parent_id'),
    name: utf8('name').notNull(),
    /** Ids from the root down to the parent (empty for a root). */
    ancestorIds: text('ancestor_ids').array().notNull(),
    /** Order-preserving encoding of the display path, for listing in display-path order. */
    pathKey: bytes('path_key').notNull(),
    createdAt: seconds('created_at').notNull(),
    updatedAt: seconds('updated_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('namespaces_path').on(t.workspaceId, t.pathKey, t.id),
    index('namespaces_parent').on(t.workspaceId, t.parentId),
  ],
);

export const grants = pgTable(
  'grants',
  {
    workspaceId: text('workspace_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    targetKind: text('target_kind', { enum: ['actor', 'installation', 'credential'] }).notNull(),
    targetId: text('target_id').notNull(),
    capabilities: text('capabilities').array().notNull(),
    inherit: boolean('inherit').notNull(),
    position: integer('position').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.namespaceId, t.targetKind, t.targetId] })],
);

export const evidence = pgTable(
  'evidence',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    sourceLocator: utf8('source_locator').notNull(),
    contentRootSha256: text('content_root_sha256').notNull(),
    /** Null once purged. */
    excerpt: utf8('excerpt'),
    excerptSha256: text('excerpt_sha256').notNull(),
    recorderActorId: text('recorder_actor_id').notNull(),
    recordedAt: seconds('recorded_at').notNull(),
    commitSequence: bigint('commit_sequence', { mode: 'number' }).notNull(),
    purgedAt: seconds('purged_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('evidence_dedup').on(t.workspaceId, t.namespaceId, t.excerptSha256).where(sql`purged_at is null`),
  ],
);

export const verifications = pgTable(
  'verifications',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    evidenceId: text('evidence_id').notNull(),
    contentRootSha256: text('content_root_sha256').notNull(),
    excerptSha256: text('excerpt_sha256').notNull(),
    verdict: text('verdict', { enum: ['verified', 'rejected'] }).notNull(),
    verifierActorId: text('verifier_actor_id').notNull(),
    recordedAt: seconds('recorded_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('verifications_evidence').on(t.workspaceId, t.evidenceId, t.recordedAt),
  ],
);

export const memories = pgTable(
  'memories',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    kind: text('kind', { enum: ['claim', 'episode', 'procedure'] }).notNull(),
    /** Generation of the newest revision. */
    generation: bigint('generation', { mode: 'number' }).notNull(),
    createdAt: seconds('created_at').notNull(),
    purgedAt: seconds('purged_at'),
    /** The caller's own name for the memory (decisions §12); null when none, and once purged. */
    key: utf8('key'),
    /** SHA-256 of the key's UTF-8 bytes, kept after a purge (the chain covers it); null when none. */
    keySha256: text('key_sha256'),
    /** When a retraction ended the memory (it then no longer holds its key); null while it is current. */
    retractedAt: seconds('retracted_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('memories_namespace').on(t.workspaceId, t.namespaceId),
    // At most one memory neither retracted nor purged holds a key in a namespace (a purge nulls the key).
    uniqueIndex('memories_key_held')
      .on(t.workspaceId, t.namespaceId, t.key)
      .where(sql`key is not null and retracted_at is null`),
    // Every holder a key ever had, for memories.list by key at an earlier known_at.
    index('memories_key').on(t.workspaceId, t.namespaceId, t.key).where(sql`key is not null`),
  ],
);

export const revisions = pgTable(
  'revisions',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    memoryId: text('memory_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    kind: text('kind', { enum: ['claim', 'episode', 'procedure'] }).notNull(),
    generation: bigint('generation', { mode: 'number' }).notNull(),
    /** Null once purged. */
    text: utf8('text'),
    status: text('status', { enum: ['candidate', 'asserted'] }).notNull(),
    validFrom: seconds('valid_from').notNull(),
    validTo: seconds('valid_to'),
    recordedAt: seconds('recorded_at').notNull(),
    recordedUntil: seconds('recorded_until'),
    commitSequence: bigint('commit_sequence', { mode: 'number' }).notNull(),
    evidenceIds: text('evidence_ids').array().notNull(),
    supportRevisionIds: text('support_revision_ids').array().notNull(),
    // Attestation: the claim text is the revision text, so only its hash is kept here.
    attestationId: text('attestation_id'),
    claimSha256: text('claim_sha256'),
    attestationEvidenceIds: text('attestation_evidence_ids').array(),
    attestationVerificationIds: text('attestation_verification_ids').array(),
    attestationVerifierActorId: text('attestation_verifier_actor_id'),
    attestationRecordedAt: seconds('attestation_recorded_at'),
    // Invalidation
    invalidatedAt: seconds('invalidated_at'),
    invalidationCauseRevisionId: text('invalidation_cause_revision_id'),
    invalidationReason: text('invalidation_reason', { enum: ['support_corrected', 'support_deleted'] }),
    purgedAt: seconds('purged_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    uniqueIndex('revisions_generation').on(t.workspaceId, t.memoryId, t.generation),
    index('revisions_namespace_current').on(t.workspaceId, t.namespaceId, t.memoryId),
    index('revisions_support').using('gin', t.supportRevisionIds),
  ],
);

/** Stored results of idempotent writes, replayed byte for byte (decisions §8). */
export const idempotencyRecords = pgTable(
  'idempotency_records',
  {
    /** The selected workspace (writes outside any workspace keep theirs in directory_idempotency_records). */
    workspaceId: text('workspace_id').notNull(),
    principal: text('principal').notNull(),
    key: text('key').notNull(),
    operation: text('operation').notNull(),
    fingerprint: text('fingerprint').notNull(),
    status: integer('status').notNull(),
    /** The stored answer; '' once a purge erased what it would replay. */
    body: text('body').notNull(),
    /** Ledger ids the stored answer shows, so that a purge can find and erase it. */
    subjectIds: text('subject_ids').array().notNull().default([]),
    createdAt: seconds('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.principal, t.key] })],
);

/** Deletion receipts: what a purge erased, proven by hashes only. */
export const deletionReceipts = pgTable(
  'deletion_receipts',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    subjectKind: text('subject_kind', { enum: ['memory', 'evidence'] }).notNull(),
    subjectId: text('subject_id').notNull(),
    namespaceId: text('namespace_id').notNull(),
    revisionIds: text('revision_ids').array().notNull(),
    erasedSha256: text('erased_sha256').array().notNull(),
    /** SHA-256 of the erased memory key; null when the memory had none (and for evidence). */
    erasedKeySha256: text('erased_key_sha256'),
    recorderActorId: text('recorder_actor_id').notNull(),
    recordedAt: seconds('recorded_at').notNull(),
    commitSequence: bigint('commit_sequence', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] })],
);

/** How far each search provider has indexed each workspace's commits (advanced only by the indexer). */
export const indexState = pgTable(
  'index_state',
  {
    workspaceId: text('workspace_id').notNull(),
    provider: text('provider').notNull(),
    indexedSequence: bigint('indexed_sequence', { mode: 'number' }).notNull(),
    updatedAt: seconds('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.provider] })],
);

// ---- product installations and their credentials ---------------------------------------

/** A product installed into a workspace; grants may target it and its credentials inherit them. */
export const installations = pgTable(
  'installations',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    name: utf8('name').notNull(),
    createdAt: seconds('created_at').notNull(),
    createdBy: text('created_by').notNull(),
    revokedAt: seconds('revoked_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('installations_order').on(t.workspaceId, t.createdAt, t.id),
  ],
);

/**
 * Opaque bearer secrets: installation credentials and workspace-bound service keys. Only the
 * SHA-256 of the secret is kept. The secret names its credential id: authentication finds the
 * id's workspace in `credential_directory`, reads the row there and compares hashes in constant
 * time.
 */
export const credentials = pgTable(
  'credentials',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    kind: text('kind', { enum: ['installation', 'service_key'] }).notNull(),
    /** Set for installation credentials, null for service keys. */
    installationId: text('installation_id'),
    name: utf8('name').notNull(),
    /** The actor this credential acts as (recorder of its writes). */
    actorId: text('actor_id').notNull(),
    secretSha256: text('secret_sha256').notNull(),
    /** Ceiling on what its grants can give it. */
    capabilities: text('capabilities').array().notNull(),
    /** Ceiling on where: these namespaces and their subtrees; null = the whole workspace. */
    namespaceIds: text('namespace_ids').array(),
    expiresAt: seconds('expires_at'),
    createdAt: seconds('created_at').notNull(),
    createdBy: text('created_by').notNull(),
    revokedAt: seconds('revoked_at'),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.id] }),
    index('credentials_by_id').on(t.id),
    index('credentials_order').on(t.workspaceId, t.createdAt, t.id),
  ],
);

// ---- webhooks ----------------------------------------------------------------------------

/**
 * Endpoints that receive the workspace's changes (decisions §10). The signing secret is kept as
 * is: HMAC needs the key itself, so a hash would not do (docs/semantics.md, Webhooks). The
 * delivery columns are written only by the delivery worker: `delivered_sequence` advances after
 * a 2xx only, and `lease_until` lets one process at a time hold a batch in flight.
 */
export const webhooks = pgTable(
  'webhooks',
  {
    workspaceId: text('workspace_id').notNull(),
    id: text('id').notNull(),
    url: utf8('url').notNull(),
    namespaceId: text('namespace_id'),
    description: utf8('description'),
    secret: text('secret').notNull(),
    createdAt: seconds('created_at').notNull(),
    createdBy: text('created_by').notNull(),
    deletedAt: seconds('deleted_at'),
    disabledAt: seconds('disabled_at'),
    disabledReason: text('disabled_reason'),
    deliveredSequence: bigint('delivered_sequence', { mode: 'number' }).notNull(),
    lastDeliveredAt: seconds('last_delivered_at'),
    lastError: text('last_error'),
    lastErrorAt: seconds('last_error_at'),
    failingSince: seconds('failing_since'),
    failedAttempts: integer('failed_attempts').notNull().default(0),
    nextAttemptAt: seconds('next_attempt_at'),
    leaseUntil: seconds('lease_until'),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] }), index('webhooks_order').on(t.workspaceId, t.createdAt, t.id)],
);
