import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/canonical-json';
import { commitDigest, digestInputOf, emptySources, GENESIS_CHAIN_HASH, nextChainHash, walkChain } from '../src/chain';
import { revisionRow } from './rows';

/*
 * The vectors of docs/ledger-proofs.md: the canonical texts were written by hand and hashed with
 * another SHA-256 implementation, so the chain code must reproduce them byte for byte.
 */
const DOC = fs.readFileSync(
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs/ledger-proofs.md'),
  'utf8',
);

const TEXT_SHA256 = '6ccac70055552946b45e02da712ccf19d750bce5275ddb9016a89649ad54c0de';
const D1_TEXT =
  '{"actor_id":"act_alice","operation":"workspaces.create","recorded_at":1700000000.25,"records":[{"created_at":1700000000.25,"created_by":"act_alice","id":"ws_demo","kind":"workspace"}],"sequence":1,"workspace_id":"ws_demo"}';
const D1 = '2de026d280c808fde36190d309fdb186574d2042bd7dab7b78a04b640fdaa135';
const C1 = 'e5793dccf485ac8a4e57fbf4178c44f72dfac8b7b609180b3d2fd89f7af07d8c';
const D2_TEXT = `{"actor_id":"act_alice","operation":"memories.create","recorded_at":1700000001.5,"records":[{"created_at":1700000001.5,"id":"mem_demo","kind":"memory","memory_kind":"claim","namespace_id":"ns_demo"},{"attestation_evidence_ids":null,"attestation_id":null,"attestation_recorded_at":null,"attestation_verification_ids":null,"attestation_verifier_actor_id":null,"claim_sha256":null,"commit_sequence":2,"evidence_ids":[],"generation":1,"id":"rev_demo","kind":"revision","memory_id":"mem_demo","memory_kind":"claim","namespace_id":"ns_demo","recorded_at":1700000001.5,"status":"candidate","support_revision_ids":[],"text_sha256":"${TEXT_SHA256}","valid_from":-0.125,"valid_to":1e+21}],"sequence":2,"workspace_id":"ws_demo"}`;
const D2 = '88984bd545acb43df36651618eb982a941735f67b0a50ed8e3d6b0006eb1d24e';
const C2 = '64b2f04ecfb28dbc3e9186e7030fc52a53dd3b054c25aea17f98c7477ff7a483';
// Commit 3 creates a memory with a key (decisions §12): its record gains `key_sha256`, and only a keyed one does.
const KEY = 'crm:contact/42 – Ana';
const KEY_SHA256 = 'c9f12c95c6ff09878edcbfbc30f409f0f3de50e31e1e32d42db5573ada50a7d3';
const KEYED_TEXT_SHA256 = '0d99f014475e51ff1348b71a596897afa9d43b30b74f9ac00a41537a87e5aac2';
const D3_TEXT = `{"actor_id":"act_alice","operation":"memories.create","recorded_at":1700000002,"records":[{"created_at":1700000002,"id":"mem_keyed","key_sha256":"${KEY_SHA256}","kind":"memory","memory_kind":"claim","namespace_id":"ns_demo"},{"attestation_evidence_ids":null,"attestation_id":null,"attestation_recorded_at":null,"attestation_verification_ids":null,"attestation_verifier_actor_id":null,"claim_sha256":null,"commit_sequence":3,"evidence_ids":[],"generation":1,"id":"rev_keyed","kind":"revision","memory_id":"mem_keyed","memory_kind":"claim","namespace_id":"ns_demo","recorded_at":1700000002,"status":"candidate","support_revision_ids":[],"text_sha256":"${KEYED_TEXT_SHA256}","valid_from":0,"valid_to":null}],"sequence":3,"workspace_id":"ws_demo"}`;
const D3 = '65a87dc14c52b22178d395a9f59ccc0ad1a719bed9976cc6273bfaa128d10eff';
const C3 = 'b779f66510b905bc7e80d77aa953e72aa0e9a5db6a4bb31affc9b8e11fd2c284';

