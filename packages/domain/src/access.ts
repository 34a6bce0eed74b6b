import { capabilitiesOn, type GrantLike, narrowGrants, reachOf, subtreeCapabilitiesOn } from '@tms/auth';
import type { Capability } from '@tms/catalog';
import type {
  CommitStamp,
  GrantRow,
  NamespaceRow,
  Role,
  Standing,
  StandingQuery,
  Stores,
  Visibility,
} from '@tms/ledger';
import { type Caller, grantTargetsOf } from './caller';
import { DomainError } from './errors';

/**
 * The caller's role in a workspace from what was loaded about it: members by membership,
 * credentials by being bound to it (their grants decide the rest), the operator as admin of
 * any workspace that exists. Not a member and no such workspace are one `not_found`.
 */
export function roleFrom(caller: Caller, loaded: { role: Role | null; workspaceExists: boolean }): Role {
  if (caller.credential) return 'member';
  if (caller.operator) {
    if (!loaded.workspaceExists) throw new DomainError('not_found', 'no such workspace');
    return 'admin';
  }
  if (!loaded.role) throw new DomainError('not_found', 'not a member');
  return loaded.role;
}

/**
 * The caller's standing in one workspace for the span of one request: its role and its
 * grants, loaded once and never shared across requests (so revocation bites at once).
 *
 * Standing is either known when the access is made, or (`deferred`) loaded by a one-statement
 * read together with the resource and handed over with `adopt` before anything is decided.
 */
export class WorkspaceAccess {
  private grantsPromise: Promise<GrantLike[]> | null = null;
  private readonly namespaceCache = new Map<string, Promise<NamespaceRow | null>>();
  /** The namespaces below a set of namespaces (keyed by their sorted ids), as read or primed. */
  private readonly descendantsCache = new Map<string, Promise<NamespaceRow[]>>();
  private knownRole: Role | null;
  /** The workspace head as loaded with the standing; undefined when not loaded that way. */
  private loadedHead: CommitStamp | null | undefined;

  constructor(
    readonly stores: Stores,
    readonly workspaceId: string,
    readonly caller: Caller,
    role: Role | null,
  ) {
    this.knownRole = role;
  }

  /** An access whose standing comes later, from a one-statement read (`standingQuery`, `adopt`). */
  static deferred(stores: Stores, workspaceId: string, caller: Caller): WorkspaceAccess {
    return new WorkspaceAccess(stores, workspaceId, caller, null);
  }

  get role(): Role {
    if (this.knownRole === null) throw new DomainError('internal', 'standing not loaded yet');
    return this.knownRole;
  }

  get isAdmin(): boolean {
    return this.role === 'admin';
  }

  /** What a one-statement read must load about the caller in this workspace. */
  standingQuery(): StandingQuery {
    const credential = this.caller.credential;
    return {
      actorId: credential ? null : this.caller.actorId,
      credential: credential ? { targets: grantTargetsOf(credential), roots: credential.namespaceIds } : null,
      operator: this.caller.operator && !credential,
    };
  }

  /**
   * Take the standing a one-statement read loaded: the same rules as a standing loaded piece by
   * piece (`roleFrom`, `narrowed`), so a non-member is `not_found` here, before the resource counts.
   */
  adopt(standing: Standing): void {
    if (this.knownRole === null) this.knownRole = roleFrom(this.caller, standing);
    this.loadedHead = standing.head;
    this.grantsPromise ??= Promise.resolve(this.narrowed(standing.grants, standing.ceilingNamespaces));
  }

  /** The head loaded with the standing (`undefined`: not loaded; read it separately). */
  get preloadedHead(): CommitStamp | null | undefined {
    return this.loadedHead;
  }

  /** A namespace row read along with the resource, so that `namespace(id)` asks nothing more. */
  primeNamespace(id: string, row: NamespaceRow | null): void {
    if (!this.namespaceCache.has(id)) this.namespaceCache.set(id, Promise.resolve(row));
  }

  /** The namespaces below `rootIds` read along with the standing, so that `descendantsOf` asks nothing more. */
  primeDescendants(rootIds: readonly string[], rows: readonly NamespaceRow[]): void {
    const key = subtreeKey(rootIds);
    if (!this.descendantsCache.has(key)) this.descendantsCache.set(key, Promise.resolve([...rows]));
  }

  /** Every namespace below any of `rootIds` (not those themselves), readable or not. */
  descendantsOf(rootIds: readonly string[]): Promise<NamespaceRow[]> {
    const key = subtreeKey(rootIds);
    let pending = this.descendantsCache.get(key);
    if (!pending) {
      pending = this.stores.namespaces.descendantsOf(this.workspaceId, rootIds);
      this.descendantsCache.set(key, pending);
    }
    return pending;
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
    const grants = await this.stores.namespaces.grantsFor(this.workspaceId, grantTargetsOf(credential));
    const roots = credential.namespaceIds;
    const rows =
      roots === null
        ? []
        : await this.stores.namespaces.getMany(this.workspaceId, [...roots, ...grants.map((g) => g.namespaceId)]);
    return this.narrowed(grants, rows);
  }

  /**
   * The grants that apply: a member's as they are; a credential holds its own grants and its
   * installation's, cut down to its ceilings (`rows`: the namespaces of its roots and grants).
   */
  private narrowed(grants: GrantRow[], rows: readonly NamespaceRow[]): GrantLike[] {
    const credential = this.caller.credential;
    if (!credential) return grants;
    const roots = credential.namespaceIds;
    const rootSet = new Set(roots ?? []);
    return narrowGrants(
      grants,
      {
        capabilities: credential.capabilities,
        subtreeRoots: roots === null ? null : rows.filter((r) => rootSet.has(r.id)),
      },
      roots === null ? [] : [...rows],
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

  /** Of these namespace rows, the ids of those the caller may read (no query). */
  async readableOf(rows: readonly NamespaceRow[]): Promise<Set<string>> {
    const readable = new Set<string>();
    for (const row of rows) if (await this.canRead(row)) readable.add(row.id);
    return readable;
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

const subtreeKey = (rootIds: readonly string[]): string => [...new Set(rootIds)].sort().join(',');
