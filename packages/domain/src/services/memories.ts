import {
  MAX_REFERENCES,
  type Memory,
  type MemoryView,
  type memoriesCreate,
  type memoriesGet,
  type memoriesHistory,
  type OperationInput,
  type OperationOutput,
} from '@tms/catalog';
import { type MemoryRow, newId, type RevisionRow, type RevisionsAsKnown, type Stores } from '@tms/ledger';
import type { WorkspaceAccess } from '../access';
import { type HandlerContext, requireAccess } from '../context';
import { DomainError } from '../errors';
import { presentCommit, presentEvidence, presentRevision, presentVerification, sha256Hex } from '../present';
import { currentRevision, END_OF_TIME, isValidAt } from '../temporal';

/** Evidence cited by a new revision: each must exist, be unpurged and be readable. */
export async function citedEvidence(access: WorkspaceAccess, ids: readonly string[]) {
  const rows = await access.stores.evidence.getMany(access.workspaceId, ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const id of ids) {
    const row = byId.get(id);
    if (!row || row.excerpt === null) throw new DomainError('not_found', `evidence ${id}`);
    const namespace = await access.namespace(row.namespaceId);
    if (!namespace || !(await access.canRead(namespace))) throw new DomainError('not_found', `evidence ${id}`);
  }
  return ids.map((id) => byId.get(id)).filter((r) => r !== undefined);
}

/**
 * Supporting revisions: readable, unpurged, and still current (not superseded). Supports a new
 * revision copies from the current one (`copied`) were not named by the caller, so a purged one
 * is `conflict` like a superseded one (the memory itself exists), not `not_found`.
 */
export async function citedRevisions(
  access: WorkspaceAccess,
  ids: readonly string[],
  ownMemoryId?: string,
  copied = false,
) {
  const rows = await access.stores.memories.getRevisions(access.workspaceId, ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const id of ids) {
    const row = byId.get(id);
    if (!row || (row.text === null && !copied)) throw new DomainError('not_found', `revision ${id}`);
    const namespace = await access.namespace(row.namespaceId);
    if (!namespace || !(await access.canRead(namespace))) throw new DomainError('not_found', `revision ${id}`);
    if (row.text === null) throw new DomainError('conflict', `revision ${id} was purged`);
    if (row.memoryId === ownMemoryId)
      throw new DomainError('invalid_input', 'body.support_revision_ids: a memory cannot support itself');
    if (row.recordedUntil !== null) throw new DomainError('conflict', `revision ${id} is no longer current`);
  }
}

/**
 * The attestation a new revision earns at creation: the caller holds `verify`, it cites
 * evidence, and every cited item has a `verified` verification and no `rejected` one. It
 * names, per evidence item, its latest `verified` verification.
 */
export async function attestationFor(
  access: WorkspaceAccess,
  namespaceCapabilities: Set<string>,
  evidenceIds: readonly string[],
) {
  if (!namespaceCapabilities.has('verify') || evidenceIds.length === 0) return null;
  const verifications = await access.stores.evidence.verificationsOf(access.workspaceId, evidenceIds, END_OF_TIME);
  const latestVerified = new Map<string, string>();
  for (const v of verifications) {
    if (v.verdict === 'rejected') return null;
    latestVerified.set(v.evidenceId, v.id);
  }
  const verificationIds = evidenceIds.map((id) => latestVerified.get(id));
  if (verificationIds.some((id) => id === undefined)) return null;
  return { evidenceIds: [...evidenceIds], verificationIds: verificationIds as string[] };
}

/**
 * decisions §12, the one rule of external keys: within a namespace at most one memory that is
 * neither retracted nor purged holds a key. A create naming a held key is `conflict`, and its
 * detail names the holder (the caller corrects that memory instead). Keys compare exactly, byte
 * for byte of their UTF-8 (so code point for code point). The `memories_key_held` index enforces
 * the same against concurrent creates: the loser's transaction fails, and its retry meets this rule.
 */
