import {
  type ledgerHead,
  type ledgerProof,
  MAX_PROOF_LINKS,
  type OperationInput,
  type OperationOutput,
} from '@tms/catalog';
import { canonicalJson, commitDigest, VERIFY_BATCH } from '@tms/ledger';
import { type HandlerContext, requireAccess } from '../context';
import { DomainError } from '../errors';

const NOT_CHAINED = 'the ledger is not chained yet: run svc migrate';

/** A workspace's chain hash at a sequence, signed by the service's ledger key. */
async function sign(
  ctx: HandlerContext,
  workspaceId: string,
  at: { sequence: number; recordedAt: number; chainHash: string | null } | null,
) {
  if (!at?.chainHash) throw new DomainError('unavailable', NOT_CHAINED);
  const head = {
    workspace_id: workspaceId,
    sequence: at.sequence,
    recorded_at: at.recordedAt,
    chain_hash: at.chainHash,
  };
  return { head, signature: (await ctx.ledgerKey()).sign(head) };
}

export async function getLedgerHead(
  _input: OperationInput<typeof ledgerHead>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof ledgerHead>> {
  const access = requireAccess(ctx);
  return sign(ctx, access.workspaceId, await ctx.stores.chain.head(access.workspaceId));
}

/**
 * A proof for a revision, evidence or verification (docs/ledger-proofs.md). Every digest is
 * recomputed from the rows as they are now, so a row changed since a reader kept a head shows
 * as a chain that no longer reaches that head.
 */
export async function getLedgerProof(
  input: OperationInput<typeof ledgerProof>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof ledgerProof>> {
  const access = requireAccess(ctx);
  const workspaceId = access.workspaceId;
  const writer = await ctx.stores.chain.writerOf(workspaceId, input.id);
  if (!writer) throw new DomainError('not_found');
  await access.requireById(writer.namespaceId, 'read');
  const current = await ctx.stores.chain.head(workspaceId);
  const headSequence = input.head_sequence ?? current?.sequence ?? 0;
  if (headSequence < writer.sequence || headSequence > (current?.sequence ?? 0)) {
    throw new DomainError(
      'invalid_input',
      `query.head_sequence: must lie between the commit that wrote ${input.id} (${writer.sequence}) and the head (${current?.sequence ?? 0})`,
    );
  }
  if (headSequence - writer.sequence > MAX_PROOF_LINKS) {
    throw new DomainError(
      'budget_exceeded',
      `query.head_sequence: a proof spans at most ${MAX_PROOF_LINKS} commits (the limit): ask with head_sequence up to ${writer.sequence + MAX_PROOF_LINKS}`,
    );
  }
  const previous = await ctx.stores.commits.chainHashAt(workspaceId, writer.sequence - 1);
  if (previous === null) throw new DomainError('unavailable', NOT_CHAINED);
  const links: string[] = [];
  let digestInput = '';
  for (let next = writer.sequence; next <= headSequence; ) {
    const rows = await ctx.stores.chain.commits(workspaceId, next, headSequence, VERIFY_BATCH);
    if (rows[0]?.sequence !== next) throw new DomainError('internal', `commit ${next} is missing`);
    const inputs = await ctx.stores.chain.digestInputs(workspaceId, rows);
    inputs.forEach((digestOf, i) => {
      if (rows[i]?.sequence === writer.sequence) digestInput = canonicalJson(digestOf);
      else links.push(commitDigest(digestOf));
    });
    next = (rows.at(-1)?.sequence ?? headSequence) + 1;
  }
  return {
    subject_id: input.id,
    sequence: writer.sequence,
    previous_chain_hash: previous,
    digest_input: digestInput,
    links,
    // The head as stored at that sequence: a chain recomputed from changed rows no longer reaches it.
    head: await sign(ctx, workspaceId, await ctx.stores.chain.commit(workspaceId, headSequence)),
  };
}
