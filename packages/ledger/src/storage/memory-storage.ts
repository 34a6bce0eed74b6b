import { and, arrayOverlaps, asc, desc, eq, gt, inArray, isNull, lt, lte, max, or, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../database';
import { jsonValue, type MemoryRow, type NamespaceRow, type RevisionRow, rowsOf } from '../rows';
import { memories, namespaces, revisions } from '../schema';
import {
  decodeJsonRow,
  decodeStanding,
  type Json,
  jsonRow,
  type Standing,
  type StandingQuery,
  selectShapedDocument,
  standingMembers,
} from './read-view';
import type { WrittenRecords } from './written-records';

/** Unpurged revisions current at `knownAt` (recorded, not yet superseded) and valid at `asOf`. */
function visibleAt(asOf: number, knownAt: number) {
  return and(
    isNull(revisions.purgedAt),
    lte(revisions.recordedAt, knownAt),
    or(isNull(revisions.recordedUntil), gt(revisions.recordedUntil, knownAt)),
    lte(revisions.validFrom, asOf),
    or(isNull(revisions.validTo), gt(revisions.validTo, asOf)),
  );
}
/** `memories.get` in one statement: standing, head, the memory, its namespace and its deciding revisions. */
export interface MemoryReadView {
  standing: Standing;
  memory: MemoryRow | null;
  namespace: NamespaceRow | null;
  /** The revisions `RevisionsAsKnown` names, newest generation first (at most two). */
  revisions: RevisionRow[];
}

/**
 * Which revisions a memory view loads: none (history pages them itself), or those that decide
 * the view as known at `knownAt` (absent: now, the workspace head or later). A memory may have
 * thousands of revisions; the view needs two of them at most, whatever their number.
 */
export type RevisionsAsKnown = { revisions: false } | { revisions?: true; knownAt?: number | undefined };

/**
 * The revisions that decide a memory's view as known at `knownAt`, as a JSON array of two
 * rows (either may be null): the newest generation recorded by then (the memory's generation)
 * and the newest one current then (recorded, not yet superseded: the revision shown), often the
 * same row. Without `knownAt` (now, at or after the workspace head, which every record time
 * precedes): the newest generation and the newest never superseded. Each is one backward step
 * of the `revisions_generation` index, so a read costs the same at the thousandth revision as
 * at the first; and scalar subqueries keep the statement's generic plan as cheap as a custom one.
 */
function decidingRevisions(workspaceId: string, memoryId: string, knownAt: number | undefined): SQL {
  const ofMemory = sql`r.workspace_id = ${workspaceId} and r.memory_id = ${memoryId}`;
  const recorded = knownAt === undefined ? ofMemory : sql`${ofMemory} and r.recorded_at <= ${knownAt}`;
  const current =
    knownAt === undefined
      ? sql`r.recorded_until is null`
      : sql`(r.recorded_until is null or r.recorded_until > ${knownAt})`;
  const newest = (where: SQL) =>
    sql`(select ${jsonRow(revisions, 'r')} from revisions r where ${where} order by r.generation desc limit 1)`;
  return sql`json_build_array(${newest(recorded)}, ${newest(sql`${recorded} and ${current}`)})`;
}

/** The rows `decidingRevisions` found, newest generation first, each once. */
function decodeDecidingRevisions(value: unknown): RevisionRow[] {
  const rows: RevisionRow[] = [];
  for (const row of (value as (Record<string, unknown> | null)[] | null) ?? []) {
    if (row !== null && rows[0]?.id !== row.id) rows.push(decodeJsonRow<RevisionRow>(revisions, row));
  }
  return rows;
}

export class MemoryStorage {
  constructor(
    private readonly db: Database,
    /** Where the one-statement views run (`Stores`): the database's point-read connections or the transaction. */
    private readonly pointReads: Database = db,
    /** The rows this transaction writes, for its commit's chain hash (`Stores`); none outside a write transaction. */
    private readonly written: WrittenRecords | null = null,
  ) {}

  async get(workspaceId: string, id: string): Promise<MemoryRow | null> {
    const rows = await this.db
      .select()
      .from(memories)
      .where(and(eq(memories.workspaceId, workspaceId), eq(memories.id, id)));
    return rows[0] ?? null;
  }

  /**
   * The caller's standing, the workspace head, the memory, its namespace and the revisions that
   * decide its view (see `decidingRevisions`), newest generation first, from one statement in
   * one snapshot.
   */
  async readView(
    workspaceId: string,
    memoryId: string,
    standing: StandingQuery,
    options: RevisionsAsKnown = {},
  ): Promise<MemoryReadView> {
    const withRevisions = options.revisions !== false;
    const knownAt = 'knownAt' in options ? options.knownAt : undefined;
    const document = await selectShapedDocument(
      this.pointReads,
      'memories.readView',
      { workspaceId, memoryId, standing, withRevisions, knownAt },
      ({ workspaceId, memoryId, standing, withRevisions, knownAt }) => {
        const revisionRows = withRevisions ? decidingRevisions(workspaceId, memoryId, knownAt) : sql`'[]'::json`;
        return sql`${standingMembers(workspaceId, standing)},
        'memory', (select ${jsonRow(memories, 'm')} from memories m where m.workspace_id = ${workspaceId} and m.id = ${memoryId}),
        'namespace', (select ${jsonRow(namespaces, 'n')} from memories m join namespaces n on n.workspace_id = m.workspace_id and n.id = m.namespace_id where m.workspace_id = ${workspaceId} and m.id = ${memoryId}),
        'revisions', ${revisionRows}`;
      },
    );
    return {
      standing: decodeStanding(document),
      memory: document.memory ? decodeJsonRow<MemoryRow>(memories, document.memory as Record<string, unknown>) : null,
      namespace: document.namespace
        ? decodeJsonRow<NamespaceRow>(namespaces, document.namespace as Record<string, unknown>)
        : null,
      revisions: decodeDecidingRevisions(document.revisions),
    };
  }

  /**
   * The memory holding `key` in a namespace at the head: neither retracted nor purged (a purge
   * nulls the key), at most one (the `memories_key_held` index); null when the key is free.
   */
  async keyHolder(workspaceId: string, namespaceId: string, key: string): Promise<string | null> {
    const rows = await this.db
      .select({ id: memories.id })
      .from(memories)
      .where(
        and(
          eq(memories.workspaceId, workspaceId),
          eq(memories.namespaceId, namespaceId),
          eq(memories.key, key),
          isNull(memories.retractedAt),
        ),
      );
    return rows[0]?.id ?? null;
  }

  /**
   * `keyHolder` of several (namespace, key) pairs in one statement: the holder of each pair that
   * has one (keys compared exactly, as there).
   */
  async keyHolders(
    workspaceId: string,
    pairs: readonly { namespaceId: string; key: string }[],
  ): Promise<{ namespaceId: string; key: string; id: string }[]> {
    if (pairs.length === 0) return [];
    // Keys as the hex of their UTF-8 bytes: the column holds those bytes, compared exactly.
    const wanted = JSON.stringify(
      pairs.map((p) => ({ n: p.namespaceId, k: Buffer.from(p.key, 'utf8').toString('hex') })),
    );
    // `limit 1` keeps each lookup a lookup (as in `EvidenceStorage.findByHashes`).
    const result = await this.db.execute(
      sql`select p.n as namespace_id, p.k as key_hex, m.id from json_to_recordset(${wanted}::json) as p(n text, k text)
          cross join lateral (select x.id from memories x where x.workspace_id = ${workspaceId} and x.namespace_id = p.n
                                and x.key = decode(p.k, 'hex') and x.retracted_at is null limit 1) m`,
    );
    return rowsOf<{ namespace_id: string; key_hex: string; id: string }>(result).map((row) => ({
      namespaceId: row.namespace_id,
      key: Buffer.from(row.key_hex, 'hex').toString('utf8'),
      id: row.id,
    }));
  }

  async insert(memory: MemoryRow, revision: RevisionRow): Promise<void> {
    await this.db.insert(memories).values(memory);
    await this.db.insert(revisions).values(revision);
    this.written?.note(memories, memory);
    this.written?.note(revisions, revision);
  }

  async getRevisions(workspaceId: string, ids: readonly string[]): Promise<RevisionRow[]> {
    if (ids.length === 0) return [];
    return this.db
      .select()
      .from(revisions)
      .where(and(eq(revisions.workspaceId, workspaceId), inArray(revisions.id, [...ids])));
  }

  /**
   * Revisions of a memory recorded by `knownAt`, newest generation first, optionally only
   * those older than a generation (history paging).
   */
  async revisionsKnownAt(
    workspaceId: string,
    memoryId: string,
    options: { knownAt: number; beforeGeneration?: number | undefined; limit?: number | undefined },
  ): Promise<RevisionRow[]> {
    const query = this.db
      .select()
      .from(revisions)
      .where(
        and(
          eq(revisions.workspaceId, workspaceId),
          eq(revisions.memoryId, memoryId),
          lte(revisions.recordedAt, options.knownAt),
          options.beforeGeneration === undefined ? undefined : lt(revisions.generation, options.beforeGeneration),
        ),
      )
      .orderBy(desc(revisions.generation));
    return options.limit === undefined ? query : query.limit(options.limit);
  }

  async insertRevision(revision: RevisionRow, generation: number): Promise<void> {
    await this.db.insert(revisions).values(revision);
    this.written?.note(revisions, revision);
    await this.db
      .update(memories)
      .set({ generation })
      .where(and(eq(memories.workspaceId, revision.workspaceId), eq(memories.id, revision.memoryId)));
  }

  /** End a revision's record interval (superseded or retracted). */
  async endRecord(workspaceId: string, revisionId: string, recordedUntil: number): Promise<void> {
    await this.db
      .update(revisions)
      .set({ recordedUntil })
      .where(and(eq(revisions.workspaceId, workspaceId), eq(revisions.id, revisionId)));
  }

  /** Mark a memory retracted (its current revision's record ended): it no longer holds its key. */
  async markRetracted(workspaceId: string, memoryId: string, at: number): Promise<void> {
    await this.db
      .update(memories)
      .set({ retractedAt: at })
      .where(and(eq(memories.workspaceId, workspaceId), eq(memories.id, memoryId)));
  }

  /** Current, unpurged, not yet invalidated revisions that cite any of `revisionIds` as support. */
  async currentDependents(workspaceId: string, revisionIds: readonly string[]): Promise<RevisionRow[]> {
    if (revisionIds.length === 0) return [];
    return this.db
      .select()
      .from(revisions)
      .where(
        and(
          eq(revisions.workspaceId, workspaceId),
          arrayOverlaps(revisions.supportRevisionIds, [...revisionIds]),
          isNull(revisions.recordedUntil),
          isNull(revisions.purgedAt),
          isNull(revisions.invalidatedAt),
        ),
      )
      .orderBy(asc(revisions.id));
  }

  async invalidate(
    workspaceId: string,
    revisionIds: readonly string[],
    invalidation: { at: number; causeRevisionId: string; reason: 'support_corrected' | 'support_deleted' },
  ): Promise<void> {
    if (revisionIds.length === 0) return;
    await this.db
      .update(revisions)
      .set({
        invalidatedAt: invalidation.at,
        invalidationCauseRevisionId: invalidation.causeRevisionId,
        invalidationReason: invalidation.reason,
      })
      .where(and(eq(revisions.workspaceId, workspaceId), inArray(revisions.id, [...revisionIds])));
  }

  /**
   * Erase the text of every revision of a memory (the attestation's claim text is that text) and
   * the memory's key (its hash stays, as the chain's record of it).
   */
  async purge(workspaceId: string, memoryId: string, at: number): Promise<void> {
    await this.db
      .update(revisions)
      .set({ text: null, purgedAt: at })
      .where(and(eq(revisions.workspaceId, workspaceId), eq(revisions.memoryId, memoryId)));
    await this.db
      .update(memories)
      .set({ purgedAt: at, key: null })
      .where(and(eq(memories.workspaceId, workspaceId), eq(memories.id, memoryId)));
  }

  /**
   * One page of a namespace's memories at (asOf, knownAt): for each memory its revision that
   * was current at knownAt and valid at asOf, unpurged, ordered by memory id; with each row its
   * memory's highest generation recorded by `knownAt` (as `identitiesAt`) and its key, in one
   * statement. With `key`, only the memories that hold or held it (at most one is current at any
   * knownAt, decisions §12). The outer table is named in full in the subqueries: Drizzle leaves
   * columns unqualified in a one-table select. Each subquery names the workspace itself, so that
   * it reads one partition (one shard on a cluster).
   */
  async listCurrentWithGenerations(
    workspaceId: string,
    options: {
      namespaceId: string;
      kind?: MemoryRow['kind'] | undefined;
      key?: string | undefined;
      asOf: number;
      knownAt: number;
      afterMemoryId: string | null;
      limit: number;
    },
  ): Promise<{ revision: RevisionRow; generation: number; key: string | null }[]> {
    const { namespaceId, kind, key, asOf, knownAt, afterMemoryId, limit } = options;
    const holders =
      key === undefined
        ? undefined
        : sql`"revisions"."memory_id" in (select k.id from memories k where k.workspace_id = ${workspaceId} and k.namespace_id = ${namespaceId} and k.key = ${Buffer.from(key, 'utf8')}::bytea)`;
    const rows = await this.db
      .select({
        revision: revisions,
        generation: sql<
          string | number
        >`(select max(g.generation) from revisions g where g.workspace_id = ${workspaceId} and g.memory_id = "revisions"."memory_id" and g.recorded_at <= ${knownAt})`,
        key: sql<
          string | null
        >`(select m.key from memories m where m.workspace_id = ${workspaceId} and m.id = "revisions"."memory_id")`.mapWith(
          memories.key,
        ),
      })
      .from(revisions)
      .where(
        and(
          eq(revisions.workspaceId, workspaceId),
          eq(revisions.namespaceId, namespaceId),
          kind ? eq(revisions.kind, kind) : undefined,
          holders,
          visibleAt(asOf, knownAt),
          afterMemoryId ? gt(revisions.memoryId, afterMemoryId) : undefined,
        ),
      )
      .orderBy(asc(revisions.memoryId))
      .limit(limit);
    return rows.map((r) => ({ revision: r.revision, generation: Number(r.generation), key: r.key ?? null }));
  }

  /** Each memory's highest generation recorded by `knownAt` (memories unknown then are absent), and its key. */
  async identitiesAt(
    workspaceId: string,
    memoryIds: readonly string[],
    knownAt: number,
  ): Promise<Map<string, { generation: number; key: string | null }>> {
    if (memoryIds.length === 0) return new Map();
    const rows = await this.db
      .select({ memoryId: revisions.memoryId, generation: max(revisions.generation), key: memories.key })
      .from(revisions)
      .innerJoin(memories, and(eq(memories.workspaceId, workspaceId), eq(memories.id, revisions.memoryId)))
      .where(
        and(
          eq(revisions.workspaceId, workspaceId),
          inArray(revisions.memoryId, [...memoryIds]),
          lte(revisions.recordedAt, knownAt),
        ),
      )
      .groupBy(revisions.memoryId, memories.key);
    return new Map(rows.map((r) => [r.memoryId, { generation: Number(r.generation), key: r.key ?? null }]));
  }

  async getMany(workspaceId: string, ids: readonly string[]): Promise<MemoryRow[]> {
    if (ids.length === 0) return [];
    return this.db
      .select()
      .from(memories)
      .where(and(eq(memories.workspaceId, workspaceId), inArray(memories.id, [...ids])));
  }

  /** Every revision of several memories (the indexer's view of what changed). */
  async revisionsOfMemories(workspaceId: string, memoryIds: readonly string[]): Promise<RevisionRow[]> {
    if (memoryIds.length === 0) return [];
    return this.db
      .select()
      .from(revisions)
      .where(and(eq(revisions.workspaceId, workspaceId), inArray(revisions.memoryId, [...memoryIds])));
  }

  /**
   * Every revision of several memories, each with its memory's key, in one statement: what
   * recall needs to decide on candidates and then present the chosen ones (their generation
   * and key at knownAt follow from these rows, as `identitiesAt` reads them).
   */
  async revisionsWithKeys(
    workspaceId: string,
    memoryIds: readonly string[],
  ): Promise<{ revision: RevisionRow; key: string | null }[]> {
    if (memoryIds.length === 0) return [];
    this.revisionsWithKeysQuery ??= this.prepareRevisionsWithKeys();
    const [answer] = await this.revisionsWithKeysQuery.execute({ workspaceId, memoryIds: [...memoryIds] });
    const rows = jsonValue<{ revision: Json; key: string | null }[]>(answer?.rows ?? []);
    return rows.map((r) => ({
      revision: decodeJsonRow<RevisionRow>(revisions, r.revision),
      key: r.key === null ? null : (memories.key.mapFromDriverValue(Buffer.from(r.key, 'hex')) as string),
    }));
  }

  /**
   * `revisionsWithKeys`' select, built once per storage: recall asks it on every arm's page, and
   * building a select of every revision column cost more of the gateway's time than the rows
   * it reads. The ids are one array parameter, so the text is one whatever their count, and
   * prepared once per connection. The rows come back as one JSON array: on PGlite each row and
   * field of an answer costs JavaScript in the protocol's parser (40 revisions of 21 columns,
   * a page of one arm, cost more as rows than the statement took to run).
   */
  private prepareRevisionsWithKeys() {
    const workspaceId = sql.placeholder('workspaceId');
    const row = sql`json_build_object('revision', ${jsonRow(revisions, 'revisions')}, 'key', encode(${memories.key}, 'hex'))`;
    return this.db
      .select({ rows: sql<Json[] | string>`coalesce(json_agg(${row}), '[]'::json)` })
      .from(revisions)
      .innerJoin(memories, and(eq(memories.workspaceId, workspaceId), eq(memories.id, revisions.memoryId)))
      .where(
        and(
          eq(revisions.workspaceId, workspaceId),
          sql`${revisions.memoryId} = any(${sql.placeholder('memoryIds')}::text[])`,
        ),
      )
      .prepare('revisions_with_keys');
  }

  private revisionsWithKeysQuery: ReturnType<MemoryStorage['prepareRevisionsWithKeys']> | null = null;

  /**
   * The ledger alone answering a text query (recall while the search provider is down): current,
   * valid, unpurged revisions in the namespaces whose text contains any of the terms as exact
   * bytes, ordered by memory id.
   */
  async scanText(
    workspaceId: string,
    options: {
      namespaceIds: readonly string[];
      kinds?: readonly string[] | undefined;
      terms: readonly string[];
      asOf: number;
      knownAt: number;
      limit: number;
    },
  ): Promise<RevisionRow[]> {
    const { namespaceIds, kinds, terms, asOf, knownAt, limit } = options;
    if (namespaceIds.length === 0 || terms.length === 0) return [];
    const matches = or(...terms.map((t) => sql`position(${Buffer.from(t, 'utf8')}::bytea in ${revisions.text}) > 0`));
    return this.db
      .select()
      .from(revisions)
      .where(
        and(
          eq(revisions.workspaceId, workspaceId),
          inArray(revisions.namespaceId, [...namespaceIds]),
          kinds?.length ? inArray(revisions.kind, [...kinds] as MemoryRow['kind'][]) : undefined,
          visibleAt(asOf, knownAt),
          matches,
        ),
      )
      .orderBy(asc(revisions.memoryId))
      .limit(limit);
  }
}
