import { CHANGE_SUBJECT_TYPES, type ChangeSubjectType } from '@tms/catalog';
import { sql } from 'drizzle-orm';
import type { Database } from '../database';
import { rowsOf, type Visibility } from '../rows';

/** What a change names (decisions §10; the catalog holds the list). */
export const SUBJECT_TYPES = CHANGE_SUBJECT_TYPES;
export type SubjectType = ChangeSubjectType;

/** Subjects that belong to no namespace: only workspace admins see them (decisions §10). */
export const WORKSPACE_LEVEL_TYPES: ReadonlySet<SubjectType> = new Set([
  'workspace',
  'member',
  'grant',
  'installation',
  'credential',
  'webhook',
]);

/** The type of a ledger id, by the prefix `newId` gave it (the hash chain names its records so too). */
export const TYPE_BY_PREFIX: Readonly<Record<string, SubjectType>> = {
  ws: 'workspace',
  ns: 'namespace',
  ev: 'evidence',
  vf: 'verification',
  mem: 'memory',
  rev: 'revision',
  rcp: 'receipt',
  ins: 'installation',
  cred: 'credential',
  wh: 'webhook',
};

/**
 * Grants and memberships have no ids of their own: those writes name the namespace whose grant
 * list, or the workspace whose member list, they replaced. The operation tells them apart.
 */
const TYPE_BY_OPERATION: Readonly<Record<string, { prefix: string; type: SubjectType }>> = {
  'namespaces.grants.put': { prefix: 'ns', type: 'grant' },
  'workspaces.members.put': { prefix: 'ws', type: 'member' },
};

/** The subject type of an id a commit of `operation` wrote; null for an id of no known type. */
export function subjectTypeOf(operation: string, id: string): SubjectType | null {
  const prefix = id.slice(0, id.indexOf('_'));
  const special = TYPE_BY_OPERATION[operation];
  if (special && special.prefix === prefix) return special.type;
  return TYPE_BY_PREFIX[prefix] ?? null;
}

export interface ChangeSubject {
  type: SubjectType;
  id: string;
  /** The namespace the subject lives in; null for workspace-level subjects. */
  namespaceId: string | null;
}

export interface Change {
  sequence: number;
  recordedAt: number;
  operation: string;
  actorId: string;
  subjects: ChangeSubject[];
}

export interface ChangeQuery {
  /** Changes with a sequence above this one. */
  after: number;
  /** At most this many commits are scanned (and returned). */
  limit: number;
  /** Keep only subjects in this namespace (and, unless `includeDescendants` is false, below it). */
  namespaceId?: string | undefined;
  includeDescendants?: boolean | undefined;
  /** Keep only subjects in these namespaces (default: all). */
  visibility?: Visibility | undefined;
  /** Whether workspace-level subjects are kept (default true; never with a namespace filter). */
  workspaceSubjects?: boolean | undefined;
}

interface SubjectRow {
  head: string | number | null;
  sequence: string | number | null;
  recorded_at: number | null;
  operation: string | null;
  actor_id: string | null;
  subject_id: string | null;
  namespace_id: string | null;
  ancestor_ids: string[] | null;
}

/**
 * The change feed: commits of a workspace in sequence order with their subjects typed and
 * placed in their namespaces. One statement per page, whatever the page holds.
 */
export class ChangeStorage {
  constructor(private readonly db: Database) {}