export async function requireKeyFree(stores: Stores, workspaceId: string, namespaceId: string, key: string) {
  const holder = await stores.memories.keyHolder(workspaceId, namespaceId, key);
  if (holder !== null) throw keyHeldBy(holder);
}

function keyHeldBy(holderId: string): DomainError {
  return new DomainError('conflict', `body.key: held by memory ${holderId}`, null, true);
}

/**
 * A create that lost the race for its key even on the ledger's retry (the index refused it
 * again): the same `conflict` as the rule's, naming the holder found now (a holder retracted
 * meanwhile leaves the conflict unnamed; a retry of the create may then succeed).
 */
export async function keyRaceLost(stores: Stores, workspaceId: string, namespaceId: string, key: string) {
  const holder = await stores.memories.keyHolder(workspaceId, namespaceId, key);
  return holder === null ? new DomainError('conflict', 'body.key: taken by a concurrent create') : keyHeldBy(holder);
}

/**
 * What two writes in one group commit batch must not share: a create's key in its namespace (the
 * second would not see the first's row, and the batch would fail on the index as a whole).
 */
export function keyClaimOf(input: { namespace_id?: unknown; key?: unknown }): string | null {
  return typeof input.key === 'string' && typeof input.namespace_id === 'string'
    ? `memory-key\u001f${input.namespace_id}\u001f${input.key}`
    : null;
}