function sources(
  text: string | null,
  key: { key: string | null; keySha256: string } = { key: KEY, keySha256: KEY_SHA256 },
) {
  const s = emptySources();
  s.workspaces.set('ws_demo', { id: 'ws_demo', name: 'Demo', createdAt: 1700000000.25, createdBy: 'act_alice' });
  s.memories.set('mem_demo', {
    workspaceId: 'ws_demo',
    id: 'mem_demo',
    namespaceId: 'ns_demo',
    kind: 'claim',
    generation: 2,
    createdAt: 1700000001.5,
    purgedAt: null,
    key: null,
    keySha256: null,
    retractedAt: null,
  });
  s.revisions.set(
    'rev_demo',
    revisionRow('ws_demo', 'rev_demo', {
      memoryId: 'mem_demo',
      namespaceId: 'ns_demo',
      text,
      validFrom: -0.125,
      validTo: 1e21,
      recordedAt: 1700000001.5,
      // Set by a later commit: no part of this one's record.
      recordedUntil: 1700000009,
      commitSequence: 2,
    }),
  );
  s.memories.set('mem_keyed', {
    workspaceId: 'ws_demo',
    id: 'mem_keyed',
    namespaceId: 'ns_demo',
    kind: 'claim',
    generation: 1,
    createdAt: 1700000002,
    purgedAt: null,
    key: key.key,
    keySha256: key.keySha256,
    retractedAt: null,
  });
  s.revisions.set(
    'rev_keyed',
    revisionRow('ws_demo', 'rev_keyed', {
      memoryId: 'mem_keyed',
      namespaceId: 'ns_demo',
      text: 'Ana works at Acme.',
      validFrom: 0,
      validTo: null,
      recordedAt: 1700000002,
      commitSequence: 3,
    }),
  );
  return s;
}

const commit1 = {
  workspaceId: 'ws_demo',
  sequence: 1,
  recordedAt: 1700000000.25,
  actorId: 'act_alice',
  operation: 'workspaces.create',
  subjectIds: ['ws_demo'],
};
const commit2 = {
  ...commit1,
  sequence: 2,
  recordedAt: 1700000001.5,
  operation: 'memories.create',
  subjectIds: ['mem_demo', 'rev_demo'],
};
const commit3 = { ...commit2, sequence: 3, recordedAt: 1700000002, subjectIds: ['mem_keyed', 'rev_keyed'] };

