import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chainOlderLedgers, verifyWorkspaceChain } from '@tms/ledger';
import { sha256Hex } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  type LedgerJwk,
  type LedgerProof,
  type TmsClient,
  verifyLedgerHead,
  verifyProof,
} from '../../../packages/client/src';
import { GraphqlClient } from './graphql-client';
import { DRIVERS, type Harness, startHarness } from './harness';

/*
 * Proofs from the live service checked by the client with SHA-256 and the published JWKS; each
 * one-field alteration is refused; an auditor who kept a signed head sees a later rewrite.
 */

/** The text with one letter changed (inside the signature: its last letter carries padding bits). */
function flipLetterAt(text: string, at: number): string {
  const i = at < 0 ? text.length + at : at;
  return `${text.slice(0, i)}${text[i] === 'A' ? 'B' : 'A'}${text.slice(i + 1)}`;
}

/** A copy of `proof` with one field changed, for every field a proof has. */
function alterations(proof: LedgerProof): [string, LedgerProof][] {
  const flip = (hex: string) => `${hex[0] === '0' ? '1' : '0'}${hex.slice(1)}`;
  const head = proof.head.head;
  const withHead = (changed: Partial<typeof head>): LedgerProof => ({
    ...proof,
    head: { ...proof.head, head: { ...head, ...changed } },
  });
  const input = JSON.parse(proof.digest_input) as { recorded_at: number };
  return [
    ['subject_id', { ...proof, subject_id: flipLetterAt(proof.subject_id, -1) }],
    ['sequence', { ...proof, sequence: proof.sequence + 1 }],
    ['previous_chain_hash', { ...proof, previous_chain_hash: flip(proof.previous_chain_hash) }],
    ['digest_input', { ...proof, digest_input: JSON.stringify({ ...input, recorded_at: input.recorded_at + 1 }) }],
    ['links', { ...proof, links: proof.links.map((l, i) => (i === 0 ? flip(l) : l)) }],
    ['head.workspace_id', withHead({ workspace_id: 'ws_other' })],
    ['head.sequence', withHead({ sequence: head.sequence + 1 })],
    ['head.recorded_at', withHead({ recorded_at: head.recorded_at + 1 })],
    ['head.chain_hash', withHead({ chain_hash: flip(head.chain_hash) })],
    ['head.signature', { ...proof, head: { ...proof.head, signature: flipLetterAt(proof.head.signature, -20) } }],
  ];
}

