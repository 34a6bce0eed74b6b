import type {
  OperationInput,
  OperationOutput,
  workspacesCreate,
  workspacesList,
  workspacesMembersPut,
} from '@tms/catalog';
import { newId } from '@tms/ledger';
import { grantTargetsOf } from '../caller';
import { type HandlerContext, requireAccess } from '../context';
import { DomainError } from '../errors';
import { presentCommit, presentWorkspace } from '../present';

export async function listWorkspaces(
  input: OperationInput<typeof workspacesList>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof workspacesList>> {
  const { caller, stores, cursors } = ctx;
  const scope = `workspaces.list:${caller.principal}`;
  const after = cursors.decode<{ c: number; i: string }>(scope, input.cursor);
  const rows = caller.boundWorkspaceId
    ? await boundWorkspace(ctx, caller.boundWorkspaceId, after)
    : await stores.directory.listWorkspacesOf(
        caller.actorId,
        after && { createdAt: after.c, id: after.i },
        input.limit + 1,
      );
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  const canCreate = caller.kind === 'session' && (await stores.directory.isEnrolled(caller.issuer, caller.subject));
  return {
    workspaces: page.map(presentWorkspace),
    next_cursor: rows.length > input.limit && last ? cursors.encode(scope, { c: last.createdAt, i: last.id }) : null,
    enrollment: { can_create_workspace: canCreate, policy: 'admin_managed_pilot' },
  };
}

/**
 * A credential lists its bound workspace: a service key always, an installation credential
 * only while it or its installation holds a grant there (the spec's "installation grants").
 */
async function boundWorkspace(ctx: HandlerContext, workspaceId: string, after: unknown) {
  if (after) return [];
  const credential = ctx.caller.credential;
  if (credential?.installationId) {
    const grants = await ctx.stores.namespaces.grantsFor(workspaceId, grantTargetsOf(credential));
    if (grants.length === 0) return [];
  }
  const row = await ctx.stores.directory.getWorkspace(workspaceId);
  return row ? [row] : [];
}

export async function createWorkspace(
  input: OperationInput<typeof workspacesCreate>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof workspacesCreate>> {
  const { caller, stores } = ctx;
  if (caller.kind !== 'session') throw new DomainError('forbidden', 'workspace creation needs a human session');
  // The operator CLI is the trusted caller that enrollment is granted by: it needs none itself.
  if (!caller.operator && !(await stores.directory.isEnrolled(caller.issuer, caller.subject))) {
    throw new DomainError('enrollment_required');
  }
  const id = newId('ws');
  await stores.commits.createHead(id);
  const stamp = await ctx.commit(id, [id]);
  const row = { id, name: input.name, createdAt: stamp.recordedAt, createdBy: caller.actorId };
  await stores.directory.insertWorkspace(row);
  await stores.memberships.replace(id, [{ actorId: caller.actorId, role: 'admin' }]);
  return { workspace: presentWorkspace(row) };
}

export async function putMembers(
  input: OperationInput<typeof workspacesMembersPut>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof workspacesMembersPut>> {
  const access = requireAccess(ctx);
  if (!access.isAdmin) throw new DomainError('forbidden', 'workspace admins only');
  const { stores } = ctx;
  const known = await stores.directory.existingActorIds(input.members.map((m) => m.actor_id));
  if (input.members.some((m) => !known.has(m.actor_id)))
    throw new DomainError('invalid_input', 'body.members: names an unknown actor');
  if (!input.members.some((m) => m.role === 'admin'))
    throw new DomainError('conflict', 'the last admin cannot be removed');
  const stamp = await ctx.commit(access.workspaceId, [access.workspaceId]);
  await stores.memberships.replace(
    access.workspaceId,
    input.members.map((m) => ({ actorId: m.actor_id, role: m.role })),
  );
  return { workspace_id: access.workspaceId, members: input.members, commit: presentCommit(stamp) };
}
