/**
 * The ledger's hash chain (docs/ledger-proofs.md). Each commit of a workspace stores
 *
 *   chain_hash = SHA-256(previous chain_hash ‖ digest)      (32 bytes ‖ 32 bytes, hex stored)
 *   digest     = SHA-256(canonical JSON of the commit's digest input)
 *
 * The digest input holds the commit's sequence, `recorded_at`, actor and operation, and for each
 * row the commit names (its `subject_ids`, in that order) the row's record: its identity and the
 * fields fixed when it was written, with any text (a revision's text, an evidence excerpt, a
 * locator, a URL, a memory's key) replaced by its SHA-256. A purge erases text but keeps its hash
 * (evidence keeps `excerpt_sha256`, a memory its `key_sha256`; a memory's receipt keeps each
 * revision's erased text hash), so a purge leaves every digest as it was. The commit before
 * sequence 1 is the genesis hash, 64 zeros.
 *
 * This file is the one definition of the canonical form on the server; `@tms/client` carries the
 * reader's copy (it has no dependencies) and both are pinned by the vectors in the docs.
 */
import crypto from 'node:crypto';
import { canonicalJson } from './canonical-json';
import type {
  CommitRow,
  CredentialRow,
  DeletionReceiptRow,
  EvidenceRow,
  InstallationRow,
  MemoryRow,
  NamespaceRow,
  RevisionRow,
  VerificationRow,
  WebhookRow,
  WorkspaceRow,
} from './rows';

/**
 * Set (to true) only by the bench's comparison build of the gateway (`pnpm bench`, esbuild
 * `define`), which measures writes with and without chaining in one run; never in a service.
 */
declare const __TMS_BENCH_UNCHAINED__: boolean | undefined;

/** Whether writes chain their commits (always, except in that bench build). */
export const CHAINING: boolean = typeof __TMS_BENCH_UNCHAINED__ === 'undefined' || !__TMS_BENCH_UNCHAINED__;

/** The chain hash "before" sequence 1. */
export const GENESIS_CHAIN_HASH = '0'.repeat(64);

/**
 * The kind of record each id prefix (`newId`'s) names, as every digest writes it. This list is
 * the chain's own and fixed: a kind's name is part of the hash of every commit that named such a
 * record, so none is ever renamed (the change feed names its types for itself). A new kind of
 * record gets a new prefix and a new entry.
 */
const RECORD_KIND_BY_PREFIX = {
  ws: 'workspace',
  ns: 'namespace',
  ev: 'evidence',
  vf: 'verification',
  mem: 'memory',
  rev: 'revision',
  rcp: 'receipt',
  ins: 'installation',
  cred: 'credential',
  wh: 'webhook',
} as const satisfies Record<string, string>;

/** The kind of record a subject id names. */
export type RecordKind = (typeof RECORD_KIND_BY_PREFIX)[keyof typeof RECORD_KIND_BY_PREFIX];

/** One row in a digest input: its kind, id and recorded fields (texts as hashes). */
export interface DigestRecord {
  kind: RecordKind | null;
  id: string;
  /** True when the row the commit names cannot be found (it was deleted). */
  missing?: true;
  [field: string]: unknown;
}

/** What a commit's digest covers (hashes only: it can be published as a proof). */
export interface CommitDigestInput {
  workspace_id: string;
  sequence: number;
  recorded_at: number;
  actor_id: string;
  operation: string;
  records: DigestRecord[];
}

/** SHA-256 as hex, of a string's UTF-8 bytes or of bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  // One-shot: half the cost of createHash/update/digest for the short inputs each commit hashes.
  return crypto.hash('sha256', data, 'hex');
}

export function commitDigest(input: CommitDigestInput): string {
  return sha256Hex(canonicalJson(input));
}

export function nextChainHash(previous: string, digest: string): string {
  return sha256Hex(Buffer.from(previous + digest, 'hex'));
}

/** The kind of record a subject id names (null: an id of no known kind). */
export function recordKindOf(id: string): RecordKind | null {
  const prefix = id.slice(0, id.indexOf('_'));
  return Object.hasOwn(RECORD_KIND_BY_PREFIX, prefix)
    ? RECORD_KIND_BY_PREFIX[prefix as keyof typeof RECORD_KIND_BY_PREFIX]
    : null;
}

/**
 * A text's hash as the chain records it: the hash of the text while it is kept, the stored hash
 * once purged. A kept text that no longer matches its stored hash yields a value no honest
 * digest holds, so tampering with either side shows.
 */
