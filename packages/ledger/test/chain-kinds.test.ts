import { describe, expect, it } from 'vitest';
import {
  commitDigest,
  digestInputOf,
  emptySources,
  GENESIS_CHAIN_HASH,
  nextChainHash,
  type RecordSources,
  recordKindOf,
} from '../src/chain';
import { evidenceRow, revisionRow, UNKEYED } from './rows';

/*
 * Every kind of record the chain names, pinned by digests computed once and written here as
 * literals: any change to how a record is hashed (a field, a kind's name, an id prefix, the
 * canonical form) fails this test, because it would change the hash of every past commit.
 */

const WS = 'ws_pinned';
const H = (c: string) => c.repeat(64);

function pinnedSources(): RecordSources {
  const s = emptySources();
  s.workspaces.set(WS, { id: WS, name: 'Pinned', createdAt: 1700000000.5, createdBy: 'act_owner' });
  s.namespaces.set('ns_pinned', {
    workspaceId: WS,
    id: 'ns_pinned',
    parentId: null,
    name: 'facts',
    ancestorIds: [],
    pathKey: Buffer.from([1, 2, 3]),
    createdAt: 1700000001,
    updatedAt: 1700000050,
  });
  s.evidence.set(
    'ev_kept',
    evidenceRow(WS, 'ev_kept', {
      namespaceId: 'ns_pinned',
      sourceLocator: 'doc://sky',
      contentRootSha256: H('c'),
      excerpt: 'the sky is blue',
      excerptSha256: 'b1c5c2e4b37e2b4e5e2d8fd1c0f1fdd0a1b2a1d1c7d05c1f5c5f0c9b3b0e7c2d',
      recorderActorId: 'act_owner',
      recordedAt: 1700000002,
      commitSequence: 3,
    }),
  );
  s.evidence.set(
    'ev_purged',
    evidenceRow(WS, 'ev_purged', {
      namespaceId: 'ns_pinned',
      sourceLocator: 'doc://gone',
      contentRootSha256: H('d'),
      excerpt: null,
      excerptSha256: H('e'),
      recordedAt: 1700000003,
      commitSequence: 4,
      purgedAt: 1700000090,
    }),
  );
  s.verifications.set('vf_pinned', {
    workspaceId: WS,
    id: 'vf_pinned',
    evidenceId: 'ev_kept',
    contentRootSha256: H('c'),
    excerptSha256: H('f'),
    verdict: 'verified',
    verifierActorId: 'act_checker',
    recordedAt: 1700000004,
  });
  s.memories.set('mem_plain', {
    workspaceId: WS,
    id: 'mem_plain',
    namespaceId: 'ns_pinned',
    kind: 'episode',
    generation: 3,
    createdAt: 1700000005,
    ...UNKEYED,
  });
  s.memories.set('mem_keyed', {
    workspaceId: WS,
    id: 'mem_keyed',
    namespaceId: 'ns_pinned',
    kind: 'procedure',
    generation: 1,
    createdAt: 1700000006,
    purgedAt: null,
    key: 'crm:42',
    keySha256: '0aa06f0e6bd5c3c3b52a8f6bd6e9a1d0fa8f0b5f4c8a4b4d9c9c7f0c5d8e6b1a',
    retractedAt: null,
  });
  s.memories.set('mem_purged', {
    workspaceId: WS,
    id: 'mem_purged',
    namespaceId: 'ns_pinned',
    kind: 'claim',
    generation: 2,
    createdAt: 1700000007,
    purgedAt: 1700000095,
    key: null,
    keySha256: H('a'),
    retractedAt: null,
  });
  s.revisions.set(
    'rev_attested',
    revisionRow(WS, 'rev_attested', {
      memoryId: 'mem_plain',
      namespaceId: 'ns_pinned',
      kind: 'episode',
      generation: 2,
      text: 'Ana moved to Porto.',
      status: 'asserted',
      validFrom: 1600000000,
      validTo: 1650000000.75,
      recordedAt: 1700000008,
      recordedUntil: 1700000099,
      commitSequence: 9,
      evidenceIds: ['ev_kept'],
      supportRevisionIds: ['rev_support'],
      attestationId: 'att_1',
      claimSha256: H('1'),
      attestationEvidenceIds: ['ev_kept'],
      attestationVerificationIds: ['vf_pinned'],
      attestationVerifierActorId: 'act_checker',
      attestationRecordedAt: 1700000008,
    }),
  );
  s.revisions.set(
    'rev_purged',
    revisionRow(WS, 'rev_purged', {
      memoryId: 'mem_purged',
      namespaceId: 'ns_pinned',
      text: null,
      recordedAt: 1700000009,
      commitSequence: 10,
      purgedAt: 1700000095,
    }),
  );
  s.erasedTextSha256.set('rev_purged', H('2'));
  s.receipts.set('rcp_memory', {
    workspaceId: WS,
    id: 'rcp_memory',
    subjectKind: 'memory',
    subjectId: 'mem_purged',
    namespaceId: 'ns_pinned',
    revisionIds: ['rev_purged'],
    erasedSha256: [H('2')],
    erasedKeySha256: H('a'),
    recorderActorId: 'act_owner',
    recordedAt: 1700000095,
    commitSequence: 20,
  });
  s.receipts.set('rcp_evidence', {
    workspaceId: WS,
    id: 'rcp_evidence',
    subjectKind: 'evidence',
    subjectId: 'ev_purged',
    namespaceId: 'ns_pinned',
    revisionIds: [],
    erasedSha256: [H('e')],
    erasedKeySha256: null,
    recorderActorId: 'act_owner',
    recordedAt: 1700000090,
    commitSequence: 19,
  });
  s.installations.set('ins_pinned', {
    workspaceId: WS,
    id: 'ins_pinned',
    name: 'crm',
    createdAt: 1700000010,
    createdBy: 'act_owner',
    revokedAt: 1700000080,
  });
  s.credentials.set('cred_installation', {
    workspaceId: WS,
    id: 'cred_installation',
    kind: 'installation',
    installationId: 'ins_pinned',
    name: 'reader',
    actorId: 'act_cred',
    secretSha256: H('3'),
    capabilities: ['read', 'write'],
    namespaceIds: ['ns_pinned'],
    expiresAt: 1800000000,
    createdAt: 1700000011,
    createdBy: 'act_owner',
    revokedAt: null,
  });
  s.credentials.set('cred_service', {
    workspaceId: WS,
    id: 'cred_service',
    kind: 'service_key',
    installationId: null,
    name: 'ops',
    actorId: 'act_ops',
    secretSha256: H('4'),
    capabilities: ['admin'],
    namespaceIds: null,
    expiresAt: null,
    createdAt: 1700000012,
    createdBy: 'act_owner',
    revokedAt: null,
  });
  const webhook = {
    workspaceId: WS,
    url: 'https://hooks.example/a',
    description: null,
    secret: 'whsec_x',
    createdAt: 1700000013,
    createdBy: 'act_owner',
    deletedAt: null,
    disabledAt: null,
    disabledReason: null,
    deliveredSequence: 13,
    lastDeliveredAt: null,
    lastError: null,
    lastErrorAt: null,
    failingSince: null,
    failedAttempts: 0,
    nextAttemptAt: null,
    leaseUntil: null,
  };
  s.webhooks.set('wh_scoped', { ...webhook, id: 'wh_scoped', namespaceId: 'ns_pinned' });
  s.webhooks.set('wh_all', { ...webhook, id: 'wh_all', url: 'https://hooks.example/b', namespaceId: null });
  return s;
}

