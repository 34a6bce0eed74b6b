import { type Operation, workspaceIdSchema } from '@tms/catalog';
import type { NamespaceRow, Role, Standing, Stores } from '@tms/ledger';
import { roleFrom, WorkspaceAccess } from './access';
import type { Caller } from './caller';
import { DomainError } from './errors';
import type { RequestMeta } from './request';

/**
 * Reads whose handler loads the caller's standing with its resource in one statement. Every other
 * read of a workspace loads the standing (and the namespaces its input names) in one statement
 * before its handler runs.
 */
const STANDING_IN_HANDLER: ReadonlySet<string> = new Set([
  'memories.get',
  'evidence.get',
  'namespaces.get',
  'memories.history',
]);

/** How the caller's standing in the workspace is loaded before the handler runs. */
export type StandingLoad =
  /** With the access, piece by piece (`standingIn`): a write in its own transaction, nested reads. */
  | { from: 'membership' }
  /** A read's: one statement, with its resource (STANDING_IN_HANDLER) or before its handler. */
  | { from: 'read' }
  /** The write loads it itself in one statement (a grouped write: with its idempotency record). */
  | { from: 'write'; load(access: WorkspaceAccess): Promise<void> };

/** Who asks, and which workspace the request selected. */
type Selection = Pick<RequestMeta, 'caller' | 'selectedWorkspaceId'>;

/**
 * The caller's access to the workspace the operation acts in (null for a directory operation),
 * with its standing loaded as `standing` says. Membership is checked on every request: a
 * non-member and an absent workspace are one `not_found`.
 */
export async function workspaceAccessFor(
  operation: { name: string; workspace: Operation['workspace'] },
  input: Record<string, unknown>,
  meta: Selection,
  stores: Stores,
  standing: StandingLoad,
): Promise<WorkspaceAccess | null> {
  const workspaceId = selectedWorkspace(operation, input, meta);
  if (workspaceId === null) return null;
  if (standing.from === 'membership') {
    return new WorkspaceAccess(stores, workspaceId, meta.caller, await standingIn(workspaceId, meta.caller, stores));
  }
  const access = WorkspaceAccess.deferred(stores, workspaceId, meta.caller);
  if (standing.from === 'write') await standing.load(access);
  else if (!STANDING_IN_HANDLER.has(operation.name)) await loadReadStanding(access, input, stores);
  return access;
}

/** The namespaces an operation's input names (its own, its parent, a recall's), loaded along with the standing. */
export function namespacesNamedBy(input: Record<string, unknown>): string[] {
  const listed = Array.isArray(input.namespace_ids) ? input.namespace_ids : [];
  return [input.namespace_id, input.parent_id, ...listed].filter((id): id is string => typeof id === 'string');
}

/** The namespaces whose subtrees a read covers (a recall's `namespace_ids` with `include_descendants`). */
function subtreesNamedBy(input: Record<string, unknown>): string[] {
  return input.include_descendants === true && Array.isArray(input.namespace_ids)
    ? input.namespace_ids.filter((id): id is string => typeof id === 'string')
    : [];
}

/**
 * Take a standing loaded in one statement with the namespaces `named`: decided as a standing
 * loaded piece by piece, so a non-member is `not_found` before anything else counts.
 */
export function adoptStanding(
  access: WorkspaceAccess,
  loaded: { standing: Standing; namespaces: readonly NamespaceRow[]; descendants?: readonly NamespaceRow[] },
  named: readonly string[],
  subtrees: readonly string[] = [],
): void {
  access.adopt(loaded.standing);
  const byId = new Map(loaded.namespaces.map((row) => [row.id, row]));
  for (const id of named) access.primeNamespace(id, byId.get(id) ?? null);
  if (subtrees.length > 0) access.primeDescendants(subtrees, loaded.descendants ?? []);
}

/** The workspace the operation names (its path, the caller's binding or the selector); null: none. */
function selectedWorkspace(
  operation: Pick<Operation, 'workspace'>,
  input: Record<string, unknown>,
  meta: Selection,
): string | null {
  if (operation.workspace === 'directory') return null;
  let workspaceId: string | null;
  if (operation.workspace === 'path') {
    workspaceId = input.id as string;
    if (meta.selectedWorkspaceId !== null && meta.selectedWorkspaceId !== workspaceId) {
      throw new DomainError('invalid_input', 'X-Service-Workspace: differs from the workspace in the path');
    }
  } else {
    workspaceId = meta.caller.boundWorkspaceId ?? meta.selectedWorkspaceId;
    if (workspaceId === null) throw new DomainError('invalid_input', 'X-Service-Workspace: is required');
  }
  // A bound credential's selector may only repeat its workspace, never name another.
  const bound = meta.caller.boundWorkspaceId;
  if (bound && (bound !== workspaceId || (meta.selectedWorkspaceId ?? bound) !== bound)) {
    throw new DomainError('not_found', 'credential bound to another workspace');
  }
  if (!workspaceIdSchema.safeParse(workspaceId).success) {
    const place = operation.workspace === 'path' ? 'params.id' : 'X-Service-Workspace';
    throw new DomainError('invalid_input', `${place}: is not a workspace id`);
  }
  return workspaceId;
}

/**
 * A read's standing (role or grants, and the head), the namespaces its input names and the
 * subtrees it covers, from one statement; decided by the same rules as `standingIn`.
 */
async function loadReadStanding(access: WorkspaceAccess, input: Record<string, unknown>, stores: Stores) {
  const named = namespacesNamedBy(input);
  const subtrees = subtreesNamedBy(input);
  const loaded = await stores.memberships.standing(access.workspaceId, access.standingQuery(), named, subtrees);
  adoptStanding(access, loaded, named, subtrees);
}

/**
 * The caller's role in the workspace, checked on every request: members by membership,
 * credentials by being bound to it (their grants decide the rest), the operator as admin.
 */
async function standingIn(workspaceId: string, caller: Caller, stores: Stores): Promise<Role> {
  if (caller.credential) return roleFrom(caller, { role: null, workspaceExists: true });
  if (caller.operator) {
    return roleFrom(caller, {
      role: null,
      workspaceExists: (await stores.directory.getWorkspace(workspaceId)) !== null,
    });
  }
  return roleFrom(caller, {
    role: await stores.memberships.roleOf(workspaceId, caller.actorId),
    workspaceExists: true,
  });
}