  async listAfter(workspaceId: string, query: ChangeQuery): Promise<{ changes: Change[]; headSequence: number }> {
    // One row per subject (or one subjectless row per commit without any), each subject's
    // namespace found by id in whichever table holds it, plus the head on every row (and on a
    // lone row when the page is empty).
    const result = await this.db.execute(sql`
      select h.head, x.sequence, x.recorded_at, x.operation, x.actor_id, x.subject_id,
             sn.id as namespace_id, sn.ancestor_ids
        from (select (select w.sequence from workspace_heads w where w.workspace_id = ${workspaceId}) as head) h
        left join (
          select p.sequence, p.recorded_at, p.operation, p.actor_id, s.id as subject_id, s.position,
                 coalesce(
                   (select n.id from namespaces n where n.workspace_id = ${workspaceId} and n.id = s.id),
                   (select e.namespace_id from evidence e where e.workspace_id = ${workspaceId} and e.id = s.id),
                   (select ve.namespace_id from verifications v
                      join evidence ve on ve.workspace_id = ${workspaceId} and ve.id = v.evidence_id
                     where v.workspace_id = ${workspaceId} and v.id = s.id),
                   (select m.namespace_id from memories m where m.workspace_id = ${workspaceId} and m.id = s.id),
                   (select r.namespace_id from revisions r where r.workspace_id = ${workspaceId} and r.id = s.id),
                   (select d.namespace_id from deletion_receipts d where d.workspace_id = ${workspaceId} and d.id = s.id)
                 ) as resolved_namespace_id
            from (select c.workspace_id, c.sequence, c.recorded_at, c.operation, c.actor_id, c.subject_ids
                    from commits c
                   where c.workspace_id = ${workspaceId} and c.sequence > ${query.after}
                   order by c.sequence
                   limit ${query.limit}) p
            left join lateral unnest(p.subject_ids) with ordinality as s(id, position) on true
        ) x on true
        left join namespaces sn on sn.workspace_id = ${workspaceId} and sn.id = x.resolved_namespace_id
       order by x.sequence, x.position`);
    const rows = rowsOf<SubjectRow>(result);
    const keep = subjectFilter(query);
    const changes: Change[] = [];
    for (const row of rows) {
      if (row.sequence === null || row.operation === null) continue;
      const sequence = Number(row.sequence);
      let change = changes.at(-1);
      if (change?.sequence !== sequence) {
        change = {
          sequence,
          recordedAt: Number(row.recorded_at),
          operation: row.operation,
          actorId: row.actor_id ?? '',
          subjects: [],
        };
        changes.push(change);
      }
      if (row.subject_id === null) continue;
      const type = subjectTypeOf(row.operation, row.subject_id);
      if (type === null) continue;
      const workspaceLevel = WORKSPACE_LEVEL_TYPES.has(type);
      const namespace =
        workspaceLevel || row.namespace_id === null
          ? null
          : { id: row.namespace_id, ancestorIds: row.ancestor_ids ?? [] };
      // A namespaced subject whose namespace cannot be found is left out rather than shown as
      // workspace-level (every namespaced row keeps its namespace, so this does not happen).
      if (!workspaceLevel && namespace === null) continue;
      if (!keep(namespace)) continue;
      change.subjects.push({ type, id: row.subject_id, namespaceId: namespace?.id ?? null });
    }
    return { changes, headSequence: Number(rows[0]?.head ?? 0) };
  }
}

type Placement = { id: string; ancestorIds: readonly string[] } | null;

/** Whether a subject placed in a namespace (null: workspace-level) passes the query's filters. */
function subjectFilter(query: ChangeQuery): (namespace: Placement) => boolean {
  const { namespaceId, visibility = 'all' } = query;
  const includeDescendants = query.includeDescendants ?? true;
  const workspaceSubjects = (query.workspaceSubjects ?? true) && namespaceId === undefined;
  const direct = visibility === 'all' ? null : new Set(visibility.direct);
  const roots = visibility === 'all' ? null : new Set(visibility.subtreeRoots);
  return (namespace) => {
    if (namespace === null) return workspaceSubjects;
    if (namespaceId !== undefined) {
      const inFilter =
        namespace.id === namespaceId || (includeDescendants && namespace.ancestorIds.includes(namespaceId));
      if (!inFilter) return false;
    }
    if (direct === null || roots === null) return true;
    return direct.has(namespace.id) || namespace.ancestorIds.some((id) => roots.has(id));
  };
}