function keptTextHash(text: string | null, stored: string): string {
  if (text === null) return stored;
  const actual = sha256Hex(text);
  return actual === stored ? stored : `mismatch:${actual}`;
}

/** The rows a commit names, as read from the ledger (or collected by a group commit). */
export interface RecordSources {
  workspaces: Map<string, WorkspaceRow>;
  namespaces: Map<string, NamespaceRow>;
  evidence: Map<string, EvidenceRow>;
  verifications: Map<string, VerificationRow>;
  memories: Map<string, MemoryRow>;
  revisions: Map<string, RevisionRow>;
  receipts: Map<string, DeletionReceiptRow>;
  installations: Map<string, InstallationRow>;
  credentials: Map<string, CredentialRow>;
  webhooks: Map<string, WebhookRow>;
  /** Erased text hashes of purged revisions, by revision id (from their memory's receipt). */
  erasedTextSha256: Map<string, string>;
}

export function emptySources(): RecordSources {
  return {
    workspaces: new Map(),
    namespaces: new Map(),
    evidence: new Map(),
    verifications: new Map(),
    memories: new Map(),
    revisions: new Map(),
    receipts: new Map(),
    installations: new Map(),
    credentials: new Map(),
    webhooks: new Map(),
    erasedTextSha256: new Map(),
  };
}

/** The map of `sources` that holds the records of one kind. */
export function recordsOfKind(sources: RecordSources, kind: RecordKind): Map<string, { id: string }> {
  switch (kind) {
    case 'workspace':
      return sources.workspaces;
    case 'namespace':
      return sources.namespaces;
    case 'evidence':
      return sources.evidence;
    case 'verification':
      return sources.verifications;
    case 'memory':
      return sources.memories;
    case 'revision':
      return sources.revisions;
    case 'receipt':
      return sources.receipts;
    case 'installation':
      return sources.installations;
    case 'credential':
      return sources.credentials;
    case 'webhook':
      return sources.webhooks;
  }
}

/**
 * A memory key's hash as the chain records it: the key's while kept, the stored one once purged.
 * A key without a stored hash (written behind the service's back) shows as a mismatch.
 */
function keyHash(row: MemoryRow): string {
  if (row.keySha256 === null) return `mismatch:${sha256Hex(row.key ?? '')}`;
  return keptTextHash(row.key, row.keySha256);
}

/** The text hash of a revision: of its text while kept, from its receipt once purged. */
function revisionTextHash(row: RevisionRow, sources: RecordSources): string {
  if (row.text !== null) return sha256Hex(row.text);
  return sources.erasedTextSha256.get(row.id) ?? 'unknown';
}

/**
 * The record of one subject: only fields no later commit changes (a later supersession,
 * invalidation, rename, revocation or purge is that commit's own, and leaves this record alone).
 * Keys are written in canonical (code unit) order, which spares canonicalJson its sort.
 */