describe.each(DRIVERS)('ledger proofs through @tms/client (%s)', (driver) => {
  let h: Harness;
  let client: TmsClient;
  let workspace: string;
  let jwks: { keys: LedgerJwk[] };
  let namespaceId: string;
  let ownerToken: string;

  beforeAll(async () => {
    h = await startHarness({ driver });
    const created = await h.workspace();
    workspace = created.id;
    ownerToken = await created.owner.token();
    client = createClient({ baseUrl: h.url, token: ownerToken, workspace });
    // The keys are public: fetched without a token.
    jwks = (await (await fetch(`${h.url}/.well-known/ledger-keys.json`)).json()) as { keys: LedgerJwk[] };
    namespaceId = (await client.namespaces.create({ parent_id: null, name: 'facts' })).namespace.id;
  });
  afterAll(() => h?.close());

  const create = (text: string) =>
    client.memories.create({ namespace_id: namespaceId, kind: 'claim', text, valid_from: 0 });

  it('a signed head verifies with the published key; a proof reaches it with SHA-256 alone', async () => {
    expect(jwks.keys).toEqual([expect.objectContaining({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' })]);
    const written = await create('the sky is blue');
    await create('written after it');
    const head = await client.ledger.head();
    expect(head.head).toMatchObject({ workspace_id: workspace, sequence: written.commit.sequence + 1 });
    expect(await verifyLedgerHead(head, jwks)).toBe(true);
    expect(await verifyLedgerHead({ ...head, head: { ...head.head, sequence: 1 } }, jwks)).toBe(false);

    const proof = await client.ledger.proof({ id: written.revision.id });
    expect(proof).toMatchObject({ sequence: written.commit.sequence, links: [expect.any(String)] });
    const verdict = await verifyProof(proof, { jwks, pinnedHead: head.head });
    expect(verdict).toMatchObject({
      valid: true,
      record: { id: written.revision.id, text_sha256: sha256Hex('the sky is blue') },
    });
    // The proof carries hashes only.
    expect(JSON.stringify(proof)).not.toContain('the sky is blue');

    for (const [field, altered] of alterations(proof)) {
      expect(JSON.stringify(altered), field).not.toBe(JSON.stringify(proof));
      expect((await verifyProof(altered, { jwks })).valid, field).toBe(false);
    }
  });

  it('proves evidence and a verification, each at the commit that wrote it', async () => {
    const excerpt = 'an exact excerpt';
    const evidence = await client.evidence.create({
      namespace_id: namespaceId,
      source_locator: 'doc://proof',
      content_root_sha256: sha256Hex(excerpt),
      excerpt,
    });
    const verified = await client.evidence.verify({
      id: evidence.evidence.id,
      expected_content_root_sha256: sha256Hex(excerpt),
      expected_excerpt_sha256: sha256Hex(excerpt),
      verdict: 'verified',
    });
    const head = await client.ledger.head();
    for (const [id, sequence, record] of [
      [evidence.evidence.id, evidence.commit.sequence, { kind: 'evidence', excerpt_sha256: sha256Hex(excerpt) }],
      [verified.verification.id, verified.commit.sequence, { kind: 'verification', verdict: 'verified' }],
    ] as const) {
      const proof = await client.ledger.proof({ id });
      expect(proof.sequence).toBe(sequence);
      expect(await verifyProof(proof, { jwks, pinnedHead: head.head })).toMatchObject({ valid: true, record });
    }
    // Purged, the evidence keeps its proof.
    await client.evidence.forget({ id: evidence.evidence.id });
    const purged = await client.ledger.proof({ id: evidence.evidence.id });
    expect(await verifyProof(purged, { jwks })).toMatchObject({ valid: true });
    expect(JSON.stringify(purged)).not.toContain(excerpt);
  });

  it('a purged revision still has a proof, with hashes only', async () => {
    const written = await create('to be forgotten');
    await client.memories.forget({ id: written.memory.id, mode: 'purge', expected_generation: 1 });
    const proof = await client.ledger.proof({ id: written.revision.id });
    expect(await verifyProof(proof, { jwks })).toMatchObject({
      valid: true,
      record: { text_sha256: sha256Hex('to be forgotten') },
    });
  });

  it('an auditor who kept a head sees a history rewritten after it, even with the chain recomputed', async () => {
    const written = await create('what was said');
    const kept = await client.ledger.head();
    expect(await verifyLedgerHead(kept, jwks)).toBe(true);
    const ledger = h.gateway.ledger;
    const rewrite = sql`update revisions set text = convert_to('what was not said', 'UTF8')
      where workspace_id = ${workspace} and id = ${written.revision.id}`;
    await ledger.handle.db.execute(rewrite);

    // Rows changed, chain left alone: the proof no longer reaches even the service's own head.
    const naive = await client.ledger.proof({ id: written.revision.id, head_sequence: kept.head.sequence });
    expect(await verifyProof(naive, { jwks })).toMatchObject({ valid: false });

    // The forger recomputes every chain hash: the service's checks and a fresh proof agree again...
    await ledger.handle.db.execute(sql`update commits set chain_hash = null where workspace_id = ${workspace}`);
    await chainOlderLedgers(ledger);
    expect((await ledger.snapshot((s) => verifyWorkspaceChain(s, workspace))).intact).toBe(true);
    const forged = await client.ledger.proof({ id: written.revision.id, head_sequence: kept.head.sequence });
    expect(await verifyProof(forged, { jwks })).toMatchObject({ valid: true });
    // ...but not with the head the auditor kept.
    expect(await verifyProof(forged, { jwks, pinnedHead: kept.head })).toEqual({
      valid: false,
      reason: 'the chain no longer matches the head kept',
    });
  });

  it('GraphQL answers the same head and proof; a non-member gets not_found', async () => {
    const written = await create('over GraphQL');
    const owner = await (await h.workspace()).owner.token();
    const gql = new GraphqlClient(h.url, ownerToken, workspace);
    const res = await gql.request(
      `query($id: ID!) { ledgerHead { head { sequence chainHash } signature }
        ledgerProof(input: { id: $id }) { sequence digestInput links previousChainHash head { signature } } }`,
      { id: written.revision.id },
    );
    expect(res.body.errors).toBeUndefined();
    const rest = await client.ledger.head();
    expect(res.body.data.ledgerHead).toEqual({
      head: { sequence: rest.head.sequence, chainHash: rest.head.chain_hash },
      signature: rest.signature,
    });
    const proof = await client.ledger.proof({ id: written.revision.id });
    expect(res.body.data.ledgerProof).toEqual({
      sequence: proof.sequence,
      digestInput: proof.digest_input,
      links: proof.links,
      previousChainHash: proof.previous_chain_hash,
      head: { signature: proof.head.signature },
    });
    // Someone else's token, naming this workspace.
    const outsider = createClient({ baseUrl: h.url, token: owner, workspace });
    await expect(outsider.ledger.head()).rejects.toMatchObject({ code: 'not_found' });
    await expect(outsider.ledger.proof({ id: written.revision.id })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('refuses a subject it cannot prove and a head outside the chain', async () => {
    const written = await create('bounds');
    await expect(client.ledger.proof({ id: 'rev_000000000000000000000000' })).rejects.toMatchObject({
      code: 'not_found',
    });
    await expect(client.ledger.proof({ id: written.revision.id, head_sequence: 1 })).rejects.toMatchObject({
      code: 'invalid_input',
    });
  });
});

describe('LEDGER_SIGNING_KEY_FILE', () => {
  it("signs heads with the operator's Ed25519 key and publishes it; any other key type stops the start", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-ledger-key-'));
    const file = path.join(dir, 'ledger.pem');
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
    fs.writeFileSync(file, privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const h = await startHarness({ driver: 'pglite', env: { LEDGER_SIGNING_KEY_FILE: file } });
    try {
      const created = await h.workspace();
      const client = createClient({ baseUrl: h.url, token: await created.owner.token(), workspace: created.id });
      const jwks = (await (await fetch(`${h.url}/.well-known/ledger-keys.json`)).json()) as { keys: LedgerJwk[] };
      expect(jwks.keys.map((k) => k.x)).toEqual([(publicKey.export({ format: 'jwk' }) as { x: string }).x]);
      expect(await verifyLedgerHead(await client.ledger.head(), jwks)).toBe(true);
    } finally {
      await h.close();
    }
    fs.writeFileSync(
      file,
      crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }),
    );
    await expect(startHarness({ driver: 'pglite', env: { LEDGER_SIGNING_KEY_FILE: file } })).rejects.toThrow(
      'must hold an Ed25519 private key',
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