describe('chain test vectors (docs/ledger-proofs.md)', () => {
  it('the documented vectors are the ones tested', () => {
    for (const value of [TEXT_SHA256, D1_TEXT, D1, C1, D2_TEXT, D2, C2, KEY, KEY_SHA256, D3_TEXT, D3, C3]) {
      expect(DOC).toContain(value);
    }
  });

  it('reproduces the canonical texts, digests and chain hashes', () => {
    const input1 = digestInputOf(commit1, sources('Ana lives in Lisbon.'));
    const input2 = digestInputOf(commit2, sources('Ana lives in Lisbon.'));
    expect(canonicalJson(input1)).toBe(D1_TEXT);
    expect(canonicalJson(input2)).toBe(D2_TEXT);
    expect(commitDigest(input1)).toBe(D1);
    expect(commitDigest(input2)).toBe(D2);
    expect(nextChainHash(GENESIS_CHAIN_HASH, D1)).toBe(C1);
    expect(nextChainHash(C1, D2)).toBe(C2);
    const input3 = digestInputOf(commit3, sources('Ana lives in Lisbon.'));
    expect(canonicalJson(input3)).toBe(D3_TEXT);
    expect(commitDigest(input3)).toBe(D3);
    expect(nextChainHash(C2, D3)).toBe(C3);
  });

  it('a memory without a key hashes as it did before keys existed; a key changed or added shows', () => {
    // D2 above is the vector of a keyless memory written before keys: its record has no key field.
    expect(digestInputOf(commit2, sources('Ana lives in Lisbon.')).records[0]).toEqual({
      created_at: 1700000001.5,
      id: 'mem_demo',
      kind: 'memory',
      memory_kind: 'claim',
      namespace_id: 'ns_demo',
    });
    const changed = sources('Ana lives in Lisbon.', { key: 'crm:contact/43 – Ana', keySha256: KEY_SHA256 });
    expect(commitDigest(digestInputOf(commit3, changed))).not.toBe(D3);
    const added = sources('Ana lives in Lisbon.');
    const keyless = added.memories.get('mem_demo');
    if (keyless) added.memories.set('mem_demo', { ...keyless, key: 'sneaked in' });
    expect(commitDigest(digestInputOf(commit2, added))).not.toBe(D2);
  });

  it('orders every key by UTF-16 code units, integer-like keys included, and writes what JSON.stringify writes', () => {
    // A JavaScript object lists integer-like keys first, in numeric order; RFC 8785 does not.
    expect(canonicalJson({ '9': 1, '10': 2, b: [3, undefined], a: { toJSON: () => 'x' }, '\u00e9': null, Z: -0 })).toBe(
      '{"10":2,"9":1,"Z":0,"a":"x","b":[3,null],"\u00e9":null}',
    );
    expect(canonicalJson([Number.NaN, 'a"b', { skipped: undefined }])).toBe('[null,"a\\"b",{}]');
  });

  it('writes every string and key as JSON.stringify does (escapes, lone surrogates, pairs)', () => {
    // Every single code unit, then random strings drawn mostly from the ones that need escaping.
    for (let unit = 0; unit <= 0xffff; unit += 1) {
      const text = String.fromCharCode(unit);
      expect(canonicalJson(text)).toBe(JSON.stringify(text));
    }
    const alphabet = ['a', 'é', '"', '\\', '\n', '\u0000', '\u001f', '\u2028', '\ud83d', '\ude00', '😀', '\u007f'];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    for (let i = 0; i < 2000; i += 1) {
      let text = '';
      for (let n = next() % 12; n > 0; n -= 1) text += alphabet[next() % alphabet.length];
      expect(canonicalJson(text)).toBe(JSON.stringify(text));
      expect(canonicalJson({ [text]: text })).toBe(`{${JSON.stringify(text)}:${JSON.stringify(text)}}`);
    }
  });

  it('builds digest records with their keys in canonical order already (canonicalJson then skips its sort)', () => {
    const input = digestInputOf(commit2, sources('Ana lives in Lisbon.'));
    const sorted = (object: object) => {
      const keys = Object.keys(object);
      return keys.join() === [...keys].sort().join();
    };
    expect(sorted(input)).toBe(true);
    for (const record of input.records) expect(sorted(record), JSON.stringify(record)).toBe(true);
  });

  it('a purge (text gone, its hash kept by the receipt) leaves the digest as it was', () => {
    const purged = sources(null);
    purged.erasedTextSha256.set('rev_demo', TEXT_SHA256);
    expect(commitDigest(digestInputOf(commit2, purged))).toBe(D2);
  });

  it('a purge of a keyed memory (key gone, its hash kept on the memory) leaves the digest as it was', () => {
    const purged = sources('Ana lives in Lisbon.', { key: null, keySha256: KEY_SHA256 });
    const revision = purged.revisions.get('rev_keyed');
    if (revision) purged.revisions.set('rev_keyed', { ...revision, text: null });
    purged.erasedTextSha256.set('rev_keyed', KEYED_TEXT_SHA256);
    expect(commitDigest(digestInputOf(commit3, purged))).toBe(D3);
  });

  it('one changed byte, a missing row or a missing commit is named by its sequence', () => {
    const items = (s: ReturnType<typeof sources>) => [
      { input: digestInputOf(commit1, s), chainHash: C1 },
      { input: digestInputOf(commit2, s), chainHash: C2 },
    ];
    expect(walkChain(GENESIS_CHAIN_HASH, 1, items(sources('Ana lives in Lisbon.')))).toEqual({ head: C2, sequence: 2 });
    expect(walkChain(GENESIS_CHAIN_HASH, 1, items(sources('Ana lives in Lisbon!')))).toMatchObject({
      broken: { sequence: 2 },
    });
    const withoutRevision = sources('Ana lives in Lisbon.');
    withoutRevision.revisions.clear();
    expect(walkChain(GENESIS_CHAIN_HASH, 1, items(withoutRevision))).toMatchObject({ broken: { sequence: 2 } });
    expect(walkChain(GENESIS_CHAIN_HASH, 1, items(sources('Ana lives in Lisbon.')).slice(1))).toEqual({
      broken: { sequence: 1, reason: 'commit 1 is missing' },
    });
  });
});