export function recordOf(id: string, sources: RecordSources): DigestRecord {
  const kind = recordKindOf(id);
  const missing = (): DigestRecord => ({ id, kind, missing: true });
  switch (kind) {
    case 'workspace': {
      const r = sources.workspaces.get(id);
      return r ? { created_at: r.createdAt, created_by: r.createdBy, id, kind } : missing();
    }
    case 'namespace': {
      const r = sources.namespaces.get(id);
      return r ? { created_at: r.createdAt, id, kind } : missing();
    }
    case 'evidence': {
      const r = sources.evidence.get(id);
      if (!r) return missing();
      return {
        commit_sequence: r.commitSequence,
        content_root_sha256: r.contentRootSha256,
        excerpt_sha256: keptTextHash(r.excerpt, r.excerptSha256),
        id,
        kind,
        namespace_id: r.namespaceId,
        recorded_at: r.recordedAt,
        recorder_actor_id: r.recorderActorId,
        source_locator_sha256: sha256Hex(r.sourceLocator),
      };
    }
    case 'verification': {
      const r = sources.verifications.get(id);
      if (!r) return missing();
      return {
        content_root_sha256: r.contentRootSha256,
        evidence_id: r.evidenceId,
        excerpt_sha256: r.excerptSha256,
        id,
        kind,
        recorded_at: r.recordedAt,
        verdict: r.verdict,
        verifier_actor_id: r.verifierActorId,
      };
    }
    case 'memory': {
      const r = sources.memories.get(id);
      if (!r) return missing();
      // Only a keyed memory's record names a key hash: every keyless record reads as it did before keys.
      if (r.key === null && r.keySha256 === null) {
        return { created_at: r.createdAt, id, kind, memory_kind: r.kind, namespace_id: r.namespaceId };
      }
      return {
        created_at: r.createdAt,
        id,
        key_sha256: keyHash(r),
        kind,
        memory_kind: r.kind,
        namespace_id: r.namespaceId,
      };
    }
    case 'revision': {
      const r = sources.revisions.get(id);
      if (!r) return missing();
      return {
        attestation_evidence_ids: r.attestationEvidenceIds ?? null,
        attestation_id: r.attestationId ?? null,
        attestation_recorded_at: r.attestationRecordedAt ?? null,
        attestation_verification_ids: r.attestationVerificationIds ?? null,
        attestation_verifier_actor_id: r.attestationVerifierActorId ?? null,
        claim_sha256: r.claimSha256 ?? null,
        commit_sequence: r.commitSequence,
        evidence_ids: r.evidenceIds,
        generation: r.generation,
        id,
        kind,
        memory_id: r.memoryId,
        memory_kind: r.kind,
        namespace_id: r.namespaceId,
        recorded_at: r.recordedAt,
        status: r.status,
        support_revision_ids: r.supportRevisionIds,
        text_sha256: revisionTextHash(r, sources),
        valid_from: r.validFrom,
        valid_to: r.validTo ?? null,
      };
    }
    case 'receipt': {
      const r = sources.receipts.get(id);
      if (!r) return missing();
      const erasedKey = r.erasedKeySha256 === null ? {} : { erased_key_sha256: r.erasedKeySha256 };
      return {
        commit_sequence: r.commitSequence,
        ...erasedKey,
        erased_sha256: r.erasedSha256,
        id,
        kind,
        namespace_id: r.namespaceId,
        recorded_at: r.recordedAt,
        recorder_actor_id: r.recorderActorId,
        revision_ids: r.revisionIds,
        subject_id: r.subjectId,
        subject_kind: r.subjectKind,
      };
    }
    case 'installation': {
      const r = sources.installations.get(id);
      return r ? { created_at: r.createdAt, created_by: r.createdBy, id, kind } : missing();
    }
    case 'credential': {
      const r = sources.credentials.get(id);
      if (!r) return missing();
      return {
        actor_id: r.actorId,
        capabilities: r.capabilities,
        created_at: r.createdAt,
        created_by: r.createdBy,
        credential_kind: r.kind,
        expires_at: r.expiresAt ?? null,
        id,
        installation_id: r.installationId ?? null,
        kind,
        namespace_ids: r.namespaceIds ?? null,
        secret_sha256: r.secretSha256,
      };
    }
    case 'webhook': {
      const r = sources.webhooks.get(id);
      if (!r) return missing();
      return {
        created_at: r.createdAt,
        created_by: r.createdBy,
        id,
        kind,
        namespace_id: r.namespaceId ?? null,
        url_sha256: sha256Hex(r.url),
      };
    }
    default:
      return missing();
  }
}

type CommitFields = Pick<CommitRow, 'workspaceId' | 'sequence' | 'recordedAt' | 'actorId' | 'operation' | 'subjectIds'>;

export function digestInputOf(commit: CommitFields, sources: RecordSources): CommitDigestInput {
  return {
    actor_id: commit.actorId,
    operation: commit.operation,
    recorded_at: commit.recordedAt,
    records: commit.subjectIds.map((id) => recordOf(id, sources)),
    sequence: commit.sequence,
    workspace_id: commit.workspaceId,
  };
}

/** Where a chain first disagrees with the rows, and why. */
export interface ChainBreak {
  sequence: number;
  reason: string;
}

/**
 * Walk commits in order from `previous` (the chain hash before the first of them), recomputing
 * each chain hash. Answers the chain hash reached, or the first sequence that does not match.
 * `expectedFirst` is the sequence the first commit must have (a missing commit row breaks there).
 */
export function walkChain(
  previous: string,
  expectedFirst: number,
  items: Iterable<{ input: CommitDigestInput; chainHash: string | null }>,
): { head: string; sequence: number } | { broken: ChainBreak } {
  let hash = previous;
  let expected = expectedFirst;
  for (const { input, chainHash } of items) {
    if (input.sequence !== expected) {
      return { broken: { sequence: expected, reason: `commit ${expected} is missing` } };
    }
    if (chainHash === null) {
      return { broken: { sequence: expected, reason: `commit ${expected} is not chained yet: run svc migrate` } };
    }
    const next = nextChainHash(hash, commitDigest(input));
    if (next !== chainHash) {
      return { broken: { sequence: expected, reason: `commit ${expected} no longer matches its chain hash` } };
    }
    hash = next;
    expected += 1;
  }
  return { head: hash, sequence: expected - 1 };
}