export async function createMemory(
  input: OperationInput<typeof memoriesCreate>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof memoriesCreate>> {
  const access = requireAccess(ctx);
  const namespace = await access.requireById(input.namespace_id, 'observe');
  await citedEvidence(access, input.evidence_ids);
  await citedRevisions(access, input.support_revision_ids);
  const attestation = await attestationFor(access, await access.capabilitiesOn(namespace), input.evidence_ids);
  const key = input.key ?? null;
  if (key !== null) await requireKeyFree(access.stores, access.workspaceId, namespace.id, key);

  const memoryId = newId('mem');
  const revisionId = newId('rev');
  const stamp = await ctx.commit(access.workspaceId, [memoryId, revisionId]);
  const memory: MemoryRow = {
    workspaceId: access.workspaceId,
    id: memoryId,
    namespaceId: namespace.id,
    kind: input.kind,
    generation: 1,
    createdAt: stamp.recordedAt,
    purgedAt: null,
    key,
    keySha256: key === null ? null : sha256Hex(key),
    retractedAt: null,
  };
  const revision: RevisionRow = {
    workspaceId: access.workspaceId,
    id: revisionId,
    memoryId,
    namespaceId: namespace.id,
    kind: input.kind,
    generation: 1,
    text: input.text,
    status: attestation ? 'asserted' : 'candidate',
    validFrom: input.valid_from,
    validTo: input.valid_to,
    recordedAt: stamp.recordedAt,
    recordedUntil: null,
    commitSequence: stamp.sequence,
    evidenceIds: input.evidence_ids,
    supportRevisionIds: input.support_revision_ids,
    attestationId: attestation ? newId('att') : null,
    claimSha256: attestation ? sha256Hex(input.text) : null,
    attestationEvidenceIds: attestation?.evidenceIds ?? null,
    attestationVerificationIds: attestation?.verificationIds ?? null,
    attestationVerifierActorId: attestation ? ctx.caller.actorId : null,
    attestationRecordedAt: attestation ? stamp.recordedAt : null,
    invalidatedAt: null,
    invalidationCauseRevisionId: null,
    invalidationReason: null,
    purgedAt: null,
  };
  await ctx.stores.memories.insert(memory, revision);
  return {
    memory: presentMemory(memory, revision.generation),
    revision: presentRevision(revision),
    commit: presentCommit(stamp),
  };
}

export function presentMemory(row: Pick<MemoryRow, 'id' | 'namespaceId' | 'kind' | 'key'>, generation: number): Memory {
  return { id: row.id, namespace_id: row.namespaceId, kind: row.kind, generation, key: row.key };
}

/**
 * The memory and its namespace if the caller may read it (absent or unreadable is `not_found`),
 * and unless told otherwise the revisions that decide its view (`RevisionsAsKnown`), newest
 * generation first: from one statement with the caller's standing and the workspace head,
 * decided by the same rules in the same order.
 */
async function readableMemoryView(ctx: HandlerContext, id: string, options: RevisionsAsKnown = {}) {
  const access = requireAccess(ctx);
  const view = await ctx.stores.memories.readView(access.workspaceId, id, access.standingQuery(), options);
  access.adopt(view.standing);
  const memory = view.memory;
  if (!memory || memory.purgedAt !== null) throw new DomainError('not_found');
  access.primeNamespace(memory.namespaceId, view.namespace);
  await access.requireById(memory.namespaceId, 'read');
  return { access, memory, revisions: view.revisions };
}

export async function getMemory(
  input: OperationInput<typeof memoriesGet>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof memoriesGet>> {
  const { access, memory, revisions } = await readableMemoryView(ctx, input.id, { knownAt: input.known_at });
  const now = input.known_at === undefined || input.as_of === undefined ? await ctx.now() : 0;
  const knownAt = input.known_at ?? now;
  const asOf = input.as_of ?? now;
  // As `revisionsKnownAt`: those recorded by knownAt, newest generation first (of the deciding ones).
  const known = revisions.filter((r) => r.recordedAt <= knownAt);
  const revision = currentRevision(known, knownAt);
  if (!revision || revision.text === null || !isValidAt(revision, asOf)) throw new DomainError('not_found');
  const view: MemoryView = {
    memory: presentMemory(memory, known[0]?.generation ?? revision.generation),
    revision: presentRevision(revision, knownAt),
    evidence: [],
    verifications: [],
    stale: revision.invalidatedAt !== null && revision.invalidatedAt <= knownAt,
  };
  if (input.include_evidence) {
    // One more statement: the cited evidence, its namespaces and its verifications by knownAt.
    const cited = await ctx.stores.evidence.citedView(access.workspaceId, revision.evidenceIds, knownAt);
    const byId = new Map(cited.evidence.map((r) => [r.id, r]));
    const readable = await access.readableOf(cited.namespaces);
    const shown = revision.evidenceIds
      .map((id) => byId.get(id))
      .filter((r) => r !== undefined && r.excerpt !== null && r.recordedAt <= knownAt && readable.has(r.namespaceId));
    view.evidence = shown.map((r) => presentEvidence(r as NonNullable<typeof r>));
    // Those of the shown evidence only, oldest first (as `verificationsOf` the shown ids).
    const shownIds = new Set(view.evidence.map((e) => e.id));
    const verifications = cited.verifications.filter((v) => shownIds.has(v.evidenceId));
    view.verifications = verifications.slice(-MAX_REFERENCES).reverse().map(presentVerification);
  }
  return { view, as_of: asOf, known_at: knownAt };
}

export async function memoryHistory(
  input: OperationInput<typeof memoriesHistory>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof memoriesHistory>> {
  const { access, memory } = await readableMemoryView(ctx, input.id, { revisions: false });
  // A cursor carries the known_at of its first page, so that paging a default "now" is stable.
  const scope = `memories.history:${access.workspaceId}:${memory.id}`;
  const after = ctx.cursors.decode<{ g: number; k: number }>(scope, input.cursor);
  if (after && input.known_at !== undefined && input.known_at !== after.k) {
    throw new DomainError('invalid_input', 'query.cursor: issued for another known_at');
  }
  const knownAt = after?.k ?? input.known_at ?? (await ctx.now());
  const rows = await ctx.stores.memories.revisionsKnownAt(access.workspaceId, memory.id, {
    knownAt,
    beforeGeneration: after?.g,
    limit: input.limit + 1,
  });
  if (!after && rows.length === 0) throw new DomainError('not_found', 'memory not yet known');
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    revisions: page.filter((r) => r.text !== null).map((r) => presentRevision(r, knownAt)),
    next_cursor:
      rows.length > input.limit && last ? ctx.cursors.encode(scope, { g: last.generation, k: knownAt }) : null,
  };
}
