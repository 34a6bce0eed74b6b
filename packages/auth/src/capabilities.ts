import { CAPABILITIES, type Capability } from '@tms/catalog';

export interface GrantLike {
  namespaceId: string;
  capabilities: readonly string[];
  inherit: boolean;
}

export interface NamespaceLike {
  id: string;
  /** Root first, parent last. */
  ancestorIds: readonly string[];
}

const ALL = new Set<Capability>(CAPABILITIES);

/**
 * Capabilities a holder has on a namespace: the union of its grants on the namespace and its
 * `inherit` grants on the ancestors; `admin` implies every capability; workspace admins hold
 * every capability everywhere (decisions §6).
 */
export function capabilitiesOn(
  namespace: NamespaceLike,
  grants: readonly GrantLike[],
  isWorkspaceAdmin: boolean,
): Set<Capability> {
  if (isWorkspaceAdmin) return new Set(ALL);
  const ancestors = new Set(namespace.ancestorIds);
  const held = new Set<Capability>();
  for (const grant of grants) {
    const applies = grant.namespaceId === namespace.id || (grant.inherit && ancestors.has(grant.namespaceId));
    if (!applies) continue;
    for (const c of grant.capabilities) held.add(c as Capability);
  }
  return held.has('admin') ? new Set(ALL) : held;
}

/**
 * Capabilities held on the whole subtree below and including the namespace: only those
 * coming from `inherit` grants (or workspace admin). A grant with `inherit` may pass on
 * no more than these.
 */
export function subtreeCapabilitiesOn(
  namespace: NamespaceLike,
  grants: readonly GrantLike[],
  isWorkspaceAdmin: boolean,
): Set<Capability> {
  return capabilitiesOn(
    namespace,
    grants.filter((g) => g.inherit),
    isWorkspaceAdmin,
  );
}

/** Where a capability reaches: the namespaces granted it directly and the roots of inherited subtrees. */
export function reachOf(
  capability: Capability,
  grants: readonly GrantLike[],
): { direct: string[]; subtreeRoots: string[] } {
  const direct: string[] = [];
  const subtreeRoots: string[] = [];
  for (const grant of grants) {
    if (!grant.capabilities.includes(capability) && !grant.capabilities.includes('admin')) continue;
    direct.push(grant.namespaceId);
    if (grant.inherit) subtreeRoots.push(grant.namespaceId);
  }
  return { direct, subtreeRoots };
}
