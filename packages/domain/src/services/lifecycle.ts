import type {
  evidenceForget,
  MemoryDeletionReceipt,
  memoriesAttest,
  memoriesCorrect,
  memoriesForget,
  memoriesList,
  OperationInput,
  OperationOutput,
} from '@tms/catalog';
import { type CommitStamp, type DeletionReceiptRow, newId, type RevisionRow } from '@tms/ledger';
import type { WorkspaceAccess } from '../access';
import { type HandlerContext, requireAccess } from '../context';
import { DomainError } from '../errors';
import { presentCommit, presentRevision, sha256Hex } from '../present';
import { END_OF_TIME } from '../temporal';
import { authorizedEvidence } from './evidence';
import { attestationFor, citedEvidence, citedRevisions, presentMemory } from './memories';

type InvalidationReason = 'support_corrected' | 'support_deleted';

/**
 * The memory a lifecycle write addresses, its capability checked and its generation compared
 * with `expected_generation` (optimistic concurrency): a mismatch is `conflict`.
 */
async function memoryForWrite(
  ctx: HandlerContext,
  id: string,
  capability: 'verify' | 'correct' | 'forget',
  expectedGeneration: number,
) {
  const access = requireAccess(ctx);
  const memory = await ctx.stores.memories.get(access.workspaceId, id);
  if (!memory || memory.purgedAt !== null) throw new DomainError('not_found');
  await access.requireById(memory.namespaceId, capability);
  if (memory.generation !== expectedGeneration) throw new DomainError('conflict', 'generation changed');
  const revisions = await ctx.stores.memories.revisionsKnownAt(access.workspaceId, memory.id, { knownAt: END_OF_TIME });
  const current = revisions.find((r) => r.recordedUntil === null) ?? null;
  return { access, memory, revisions, current };
}

function requireCurrent(current: RevisionRow | null): RevisionRow {
  if (!current || current.text === null) throw new DomainError('conflict', 'the memory was retracted');
  return current;
}

/** Current revisions resting on any of `causes`, each with the first cause it lists. */
async function dependentsOf(access: WorkspaceAccess, causes: readonly string[]) {
  const rows = await access.stores.memories.currentDependents(access.workspaceId, causes);
  const causeSet = new Set(causes);
  return rows.map((row) => ({ row, cause: row.supportRevisionIds.find((id) => causeSet.has(id)) as string }));
}

/** Mark dependents stale in the write's own transaction (decisions §3). */
async function invalidate(
  access: WorkspaceAccess,
  dependents: Awaited<ReturnType<typeof dependentsOf>>,
  at: number,
  reason: InvalidationReason,
) {
  const byCause = new Map<string, string[]>();
  for (const { row, cause } of dependents) byCause.set(cause, [...(byCause.get(cause) ?? []), row.id]);
  for (const [cause, ids] of byCause) {
    await access.stores.memories.invalidate(access.workspaceId, ids, { at, causeRevisionId: cause, reason });
  }
}

/** Write `next` as the new current revision superseding `current`, invalidating its dependents. */
async function supersede(
  ctx: HandlerContext,
  access: WorkspaceAccess,
  current: RevisionRow,
  next: Omit<RevisionRow, 'recordedAt' | 'commitSequence' | 'attestationRecordedAt'> & {
    hasAttestation: boolean;
  },
  dependents: Awaited<ReturnType<typeof dependentsOf>>,
): Promise<{ revision: RevisionRow; stamp: CommitStamp }> {
  const stamp = await ctx.commit(access.workspaceId, [current.memoryId, next.id]);
  const { hasAttestation, ...fields } = next;
  const revision: RevisionRow = {
    ...fields,
    recordedAt: stamp.recordedAt,
    commitSequence: stamp.sequence,
    attestationRecordedAt: hasAttestation ? stamp.recordedAt : null,
  };
  await access.stores.memories.endRecord(access.workspaceId, current.id, stamp.recordedAt);
  await access.stores.memories.insertRevision(revision, revision.generation);
  await invalidate(access, dependents, stamp.recordedAt, 'support_corrected');
  return { revision, stamp };
}

