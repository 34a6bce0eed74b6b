import type { EvidenceRow, RevisionRow } from '../src/index';

/** Ledger rows for storage tests: plausible defaults, overridden per test. */

export function evidenceRow(workspaceId: string, id: string, fields: Partial<EvidenceRow> = {}): EvidenceRow {
  return {
    workspaceId,
    id,
    namespaceId: 'ns_1',
    sourceLocator: 'file://a',
    contentRootSha256: '0'.repeat(64),
    excerpt: 'x',
    excerptSha256: '0'.repeat(64),
    recorderActorId: 'act_1',
    recordedAt: 1,
    commitSequence: 1,
    purgedAt: null,
    ...fields,
  };
}

export function revisionRow(workspaceId: string, id: string, fields: Partial<RevisionRow> = {}): RevisionRow {
  return {
    workspaceId,
    id,
    memoryId: `mem_${id}`,
    namespaceId: 'ns_1',
    kind: 'claim',
    generation: 1,
    text: 't',
    status: 'candidate',
    validFrom: 0,
    validTo: null,
    recordedAt: 1,
    recordedUntil: null,
    commitSequence: 1,
    evidenceIds: [],
    supportRevisionIds: [],
    attestationId: null,
    claimSha256: null,
    attestationEvidenceIds: null,
    attestationVerificationIds: null,
    attestationVerifierActorId: null,
    attestationRecordedAt: null,
    invalidatedAt: null,
    invalidationCauseRevisionId: null,
    invalidationReason: null,
    purgedAt: null,
    ...fields,
  };
}

/** The memory row fields of a memory without a key, never retracted or purged. */
export const UNKEYED = { purgedAt: null, key: null, keySha256: null, retractedAt: null } as const;