/** One commit per case, each naming the records of one kind (or an id the chain treats specially). */
const CASES: { name: string; subjectIds: string[]; digest: string }[] = [
  { name: 'workspace', subjectIds: [WS], digest: '3241fb2d255a84886b469967dfa9ae0b86776862a62b5981cd5576058566cfdb' },
  {
    name: 'namespace',
    subjectIds: ['ns_pinned'],
    digest: '283668d62a9ae3bbc8f159908084e9185a60d04d0a7618e79df38db10bd9b29d',
  },
  {
    name: 'evidence (kept, purged)',
    subjectIds: ['ev_kept', 'ev_purged'],
    digest: '3593c2a3e020226fdef347fd073392cf827994d7cef96c96ed754b82c3f5d276',
  },
  {
    name: 'verification',
    subjectIds: ['vf_pinned'],
    digest: 'a5b79bad150cec8e9e724883a7120ab92aaffd2f42873dd7a065db6611cd2906',
  },
  {
    name: 'memory (keyless, keyed, purged key)',
    subjectIds: ['mem_plain', 'mem_keyed', 'mem_purged'],
    digest: '3be9f6d7b8f90a1204a5bfd5c9161e85a669820c076ddfcace4a4d9feab3754a',
  },
  {
    name: 'revision (attested, purged)',
    subjectIds: ['rev_attested', 'rev_purged'],
    digest: '2675fd37fe1a2d486c17d4f6a8340fb1b3096e4f54d3a3c25111f874b212b392',
  },
  {
    name: 'receipt (memory, evidence)',
    subjectIds: ['rcp_memory', 'rcp_evidence'],
    digest: '2256b9d5cff1742d2a1b183f4214981087362a39f869e85f23a8b226324e53f7',
  },
  {
    name: 'installation',
    subjectIds: ['ins_pinned'],
    digest: '332e3a8f29e507c97a250a404fc72310c957d213679b6860bf03d7900295812a',
  },
  {
    name: 'credential (installation, service key)',
    subjectIds: ['cred_installation', 'cred_service'],
    digest: 'b6f4eb14cd79172e02091ab1cdb4049eb757d56ac3ccf4533b782e7e31095bd4',
  },
  {
    name: 'webhook (scoped, all)',
    subjectIds: ['wh_scoped', 'wh_all'],
    digest: '00370214effde6baf3c6424b58c373a474e025b15df1c7111e0611cdc0a31dea',
  },
  {
    name: 'missing rows and ids of no kind',
    subjectIds: ['rev_deleted', 'zz_unknown', 'noprefix'],
    digest: '8996767fab6f1f46c5f99481cdee6074258182e5b9068df414da4c9f0f7e1983',
  },
];
const HEAD = '977b4acda1303cdac6d0dbf2345ba1c5ddd19a6a9b6d9851e9ab73beb7cfbaee';

