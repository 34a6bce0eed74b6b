import { z } from 'zod';
import { defineOperation } from './operation';
import { idSchema, sequenceSchema, sha256Schema, timestampSchema, workspaceIdSchema } from './primitives';

/** The most chain links one proof carries (each is 64 hex characters): a longer span is `budget_exceeded`. */
export const MAX_PROOF_LINKS = 10_000;

/** A workspace's chain at one sequence (docs/ledger-proofs.md): what a signature covers. */
export const chainHeadSchema = z.strictObject({
  workspace_id: workspaceIdSchema,
  sequence: sequenceSchema,
  recorded_at: timestampSchema,
  chain_hash: sha256Schema,
});

/** A head and its signature by the service's ledger key (JWKS at `/.well-known/ledger-keys.json`). */
export const signedHeadSchema = z.strictObject({
  head: chainHeadSchema,
  /** Compact JWS (EdDSA, Ed25519) whose payload is the canonical JSON of `head`; its `kid` names the key. */
  signature: z.string(),
});

export const ledgerHead = defineOperation({
  name: 'ledger.head',
  summary: "The workspace's latest sequence and chain hash, signed by the service's ledger key, for a reader to keep.",
  method: 'GET',
  path: '/v1/ledger/head',
  tool: 'svc_ledger_head',
  scope: 'svc:read',
  capability: null,
  idempotent: false,
  workspace: 'selected',
  maxItems: 1,
  mutates: false,
  input: { params: z.strictObject({}), query: z.strictObject({}), body: null },
  output: signedHeadSchema,
});

export const ledgerProof = defineOperation({
  name: 'ledger.proof',
  summary:
    'Prove a revision, evidence or verification: the commit that wrote it, its digest input (hashes only) and the chain from there to a signed head.',
  method: 'GET',
  path: '/v1/ledger/proofs/{id}',
  tool: 'svc_ledger_proof',
  scope: 'svc:read',
  capability: 'read',
  idempotent: false,
  workspace: 'selected',
  maxItems: 1,
  mutates: false,
  input: {
    params: z.strictObject({ id: idSchema }),
    query: z.strictObject({
      /** The head to prove against (default: the latest); a head kept earlier is named by its sequence. */
      head_sequence: sequenceSchema.optional(),
    }),
    body: null,
  },
  output: z.strictObject({
    subject_id: idSchema,
    /** The commit that wrote the subject. */
    sequence: sequenceSchema,
    /** The chain hash before that commit (64 zeros before sequence 1). */
    previous_chain_hash: sha256Schema,
    /** The commit's digest input, as the exact canonical JSON text whose SHA-256 is its digest. */
    digest_input: z.string(),
    /** The digests of the commits after it, up to the head, in order. */
    links: z.array(sha256Schema).max(MAX_PROOF_LINKS),
    head: signedHeadSchema,
  }),
});
