import {
  type Evidence,
  type Grant,
  MAX_REFERENCES,
  type Memory,
  type Namespace,
  type Revision,
  type Verification,
} from '@tms/catalog';
import type { EvidenceRow, GrantRow, MemoryRow, NamespaceRow, RevisionRow, Stores, VerificationRow } from '@tms/ledger';
import DataLoader from 'dataloader';
import type { WorkspaceAccess } from './access';
import { type Caller, hasScope } from './caller';
import type { CursorCodec } from './cursor';
import { DomainError } from './errors';
import { presentEvidence, presentGrant, presentNamespace, presentRevision, presentVerification } from './present';
import { type VerificationPosition, verificationCursorScope, verificationPage } from './services/evidence';
import { presentMemory } from './services/memories';
import { END_OF_TIME } from './temporal';

/** A page of an evidence item's verifications, oldest first, as `evidence.get` answers it. */
export interface VerificationPage {
  verifications: Verification[];
  next_cursor: string | null;
}

/** Keys of loaders whose answer depends on a record time: (id, known_at). */
interface AtKey {
  id: string;
  knownAt: number;
}

const atKey = (key: AtKey) => `${key.knownAt}\u0000${key.id}`;

/** Group keys by known_at so that each distinct record time costs one statement. */
function byKnownAt(keys: readonly AtKey[]): Map<number, string[]> {
  const groups = new Map<number, string[]>();
  for (const { id, knownAt } of keys) groups.set(knownAt, [...(groups.get(knownAt) ?? []), id]);
  return groups;
}

function indexBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T> {
  return new Map(rows.map((row) => [key(row), row]));
}

/**
 * Batched reads for one request of a transport that resolves nested fields (GraphQL): each
 * method applies the read rules of the services (workspace membership, the `svc:read` scope,
 * `read` on the namespace, purged content suppressed, unreadable answered like absent) and the
 * `known_at` masking of `present.ts`, and costs one statement per kind of row however many
 * items a request asks for. Create one per request (`Domain.loaders`) and never share it:
 * grants and membership are read once per request so that revocation bites at once.
 */
export class RequestLoaders {
  private accessPromise: Promise<WorkspaceAccess> | null = null;

  constructor(
    private readonly stores: Stores,
    private readonly caller: Caller,
    private readonly resolveAccess: () => Promise<WorkspaceAccess>,
    private readonly cursors: () => Promise<CursorCodec>,
  ) {}

  /** The selected workspace, membership checked once; nested reads need `svc:read`. */
  private access(): Promise<WorkspaceAccess> {
    if (!hasScope(this.caller, 'svc:read')) return Promise.reject(new DomainError('forbidden', 'token lacks svc:read'));
    this.accessPromise ??= this.resolveAccess();
    return this.accessPromise;
  }

  private readonly namespaceRows = new DataLoader<string, NamespaceRow | null>(async (ids) => {
    const access = await this.access();
    const rows = indexBy(await this.stores.namespaces.getMany(access.workspaceId, ids), (r) => r.id);
    return ids.map((id) => rows.get(id) ?? null);
  });

  private readonly evidenceRows = new DataLoader<string, EvidenceRow | null>(async (ids) => {
    const access = await this.access();
    const rows = indexBy(await this.stores.evidence.getMany(access.workspaceId, ids), (r) => r.id);
    return ids.map((id) => rows.get(id) ?? null);
  });

  private readonly verificationRows = new DataLoader<string, VerificationRow | null>(async (ids) => {
    const access = await this.access();
    const rows = indexBy(await this.stores.evidence.verificationsByIds(access.workspaceId, ids), (r) => r.id);
    return ids.map((id) => rows.get(id) ?? null);
  });

  private readonly revisionRows = new DataLoader<string, RevisionRow | null>(async (ids) => {
    const access = await this.access();
    const rows = indexBy(await this.stores.memories.getRevisions(access.workspaceId, ids), (r) => r.id);
    return ids.map((id) => rows.get(id) ?? null);
  });

  private readonly memoryRows = new DataLoader<string, MemoryRow | null>(async (ids) => {
    const access = await this.access();
    const rows = indexBy(await this.stores.memories.getMany(access.workspaceId, ids), (r) => r.id);
    return ids.map((id) => rows.get(id) ?? null);
  });

  /** The highest generation of each memory recorded by known_at. */
  private readonly generations = new DataLoader<AtKey, number | null, string>(
    async (keys) => {
      const access = await this.access();
      const found = new Map<string, number>();
      for (const [knownAt, ids] of byKnownAt(keys)) {
        const identities = await this.stores.memories.identitiesAt(access.workspaceId, ids, knownAt);
        for (const [id, { generation }] of identities) found.set(atKey({ id, knownAt }), generation);
      }
      return keys.map((key) => found.get(atKey(key)) ?? null);
    },
    { cacheKeyFn: atKey },
  );

  /** The first page (MAX_REFERENCES + 1 rows, to know whether more follow) of each evidence item's verifications. */
  private readonly firstVerifications = new DataLoader<AtKey, VerificationRow[], string>(
    async (keys) => {
      const access = await this.access();
      const found = new Map<string, VerificationRow[]>();
      for (const [knownAt, ids] of byKnownAt(keys)) {
        const rows = await this.stores.evidence.firstVerificationsOf(
          access.workspaceId,
          ids,
          knownAt,
          MAX_REFERENCES + 1,
        );
        for (const row of rows) {
          const key = atKey({ id: row.evidenceId, knownAt });
          found.set(key, [...(found.get(key) ?? []), row]);
        }
      }
      return keys.map((key) => found.get(atKey(key)) ?? []);
    },
    { cacheKeyFn: atKey },
  );

