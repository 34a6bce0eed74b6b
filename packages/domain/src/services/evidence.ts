import {
  type evidenceCreate,
  type evidenceGet,
  type evidenceVerify,
  MAX_REFERENCES,
  type OperationInput,
  type OperationOutput,
} from '@tms/catalog';
import { type EvidenceRow, newId, type VerificationRow } from '@tms/ledger';
import { type HandlerContext, requireAccess } from '../context';
import type { CursorCodec } from '../cursor';
import { DomainError } from '../errors';
import { presentCommit, presentEvidence, presentVerification, sha256Hex } from '../present';
import { END_OF_TIME } from '../temporal';

export async function createEvidence(
  input: OperationInput<typeof evidenceCreate>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof evidenceCreate>> {
  const access = requireAccess(ctx);
  const namespace = await access.requireById(input.namespace_id, 'observe');
  const excerptSha256 = sha256Hex(input.excerpt);
  if (input.content_root_sha256 !== excerptSha256) {
    throw new DomainError('invalid_input', 'body.content_root_sha256: is not the SHA-256 of the excerpt');
  }
  const existing = await ctx.stores.evidence.findByHash(access.workspaceId, namespace.id, excerptSha256);
  if (existing && existing.excerpt !== null) {
    ctx.shows([existing.id]);
    return {
      evidence: presentEvidence(existing),
      commit: { sequence: existing.commitSequence, recorded_at: existing.recordedAt },
    };
  }
  const id = newId('ev');
  const stamp = await ctx.commit(access.workspaceId, [id]);
  const row: EvidenceRow = {
    workspaceId: access.workspaceId,
    id,
    namespaceId: namespace.id,
    sourceLocator: input.source_locator,
    contentRootSha256: input.content_root_sha256,
    excerpt: input.excerpt,
    excerptSha256,
    recorderActorId: ctx.caller.actorId,
    recordedAt: stamp.recordedAt,
    commitSequence: stamp.sequence,
    purgedAt: null,
  };
  await ctx.stores.evidence.insert(row);
  return { evidence: presentEvidence(row), commit: presentCommit(stamp) };
}

/** Evidence the caller holds `capability` on; absent, purged and unreadable are one `not_found`. */
export async function authorizedEvidence(ctx: HandlerContext, id: string, capability: 'read' | 'verify' | 'forget') {
  const access = requireAccess(ctx);
  const row = await ctx.stores.evidence.get(access.workspaceId, id);
  if (!row || row.excerpt === null) throw new DomainError('not_found');
  await access.requireById(row.namespaceId, capability);
  return row;
}

/** The cursor scope of one evidence item's verification pages (evidence.get and batched nested reads). */
export const verificationCursorScope = (workspaceId: string, evidenceId: string) =>
  `evidence.get:${workspaceId}:${evidenceId}`;

/** A verification page cursor's position: after (recorded_at, id). */
export type VerificationPosition = { r: number; i: string };

/** A page of verifications from up to MAX_REFERENCES + 1 rows, oldest first: what is shown and the next cursor. */
export function verificationPage(rows: readonly VerificationRow[], cursors: CursorCodec, scope: string) {
  const shown = rows.slice(0, MAX_REFERENCES);
  const last = shown.at(-1);
  return {
    verifications: shown.map(presentVerification),
    next_cursor:
      rows.length > MAX_REFERENCES && last
        ? cursors.encode(scope, { r: last.recordedAt, i: last.id } satisfies VerificationPosition)
        : null,
  };
}

export async function getEvidence(
  input: OperationInput<typeof evidenceGet>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof evidenceGet>> {
  const access = requireAccess(ctx);
  // The scope names the row found, which is (this workspace, input.id). The cursor is decoded
  // before the one statement that needs its position, but a bad one is answered only after the
  // evidence proved readable, as when it was decoded after.
  const scope = verificationCursorScope(access.workspaceId, input.id);
  let after: VerificationPosition | null = null;
  let badCursor: unknown = null;
  try {
    after = ctx.cursors.decode<VerificationPosition>(scope, input.cursor);
  } catch (error) {
    badCursor = error;
  }
  const view = await ctx.stores.evidence.readView(access.workspaceId, input.id, access.standingQuery(), {
    knownAt: END_OF_TIME,
    after: after && { recordedAt: after.r, id: after.i },
    limit: MAX_REFERENCES + 1,
  });
  access.adopt(view.standing);
  const row = view.evidence;
  if (!row || row.excerpt === null) throw new DomainError('not_found');
  access.primeNamespace(row.namespaceId, view.namespace);
  await access.requireById(row.namespaceId, 'read');
  if (badCursor !== null) throw badCursor;
  return { evidence: presentEvidence(row), ...verificationPage(view.verifications, ctx.cursors, scope) };
}

export async function verifyEvidence(
  input: OperationInput<typeof evidenceVerify>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof evidenceVerify>> {
  const row = await authorizedEvidence(ctx, input.id, 'verify');
  if (
    input.expected_content_root_sha256 !== row.contentRootSha256 ||
    input.expected_excerpt_sha256 !== row.excerptSha256
  ) {
    throw new DomainError('conflict', 'expected hashes differ from the ledger');
  }
  const id = newId('vf');
  const stamp = await ctx.commit(row.workspaceId, [id]);
  const verification = {
    workspaceId: row.workspaceId,
    id,
    evidenceId: row.id,
    contentRootSha256: row.contentRootSha256,
    excerptSha256: row.excerptSha256,
    verdict: input.verdict,
    verifierActorId: ctx.caller.actorId,
    recordedAt: stamp.recordedAt,
  };
  await ctx.stores.evidence.insertVerification(verification);
  return { verification: presentVerification(verification), commit: presentCommit(stamp) };
}
