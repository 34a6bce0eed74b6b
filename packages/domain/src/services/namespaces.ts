import {
  type Capability,
  MAX_NAMESPACE_DEPTH,
  type namespacesCreate,
  type namespacesGet,
  type namespacesGrantsList,
  type namespacesGrantsPut,
  type namespacesList,
  type namespacesUpdate,
  type OperationInput,
  type OperationOutput,
} from '@tms/catalog';
import { decodePathKey, encodePathKey, type GrantRow, type GrantTarget, newId } from '@tms/ledger';
import { type HandlerContext, requireAccess } from '../context';
import { DomainError } from '../errors';
import { presentCommit, presentGrant, presentNamespace } from '../present';

export async function listNamespaces(
  input: OperationInput<typeof namespacesList>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof namespacesList>> {
  const access = requireAccess(ctx);
  if (input.parent_id !== undefined) await access.requireById(input.parent_id, 'read');
  const scope = `namespaces.list:${access.workspaceId}:${input.parent_id ?? ''}`;
  const after = ctx.cursors.decode<{ k: string; i: string }>(scope, input.cursor);
  const rows = await ctx.stores.namespaces.list(access.workspaceId, {
    parentId: input.parent_id,
    visibility: await access.readableVisibility(),
    after: after && { pathKey: Buffer.from(after.k, 'base64url'), id: after.i },
    limit: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const last = page.at(-1);
  return {
    namespaces: page.map(presentNamespace),
    next_cursor:
      rows.length > input.limit && last
        ? ctx.cursors.encode(scope, { k: last.pathKey.toString('base64url'), i: last.id })
        : null,
  };
}

export async function createNamespace(
  input: OperationInput<typeof namespacesCreate>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof namespacesCreate>> {
  const access = requireAccess(ctx);
  let ancestorIds: string[] = [];
  let parentPath: string[] = [];
  if (input.parent_id === null) {
    if (!access.isAdmin) throw new DomainError('forbidden', 'root namespaces need a workspace admin');
  } else {
    const parent = await access.requireById(input.parent_id, 'admin');
    ancestorIds = [...parent.ancestorIds, parent.id];
    parentPath = decodePathKey(parent.pathKey);
  }
  if (ancestorIds.length + 1 > MAX_NAMESPACE_DEPTH)
    throw new DomainError(
      'invalid_input',
      `body.parent_id: a namespace may be at most ${MAX_NAMESPACE_DEPTH} levels deep`,
    );
  const id = newId('ns');
  const stamp = await ctx.commit(access.workspaceId, [id]);
  const row = {
    workspaceId: access.workspaceId,
    id,
    parentId: input.parent_id,
    name: input.name,
    ancestorIds,
    pathKey: encodePathKey([...parentPath, input.name]),
    createdAt: stamp.recordedAt,
    updatedAt: stamp.recordedAt,
  };
  await ctx.stores.namespaces.insert(row);
  return { namespace: presentNamespace(row), commit: presentCommit(stamp) };
}

export async function getNamespace(
  input: OperationInput<typeof namespacesGet>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof namespacesGet>> {
  const access = requireAccess(ctx);
  const view = await ctx.stores.namespaces.readView(access.workspaceId, input.id, access.standingQuery());
  access.adopt(view.standing);
  access.primeNamespace(input.id, view.namespace);
  const namespace = await access.requireById(input.id, 'read');
  return { namespace: presentNamespace(namespace) };
}

export async function updateNamespace(
  input: OperationInput<typeof namespacesUpdate>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof namespacesUpdate>> {
  const access = requireAccess(ctx);
  const namespace = await access.requireById(input.id, 'admin');
  const path = decodePathKey(namespace.pathKey);
  const newKey = encodePathKey([...path.slice(0, -1), input.name]);
  const stamp = await ctx.commit(access.workspaceId, [namespace.id]);
  await ctx.stores.namespaces.rename(
    access.workspaceId,
    namespace.id,
    input.name,
    namespace.pathKey,
    newKey,
    stamp.recordedAt,
  );
  const updated = { ...namespace, name: input.name, pathKey: newKey, updatedAt: stamp.recordedAt };
  return { namespace: presentNamespace(updated), commit: presentCommit(stamp) };
}

function targetOf(grant: OperationInput<typeof namespacesGrantsPut>['grants'][number]): GrantTarget {
  switch (grant.target.kind) {
    case 'actor':
      return { kind: 'actor', id: grant.target.actor_id };
    case 'installation':
      return { kind: 'installation', id: grant.target.product_installation_id };
    case 'credential':
      return { kind: 'credential', id: grant.target.credential_id };
  }
}

export async function putGrants(
  input: OperationInput<typeof namespacesGrantsPut>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof namespacesGrantsPut>> {
  const access = requireAccess(ctx);
  const namespace = await access.requireById(input.id, 'admin');
  const targets = input.grants.map(targetOf);
  const seen = new Set(targets.map((t) => `${t.kind}:${t.id}`));
  if (seen.size !== targets.length) throw new DomainError('invalid_input', 'body.grants: names a target twice');

  // Grants may only target members, installations and credentials of the workspace; a revoked
  // installation or credential counts as absent.
  const ids = (kind: GrantTarget['kind']) => targets.filter((t) => t.kind === kind).map((t) => t.id);
  const members = new Set((await ctx.stores.memberships.list(access.workspaceId)).map((m) => m.actorId));
  const live = await ctx.stores.credentials.liveTargets(access.workspaceId, ids('installation'), ids('credential'));
  const exists = (t: GrantTarget) =>
    t.kind === 'actor'
      ? members.has(t.id)
      : t.kind === 'installation'
        ? live.installations.has(t.id)
        : live.credentials.has(t.id);
  if (!targets.every(exists))
    throw new DomainError(
      'invalid_input',
      'body.grants: a target is no member, live installation or live credential of the workspace',
    );

  // No broader than the caller's own: inherited grants need the capability on the subtree.
  const own = await access.capabilitiesOn(namespace);
  const ownSubtree = await access.subtreeCapabilitiesOn(namespace);
  for (const grant of input.grants) {
    const reach: Set<Capability> = grant.inherit ? ownSubtree : own;
    if (grant.capabilities.some((c) => !reach.has(c))) {
      throw new DomainError('forbidden', 'grant broader than the caller holds');
    }
  }

  const stamp = await ctx.commit(access.workspaceId, [namespace.id]);
  const rows: GrantRow[] = input.grants.map((grant, position) => {
    const target = targets[position] as GrantTarget;
    return {
      workspaceId: access.workspaceId,
      namespaceId: namespace.id,
      targetKind: target.kind,
      targetId: target.id,
      capabilities: grant.capabilities,
      inherit: grant.inherit,
      position,
    };
  });
  await ctx.stores.namespaces.replaceGrants(access.workspaceId, namespace.id, rows);
  return { namespace_id: namespace.id, grants: input.grants, commit: presentCommit(stamp) };
}

/**
 * The grants on a namespace in their stored order, the list `namespaces.grants.put` replaces:
 * an unreadable namespace is `not_found`, a readable one without `admin` is `forbidden`.
 */
export async function listGrants(
  input: OperationInput<typeof namespacesGrantsList>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof namespacesGrantsList>> {
  const access = requireAccess(ctx);
  const namespace = await access.requireById(input.id, 'admin');
  const rows = await ctx.stores.namespaces.grantsOn(access.workspaceId, namespace.id);
  return { namespace_id: namespace.id, grants: rows.map(presentGrant) };
}