  private readonly grantRows = new DataLoader<string, GrantRow[]>(async (namespaceIds) => {
    const access = await this.access();
    const rows = await this.stores.namespaces.grantsOnMany(access.workspaceId, namespaceIds);
    return namespaceIds.map((id) => rows.filter((r) => r.namespaceId === id));
  });

  /** A namespace row the caller may read, else null (absent and unreadable alike). */
  private async readableNamespace(id: string): Promise<NamespaceRow | null> {
    const access = await this.access();
    const row = await this.namespaceRows.load(id);
    return row && (await access.canRead(row)) ? row : null;
  }

  private async readable(namespaceId: string): Promise<boolean> {
    return (await this.readableNamespace(namespaceId)) !== null;
  }

  /** A namespace the caller may read, or null. */
  async namespace(id: string): Promise<Namespace | null> {
    const row = await this.readableNamespace(id);
    return row && presentNamespace(row);
  }

  /**
   * The grants on a namespace, for callers holding `admin` on it: unreadable is `not_found`,
   * readable without `admin` is `forbidden` (as `namespaces.grants.put` decides).
   */
  async grants(namespaceId: string): Promise<Grant[]> {
    const access = await this.access();
    const row = await this.readableNamespace(namespaceId);
    if (!row) throw new DomainError('not_found');
    if (!(await access.capabilitiesOn(row)).has('admin')) throw new DomainError('forbidden', 'missing admin');
    return (await this.grantRows.load(namespaceId)).map(presentGrant);
  }

  /** Evidence as known at `knownAt`: recorded by then, not purged, readable; else null. */
  async evidence(id: string, knownAt: number = END_OF_TIME): Promise<Evidence | null> {
    const row = await this.evidenceRows.load(id);
    if (!row || row.excerpt === null || row.recordedAt > knownAt) return null;
    return (await this.readable(row.namespaceId)) ? presentEvidence(row) : null;
  }

  /** Several evidence items in the order asked, leaving out what `evidence` would answer null for. */
  async evidenceList(ids: readonly string[], knownAt: number = END_OF_TIME): Promise<Evidence[]> {
    const found = await Promise.all(ids.map((id) => this.evidence(id, knownAt)));
    return found.filter((e) => e !== null);
  }

  /**
   * A page of an evidence item's verifications recorded by `knownAt`, oldest first, with the
   * cursor `evidence.get` uses (so either can continue the other's pages at "now"). First pages
   * are batched across evidence items; later pages (`after`) cost one statement each.
   */
  async verifications(
    evidence: Pick<Evidence, 'id' | 'namespace_id'>,
    knownAt: number = END_OF_TIME,
    after?: string,
  ): Promise<VerificationPage> {
    const access = await this.access();
    if (!(await this.readable(evidence.namespace_id))) throw new DomainError('not_found');
    const cursors = await this.cursors();
    const scope = verificationCursorScope(access.workspaceId, evidence.id);
    const position = cursors.decode<VerificationPosition>(scope, after);
    const rows = position
      ? await this.stores.evidence.verificationsPage(access.workspaceId, evidence.id, {
          knownAt,
          after: { recordedAt: position.r, id: position.i },
          limit: MAX_REFERENCES + 1,
        })
      : await this.firstVerifications.load({ id: evidence.id, knownAt });
    return verificationPage(rows, cursors, scope);
  }

  /** Verifications by id, in the order asked: recorded by `knownAt`, of readable unpurged evidence. */
  async verificationList(ids: readonly string[], knownAt: number = END_OF_TIME): Promise<Verification[]> {
    const found = await Promise.all(
      ids.map(async (id) => {
        const row = await this.verificationRows.load(id);
        if (!row || row.recordedAt > knownAt) return null;
        const evidence = await this.evidenceRows.load(row.evidenceId);
        if (!evidence || !(await this.readable(evidence.namespaceId))) return null;
        return presentVerification(row);
      }),
    );
    return found.filter((v) => v !== null);
  }

  /** A revision as known at `knownAt` (recorded by then, not purged, readable), or null. */
  async revision(id: string, knownAt: number = END_OF_TIME): Promise<Revision | null> {
    const row = await this.revisionRows.load(id);
    if (!row || row.text === null || row.recordedAt > knownAt) return null;
    return (await this.readable(row.namespaceId)) ? presentRevision(row, knownAt) : null;
  }

  async revisionList(ids: readonly string[], knownAt: number = END_OF_TIME): Promise<Revision[]> {
    const found = await Promise.all(ids.map((id) => this.revision(id, knownAt)));
    return found.filter((r) => r !== null);
  }

  /** A memory's identity as known at `knownAt` (its generation then), or null when unknown then, purged or unreadable. */
  async memory(id: string, knownAt: number = END_OF_TIME): Promise<Memory | null> {
    const row = await this.memoryRows.load(id);
    if (!row || row.purgedAt !== null || !(await this.readable(row.namespaceId))) return null;
    const generation = await this.generations.load({ id, knownAt });
    return generation === null ? null : presentMemory(row, generation);
  }
}
