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

/** What a credential may reach at most, whatever its grants say. */
export interface CredentialCeiling {
  capabilities: readonly Capability[];
  /** The namespaces (with their subtrees) it may reach, or null for the whole workspace. */
  subtreeRoots: readonly NamespaceLike[] | null;
}

function expand(capabilities: readonly string[]): Set<Capability> {
  return capabilities.includes('admin') ? new Set(ALL) : new Set(capabilities as Capability[]);
}

/**
 * The grants of a credential cut down to its ceiling, as ordinary grants, so that
 * `capabilitiesOn` and `reachOf` apply unchanged. Capabilities are intersected (`admin`
 * expanded first). With a namespace ceiling, a grant inside an allowed subtree stays as it is,
 * an `inherit` grant on an ancestor of an allowed root is moved down onto that root, and
 * everything else falls away. `grantNamespaces` holds the rows of the granted namespaces.
 */
export function narrowGrants(
  grants: readonly GrantLike[],
  ceiling: CredentialCeiling,
  grantNamespaces: readonly NamespaceLike[],
): GrantLike[] {
  const allowed = expand(ceiling.capabilities);
  const capped: GrantLike[] = [];
  for (const grant of grants) {
    const capabilities = [...expand(grant.capabilities)].filter((c) => allowed.has(c));
    if (capabilities.length > 0) capped.push({ ...grant, capabilities });
  }
  if (ceiling.subtreeRoots === null) return capped;

  const namespaceById = new Map(grantNamespaces.map((n) => [n.id, n]));
  const narrowed: GrantLike[] = [];
  for (const grant of capped) {
    const granted = namespaceById.get(grant.namespaceId);
    if (!granted) continue;
    const insideAllowed = ceiling.subtreeRoots.some(
      (root) => root.id === granted.id || granted.ancestorIds.includes(root.id),
    );
    if (insideAllowed) {
      narrowed.push(grant);
      continue;
    }
    if (!grant.inherit) continue;
    for (const root of ceiling.subtreeRoots) {
      if (root.ancestorIds.includes(granted.id)) narrowed.push({ ...grant, namespaceId: root.id });
    }
  }
  return narrowed;
}