export async function correctMemory(
  input: OperationInput<typeof memoriesCorrect>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof memoriesCorrect>> {
  const found = await memoryForWrite(ctx, input.id, 'correct', input.expected_generation);
  const { access, memory } = found;
  const current = requireCurrent(found.current);
  const text = input.text ?? (current.text as string);
  const validFrom = input.valid_from ?? current.validFrom;
  const validTo = input.valid_to !== undefined ? input.valid_to : current.validTo;
  if (validTo !== null && validTo <= validFrom)
    throw new DomainError('invalid_input', 'body.valid_to: must be after valid_from');
  const evidenceIds = input.evidence_ids ?? current.evidenceIds;
  const supportRevisionIds = input.support_revision_ids ?? current.supportRevisionIds;
  await citedEvidence(access, evidenceIds);
  await citedRevisions(access, supportRevisionIds, memory.id, input.support_revision_ids === undefined);
  const namespace = await access.requireById(memory.namespaceId, 'correct');
  const attestation = await attestationFor(access, await access.capabilitiesOn(namespace), evidenceIds);
  const dependents = await dependentsOf(access, [current.id]);
  const generation = memory.generation + 1;
  const next = {
    ...current,
    id: newId('rev'),
    generation,
    text,
    status: attestation ? ('asserted' as const) : ('candidate' as const),
    validFrom,
    validTo,
    recordedUntil: null,
    evidenceIds,
    supportRevisionIds,
    attestationId: attestation ? newId('att') : null,
    claimSha256: attestation ? sha256Hex(text) : null,
    attestationEvidenceIds: attestation?.evidenceIds ?? null,
    attestationVerificationIds: attestation?.verificationIds ?? null,
    attestationVerifierActorId: attestation ? ctx.caller.actorId : null,
    invalidatedAt: null,
    invalidationCauseRevisionId: null,
    invalidationReason: null,
    hasAttestation: attestation !== null,
  };
  const invalidatedIds = dependents.map((d) => d.row.id);
  if (input.dry_run) {
    const at = await ctx.now();
    const { hasAttestation, ...fields } = next;
    const preview: RevisionRow = {
      ...fields,
      recordedAt: at,
      commitSequence: 0,
      attestationRecordedAt: hasAttestation ? at : null,
    };
    return {
      memory: presentMemory(memory, generation),
      revision: presentRevision(preview),
      invalidated_revision_ids: invalidatedIds,
      commit: null,
    };
  }
  const { revision, stamp } = await supersede(ctx, access, current, next, dependents);
  return {
    memory: presentMemory(memory, generation),
    revision: presentRevision(revision),
    invalidated_revision_ids: invalidatedIds,
    commit: presentCommit(stamp),
  };
}

export async function attestMemory(
  input: OperationInput<typeof memoriesAttest>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof memoriesAttest>> {
  const found = await memoryForWrite(ctx, input.id, 'verify', input.expected_generation);
  const { access, memory } = found;
  const current = requireCurrent(found.current);
  await citedEvidence(access, input.evidence_ids);
  const cited = new Set(input.evidence_ids);
  const given = await ctx.stores.evidence.verificationsByIds(access.workspaceId, input.verification_ids);
  if (given.length !== input.verification_ids.length)
    throw new DomainError('invalid_input', 'body.verification_ids: names an unknown verification');
  for (const v of given) {
    if (!cited.has(v.evidenceId) || v.verdict !== 'verified') {
      throw new DomainError(
        'invalid_input',
        'body.verification_ids: each must be a verified verdict on one of the cited evidence items',
      );
    }
  }
  const covered = new Set(given.map((v) => v.evidenceId));
  if (input.evidence_ids.some((id) => !covered.has(id))) {
    throw new DomainError('invalid_input', 'body.verification_ids: every cited evidence item needs a verification');
  }
  const all = await ctx.stores.evidence.verificationsOf(access.workspaceId, input.evidence_ids, END_OF_TIME);
  if (all.some((v) => v.verdict === 'rejected')) throw new DomainError('conflict', 'cited evidence was rejected');
  // The new revision copies the supports, which must still be current, as in a correction:
  // otherwise attesting would make a stale memory read as not stale.
  await citedRevisions(access, current.supportRevisionIds, memory.id, true);

  const dependents = await dependentsOf(access, [current.id]);
  const generation = memory.generation + 1;
  const { revision, stamp } = await supersede(
    ctx,
    access,
    current,
    {
      ...current,
      id: newId('rev'),
      generation,
      status: 'asserted',
      recordedUntil: null,
      attestationId: newId('att'),
      claimSha256: sha256Hex(current.text as string),
      attestationEvidenceIds: input.evidence_ids,
      attestationVerificationIds: input.verification_ids,
      attestationVerifierActorId: ctx.caller.actorId,
      invalidatedAt: null,
      invalidationCauseRevisionId: null,
      invalidationReason: null,
      hasAttestation: true,
    },
    dependents,
  );
  return {
    memory: presentMemory(memory, generation),
    revision: presentRevision(revision),
    commit: presentCommit(stamp),
  };
}

/** Keep the deletion receipt in the ledger, stamped by the purge's own commit. */
function recordReceipt(
  ctx: HandlerContext,
  workspaceId: string,
  stamp: CommitStamp,
  receipt: Pick<
    DeletionReceiptRow,
    'id' | 'subjectKind' | 'subjectId' | 'namespaceId' | 'revisionIds' | 'erasedSha256' | 'erasedKeySha256'
  >,
): Promise<void> {
  return ctx.stores.receipts.insert({
    ...receipt,
    workspaceId,
    recorderActorId: ctx.caller.actorId,
    recordedAt: stamp.recordedAt,
    commitSequence: stamp.sequence,
  });
}

export async function forgetMemory(
  input: OperationInput<typeof memoriesForget>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof memoriesForget>> {
  const found = await memoryForWrite(ctx, input.id, 'forget', input.expected_generation);
  const { access, memory } = found;

  if (input.mode === 'retract') {
    const current = requireCurrent(found.current);
    const dependents = await dependentsOf(access, [current.id]);
    if (input.dry_run) {
      return {
        memory: presentMemory(memory, memory.generation),
        revision: presentRevision({ ...current, recordedUntil: await ctx.now() }),
        commit: null,
      };
    }
    const stamp = await ctx.commit(access.workspaceId, [memory.id, current.id]);
    await ctx.stores.memories.endRecord(access.workspaceId, current.id, stamp.recordedAt);
    // A retracted memory no longer holds its key (decisions §12): a new memory may take it.
    await ctx.stores.memories.markRetracted(access.workspaceId, memory.id, stamp.recordedAt);
    await invalidate(access, dependents, stamp.recordedAt, 'support_deleted');
    return {
      memory: presentMemory(memory, memory.generation),
      revision: presentRevision({ ...current, recordedUntil: stamp.recordedAt }),
      commit: presentCommit(stamp),
    };
  }

  // Purge: erase every revision's text and the key, prove what was erased by hash.
  const revisions = [...found.revisions].sort((a, b) => a.generation - b.generation);
  const revisionIds = revisions.map((r) => r.id);
  const dependents = (await dependentsOf(access, revisionIds)).filter((d) => d.row.memoryId !== memory.id);
  const receipt: MemoryDeletionReceipt = {
    id: newId('rcp'),
    memory_id: memory.id,
    namespace_id: memory.namespaceId,
    mode: 'purge',
    revision_ids: revisionIds,
    erased_text_sha256: revisions.map((r) => sha256Hex(r.text ?? '')),
    // Only a keyed memory's receipt names a key (decisions §12); others keep their old shape.
    ...(memory.key === null ? {} : { erased_key_sha256: sha256Hex(memory.key) }),
    recorder_actor_id: ctx.caller.actorId,
    recorded_at: 0,
  };
  if (input.dry_run) return { receipt: { ...receipt, recorded_at: await ctx.now() }, commit: null };
  const stamp = await ctx.commit(access.workspaceId, [memory.id, receipt.id]);
  await ctx.stores.memories.purge(access.workspaceId, memory.id, stamp.recordedAt);
  await ctx.stores.idempotency.eraseBySubjects(access.workspaceId, [memory.id, ...revisionIds]);
  await invalidate(access, dependents, stamp.recordedAt, 'support_deleted');
  await recordReceipt(ctx, access.workspaceId, stamp, {
    id: receipt.id,
    subjectKind: 'memory',
    subjectId: memory.id,
    namespaceId: memory.namespaceId,
    revisionIds,
    erasedSha256: receipt.erased_text_sha256,
    erasedKeySha256: receipt.erased_key_sha256 ?? null,
  });
  return { receipt: { ...receipt, recorded_at: stamp.recordedAt }, commit: presentCommit(stamp) };
}

export async function forgetEvidence(
  input: OperationInput<typeof evidenceForget>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof evidenceForget>> {
  const row = await authorizedEvidence(ctx, input.id, 'forget');
  const receipt = {
    id: newId('rcp'),
    evidence_id: row.id,
    namespace_id: row.namespaceId,
    mode: 'purge' as const,
    erased_excerpt_sha256: row.excerptSha256,
    recorder_actor_id: ctx.caller.actorId,
    recorded_at: 0,
  };
  if (input.dry_run) return { receipt: { ...receipt, recorded_at: await ctx.now() }, commit: null };
  const stamp = await ctx.commit(row.workspaceId, [row.id, receipt.id]);
  await ctx.stores.evidence.purge(row.workspaceId, row.id, stamp.recordedAt);
  await ctx.stores.idempotency.eraseBySubjects(row.workspaceId, [row.id]);
  await recordReceipt(ctx, row.workspaceId, stamp, {
    id: receipt.id,
    subjectKind: 'evidence',
    subjectId: row.id,
    namespaceId: row.namespaceId,
    revisionIds: [],
    erasedSha256: [row.excerptSha256],
    erasedKeySha256: null,
  });
  return { receipt: { ...receipt, recorded_at: stamp.recordedAt }, commit: presentCommit(stamp) };
}

export async function listMemories(
  input: OperationInput<typeof memoriesList>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof memoriesList>> {
  const access = requireAccess(ctx);
  const namespace = await access.requireById(input.namespace_id, 'read');
  // A cursor carries the snapshot (as_of, known_at) of its first page, and is bound to the filter
  // (a key by its hash: a cursor stays short and never carries the key).
  const keyFilter = input.key === undefined ? '' : `:${sha256Hex(input.key)}`;
  const scope = `memories.list:${access.workspaceId}:${namespace.id}:${input.kind ?? ''}${keyFilter}`;
  const after = ctx.cursors.decode<{ m: string; k: number; a: number }>(scope, input.cursor);
  if (
    after &&
    ((input.known_at !== undefined && input.known_at !== after.k) ||
      (input.as_of !== undefined && input.as_of !== after.a))
  ) {
    throw new DomainError('invalid_input', 'query.cursor: issued for another as_of or known_at');
  }
  const now = after || (input.known_at !== undefined && input.as_of !== undefined) ? 0 : await ctx.now();
  const knownAt = after?.k ?? input.known_at ?? now;
  const asOf = after?.a ?? input.as_of ?? now;
  // Each row with its memory's newest generation by knownAt, in the same statement.
  const listed = await ctx.stores.memories.listCurrentWithGenerations(access.workspaceId, {
    namespaceId: namespace.id,
    kind: input.kind,
    key: input.key,
    asOf,
    knownAt,
    afterMemoryId: after?.m ?? null,
    limit: input.limit + 1,
  });
  const page = listed.slice(0, input.limit);
  const last = page.at(-1)?.revision;
  return {
    items: page.map(({ revision: r, generation, key }) => ({
      memory: presentMemory({ id: r.memoryId, namespaceId: r.namespaceId, kind: r.kind, key }, generation),
      revision: presentRevision(r, knownAt),
      stale: r.invalidatedAt !== null && r.invalidatedAt <= knownAt,
    })),
    next_cursor:
      listed.length > input.limit && last ? ctx.cursors.encode(scope, { m: last.memoryId, k: knownAt, a: asOf }) : null,
  };
}
