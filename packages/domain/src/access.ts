import { capabilitiesOn, type GrantLike, narrowGrants, reachOf, subtreeCapabilitiesOn } from '@tms/auth';
import type { Capability } from '@tms/catalog';
import type { NamespaceRow, Role, Stores, Visibility } from '@tms/ledger';
import { type Caller, grantTargetsOf } from './caller';
import { DomainError } from './errors';

/**
 * The caller's standing in one workspace for the span of one request: its role and its
 * grants, loaded once and never shared across requests (so revocation bites at once).
 */
export class WorkspaceAccess {
  private grantsPromise: Promise<GrantLike[]> | null = null;
  private readonly namespaceCache = new Map<string, Promise<NamespaceRow | null>>();

  constructor(
    readonly stores: Stores,
    readonly workspaceId: string,
    readonly caller: Caller,
    readonly role: Role,
  ) {}

  get isAdmin(): boolean {
    return this.role === 'admin';
  }

  private grants(): Promise<GrantLike[]> {
    this.grantsPromise ??= this.loadGrants();
    return this.grantsPromise;
  }

  private async loadGrants(): Promise<GrantLike[]> {
    const credential = this.caller.credential;
    if (!credential) {
      return this.stores.namespaces.grantsFor(this.workspaceId, [{ kind: 'actor', id: this.caller.actorId }]);
    }
    // A credential holds its own grants and its installation's, cut down to its ceilings.
    const grants = await this.stores.namespaces.grantsFor(this.workspaceId, grantTargetsOf(credential));
    const roots = credential.namespaceIds;
    const rows =
      roots === null
        ? []
        : await this.stores.namespaces.getMany(this.workspaceId, [...roots, ...grants.map((g) => g.namespaceId)]);
    const rootSet = new Set(roots ?? []);
    return narrowGrants(
      grants,
      {
        capabilities: credential.capabilities,
        subtreeRoots: roots === null ? null : rows.filter((r) => rootSet.has(r.id)),
      },
      rows,
    );
  }

  namespace(id: string): Promise<NamespaceRow | null> {
    let pending = this.namespaceCache.get(id);
    if (!pending) {
      pending = this.stores.namespaces.get(this.workspaceId, id);
      this.namespaceCache.set(id, pending);
    }
    return pending;
  }

  async capabilitiesOn(namespace: NamespaceRow): Promise<Set<Capability>> {
    return capabilitiesOn(namespace, await this.grants(), this.isAdmin);
  }

  async subtreeCapabilitiesOn(namespace: NamespaceRow): Promise<Set<Capability>> {
    return subtreeCapabilitiesOn(namespace, await this.grants(), this.isAdmin);
  }

  /**
   * Authorize `capability` on a namespace: an absent namespace and one the caller cannot
   * read are the same `not_found`; a readable one without the capability is `forbidden`.
   */
  async require(namespace: NamespaceRow | null, capability: Capability): Promise<NamespaceRow> {
    if (!namespace) throw new DomainError('not_found');
    const held = await this.capabilitiesOn(namespace);
    if (!held.has('read')) throw new DomainError('not_found', 'namespace not readable');
    if (!held.has(capability)) throw new DomainError('forbidden', `missing ${capability}`);
    return namespace;
  }

  async requireById(namespaceId: string, capability: Capability): Promise<NamespaceRow> {
    return this.require(await this.namespace(namespaceId), capability);
  }

  async canRead(namespace: NamespaceRow): Promise<boolean> {
    return (await this.capabilitiesOn(namespace)).has('read');
  }

  /** Of these namespace ids, the ones the caller may read (one query for the lot). */
  async readableAmong(namespaceIds: readonly string[]): Promise<Set<string>> {
    const unique = [...new Set(namespaceIds)];
    const rows = await this.stores.namespaces.getMany(this.workspaceId, unique);
    const readable = new Set<string>();
    for (const row of rows) if (await this.canRead(row)) readable.add(row.id);
    return readable;
  }

  /** Which namespaces a listing may show to this caller. */
  async readableVisibility(): Promise<Visibility> {
    if (this.isAdmin) return 'all';
    return reachOf('read', await this.grants());
  }
}
