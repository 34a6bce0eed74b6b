import { CAPABILITIES, type meGet, type OperationInput, type OperationOutput, workspaceIdSchema } from '@tms/catalog';
import type { HandlerContext } from '../context';
import { DomainError } from '../errors';

export async function getMe(
  _input: OperationInput<typeof meGet>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof meGet>> {
  const { caller } = ctx;
  let workspaceId = caller.boundWorkspaceId;
  if (!workspaceId && ctx.selectedWorkspaceId) {
    // Checked as every workspace operation checks it (an agent tool's workspace_id reaches here as is).
    if (!workspaceIdSchema.safeParse(ctx.selectedWorkspaceId).success) {
      throw new DomainError('invalid_input', 'X-Service-Workspace: is not a workspace id');
    }
    const role = await ctx.stores.memberships.roleOf(ctx.selectedWorkspaceId, caller.actorId);
    if (!role) throw new DomainError('not_found', 'not a member of the selected workspace');
    workspaceId = ctx.selectedWorkspaceId;
  }
  return {
    actor: { id: caller.actorId, issuer: caller.issuer, subject: caller.subject },
    caller_kind: caller.kind,
    workspace_id: workspaceId,
    scopes: caller.scopes ? [...caller.scopes] : CAPABILITIES.map((c) => `svc:${c}`),
  };
}
