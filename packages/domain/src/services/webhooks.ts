import type { OperationInput, OperationOutput, webhooksCreate, webhooksDelete, webhooksList } from '@tms/catalog';
import { newId } from '@tms/ledger';
import { mintWebhookSecret, webhookUrlProblem } from '@tms/webhooks';
import type { HandlerContext } from '../context';
import { DomainError } from '../errors';
import { presentCommit, presentWebhook } from '../present';
import { page, requireWorkspaceAdmin } from './credentials';

/**
 * Webhooks (decisions §10): registered and deleted by workspace admins, each a ledger commit.
 * The signing secret is minted here and shown once; deliveries are the indexer's.
 */

export async function listWebhooks(
  input: OperationInput<typeof webhooksList>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof webhooksList>> {
  const access = requireWorkspaceAdmin(ctx);
  const { rows, next_cursor } = await page(ctx, `webhooks.list:${access.workspaceId}`, input, (after, limit) =>
    ctx.stores.webhooks.list(access.workspaceId, after, limit),
  );
  return { webhooks: rows.map(presentWebhook), next_cursor };
}

export async function createWebhook(
  input: OperationInput<typeof webhooksCreate>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof webhooksCreate>> {
  const access = requireWorkspaceAdmin(ctx);
  const problem = webhookUrlProblem(input.url, ctx.settings.allowPrivateWebhookTargets);
  if (problem) throw new DomainError('invalid_input', `body.${problem}`);
  if (input.namespace_id !== undefined) {
    const namespace = await ctx.stores.namespaces.get(access.workspaceId, input.namespace_id);
    if (!namespace) throw new DomainError('not_found', 'no such namespace');
  }
  const id = newId('wh');
  const secret = mintWebhookSecret();
  const stamp = await ctx.commit(access.workspaceId, [id]);
  const row = {
    workspaceId: access.workspaceId,
    id,
    url: input.url,
    namespaceId: input.namespace_id ?? null,
    description: input.description ?? null,
    secret,
    createdAt: stamp.recordedAt,
    createdBy: ctx.caller.actorId,
    deletedAt: null,
    disabledAt: null,
    disabledReason: null,
    // Deliveries start with the first change after the one that created the webhook.
    deliveredSequence: stamp.sequence,
    lastDeliveredAt: null,
    lastError: null,
    lastErrorAt: null,
    failingSince: null,
    failedAttempts: 0,
    nextAttemptAt: null,
    leaseUntil: null,
  };
  await ctx.stores.webhooks.insert(row);
  return { webhook: presentWebhook(row), secret, commit: presentCommit(stamp) };
}

export async function deleteWebhook(
  input: OperationInput<typeof webhooksDelete>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof webhooksDelete>> {
  const access = requireWorkspaceAdmin(ctx);
  const row = await ctx.stores.webhooks.get(access.workspaceId, input.id);
  if (!row) throw new DomainError('not_found');
  if (row.deletedAt !== null) return { webhook: presentWebhook(row), commit: null };
  const stamp = await ctx.commit(access.workspaceId, [row.id]);
  await ctx.stores.webhooks.markDeleted(access.workspaceId, row.id, stamp.recordedAt);
  return {
    webhook: presentWebhook({ ...row, deletedAt: stamp.recordedAt, nextAttemptAt: null }),
    commit: presentCommit(stamp),
  };
}