function commitOf(sequence: number, subjectIds: string[]) {
  return {
    workspaceId: WS,
    sequence,
    recordedAt: 1700000100 + sequence / 4,
    actorId: 'act_owner',
    operation: `op.case${sequence}`,
    subjectIds,
  };
}

describe('chain hash vectors for every record kind', () => {
  it.each(CASES.map((c, i) => [c.name, i] as const))('%s', (_name, i) => {
    const c = CASES[i] as (typeof CASES)[number];
    const input = digestInputOf(commitOf(i + 1, c.subjectIds), pinnedSources());
    // Every record but the last case's is found: the pins are of real records, not of `missing`.
    if (i < CASES.length - 1) expect(input.records.filter((record) => record.missing)).toEqual([]);
    expect(commitDigest(input)).toBe(c.digest);
  });

  it('the cases chain from genesis to a pinned head', () => {
    let hash = GENESIS_CHAIN_HASH;
    CASES.forEach((c, i) => {
      hash = nextChainHash(hash, commitDigest(digestInputOf(commitOf(i + 1, c.subjectIds), pinnedSources())));
    });
    expect(hash).toBe(HEAD);
  });

  it('names each id prefix by a fixed kind', () => {
    expect(
      ['ws_a', 'ns_a', 'ev_a', 'vf_a', 'mem_a', 'rev_a', 'rcp_a', 'ins_a', 'cred_a', 'wh_a', 'act_a', 'x'].map(
        recordKindOf,
      ),
    ).toEqual([
      'workspace',
      'namespace',
      'evidence',
      'verification',
      'memory',
      'revision',
      'receipt',
      'installation',
      'credential',
      'webhook',
      null,
      null,
    ]);
  });
});
