import { createHash } from 'node:crypto';
import { type Database, rowsOf } from '@tms/ledger';
import { type SQL, sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type {
  CursorFence,
  ScopedSemanticSearch,
  SearchHit,
  SemanticQuery,
  SemanticScope,
  VectorBatch,
  VectorMetadata,
} from './provider';
import { list, packedRows, sqlState } from './sql';

/** A SQL string literal (standard_conforming_strings: only the quote needs doubling). */
const literal = (value: string): SQL => sql.raw(`'${value.replaceAll("'", "''")}'`);

/** `[x,y,...]`: pgvector's text form, which also casts to `real[]` once braced. */
const vectorText = (vector: Float32Array): string => `[${Array.from(vector).join(',')}]`;
/** The exact store keeps a vector as its float32 bytes (little-endian): read back and scored in JS. */
const packed = (vector: Float32Array): Buffer => {
  const bytes = Buffer.alloc(vector.length * 4);
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] as number, i * 4);
  return bytes;
};
/** The float32 bytes of `packed` back into a vector (a copy: the driver's buffer is not kept). */
const unpacked = (bytes: Uint8Array): Float32Array => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(bytes.byteLength / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
  return vector;
};
/** pgvector's binary form (`vector_send`): dimensions (int16), an unused int16, then big-endian float32s. */
const fromVectorSend = (bytes: Uint8Array): Float32Array => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const vector = new Float32Array(view.getInt16(0));
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(4 + i * 4);
  return vector;
};
const dot = (a: Float32Array, b: Float32Array): number => {
  let sum = 0;
  for (let i = 0; i < b.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
};
/**
 * A condition true of every row of the exact store that fails on the pgvector store (there is no
 * cast from `vector` to `bytea`): an exact search whose vectors are all kept in the process reads
 * no `embedding`, and would otherwise never find a store another process switched.
 */
const EXACT_STORE = sql`and embedding::bytea is not null`;
/** The same for the pgvector store (there is no cast from `bytea` to `vector`); neither reads the vector itself. */
const PGVECTOR_STORE = sql`and embedding::vector is not null`;
/** Highest score first, ties by revision id. */
const bestFirst = (a: { score: number; revision_id: string }, b: { score: number; revision_id: string }) =>
  b.score - a.score || (a.revision_id < b.revision_id ? -1 : a.revision_id > b.revision_id ? 1 : 0);
/** One bit per dimension, set where the component is positive: the exact store's coarse pass. */
const signBits = (vector: Float32Array): string => Array.from(vector, (x) => (x > 0 ? '1' : '0')).join('');

/**
 * How the vectors are searched:
 * - `pgvector`: the `vector` extension (PGlite ships it; a server Postgres where it is installed),
 *   one HNSW cosine index per model, iterative index scans so filters never starve the answer
 *   (on PGlite no index: pgvector's exact scan, see `hnsw`);
 * - `exact`: plain Postgres. Every filtered row's sign bits are compared with the query's
 *   (Hamming distance, `bit_count`, in SQL), and the best `rescoreCandidates` are read back
 *   (float32 bytes) and rescored exactly here (dot product of unit vectors = cosine): SQL has no
 *   fast dot product without pgvector. Exact whenever the filtered rows number no more than
 *   the candidates; its cost grows linearly with them (README: when to install pgvector).
 */
export type VectorStoreKind = 'pgvector' | 'exact';

export interface VectorStoreOptions {
  /** `auto` (default): pgvector where the extension can be created, else exact. */
  store?: 'auto' | 'exact';
  /** Exact store: rows rescored exactly per query, at least (default 400, or 10 × limit + offset). */
  rescoreCandidates?: number;
  /**
   * A recall's scope of at most this many vectors is read whole and ranked exactly in this
   * process from the kept vectors (default 2000; 0: never), on either store; see `scope`.
   */
  wholeScopeRows?: number;
  /**
   * Bytes of decoded vectors kept in this process for the searches ranked here (the exact store's,
   * and whole scopes on either store; default 64 MiB, about 32,000 vectors of 512 dimensions; 0
   * keeps none). A revision's vector under one model never changes, so a kept one is as good as
   * a read: each search then reads only the candidates' ids, where reading their vectors (2 KiB
   * each, sent as hex text) cost most of a hybrid recall's CPU.
   */
  vectorCacheBytes?: number;
  /**
   * pgvector: build an HNSW index per model (default true). Off on the embedded PGlite ledger:
   * its one connection runs every statement in turn, so an HNSW insert (19 ms of wasm a vector,
   * against 4.7 ms without the index, measured at 1,500 vectors of 512 dimensions) holds up the
   * writes; there pgvector's exact scan answers faster than the index (10 ms against 17 ms per
   * query at that size).
   */
  hnsw?: boolean;
}

type Executor = Pick<Database, 'execute'>;

/**
 * SQLSTATEs of a statement written for the other store: a cast that does not exist (42846), a
 * value of the other type (42804), an operator missing for the column's type (42883), a column
 * renamed away (42703), a prepared plan whose result type changed (0A000). Every statement names
 * the column's type, so a process that last saw the other store fails loudly, never misreads.
 */
const OTHER_STORE = new Set(['42846', '42804', '42883', '42703', '0A000']);

/** The store as the database's catalog records it: the `embedding` column's type, and whether a pgvector copy is being filled. */
interface StoreState {
  kind: VectorStoreKind;
  /** An exact store whose vectors are being copied into `embedding_pgvector`, to become a pgvector store. */
  filling: boolean;
}

async function readStore(db: Executor): Promise<StoreState | null> {
  const row = rowsOf<{ type: string | null; filling: boolean }>(
    await db.execute(sql`
      select (select format_type(atttypid, atttypmod) from pg_attribute
               where attrelid = to_regclass('search.vectors') and attname = 'embedding' and not attisdropped) as type,
             exists (select 1 from pg_attribute
                      where attrelid = to_regclass('search.vectors') and attname = 'embedding_pgvector'
                        and not attisdropped) as filling`),
  )[0];
  if (!row?.type) return null;
  return { kind: row.type === 'vector' ? 'pgvector' : 'exact', filling: row.filling === true };
}

/** Copy up to `limit` exact vectors not copied yet into the pgvector column (in key order); returns how many. */
async function copyUnfilled(tx: Executor, limit: number, locking: 'for update skip locked' | ''): Promise<number> {
  const rows = rowsOf<{ workspace_id: string; model: string; revision_id: string; embedding: Uint8Array }>(
    await tx.execute(sql`
      select workspace_id, model, revision_id, embedding::bytea as embedding from search.vectors
       where embedding_pgvector is null
       order by workspace_id, model, revision_id
       limit ${limit} ${sql.raw(locking)}`),
  );
  if (rows.length === 0) return 0;
  const values = sql.join(
    rows.map((r) => sql`(${r.workspace_id}, ${r.model}, ${r.revision_id}, ${vectorText(unpacked(r.embedding))})`),
    sql`, `,
  );
  await tx.execute(sql`
    update search.vectors v set embedding_pgvector = u.embedding::vector
      from (values ${values}) as u(workspace_id, model, revision_id, embedding)
     where v.workspace_id = u.workspace_id and v.model = u.model and v.revision_id = u.revision_id`);
  return rows.length;
}

/** Rows copied into the pgvector column per fill step (each carries its vector as text, a few kilobytes). */
const FILL_STEP_ROWS = 200;

/**
 * The semantic arm's vectors beside the lexical documents, in the `search` schema: one row per
 * (workspace, model, revision) with its own copy of the revision's filter columns. The copy
 * keeps the two arms independent: each advances on its own cursor, and a semantic search never
 * waits for or depends on the lexical index.
 *
 * Which store the table is lives in the catalog (the `embedding` column's type), where every
 * process reads it. This instance keeps the last one it saw only as a hint that each statement
 * checks (see `OTHER_STORE`): when another process has switched the store, the statement fails,
 * and the store is read again and the work done again, once. A change of store (pgvector
 * installed under an exact store) is filled in the background, not converted under a lock: see
 * `fill`.
 */
export class PostgresVectorStore {
  private seen: VectorStoreKind | null = null;
  private readonly indexedModels = new Set<string>();
  /** Decoded vectors by workspace, model and revision (`vectorCacheBytes`). */
  private readonly decoded: LRUCache<string, Float32Array> | null;

  constructor(
    private readonly db: Database,
    private readonly options: VectorStoreOptions = {},
  ) {
    const maxSize = options.vectorCacheBytes ?? 64 * 1024 * 1024;
    this.decoded = maxSize > 0 ? new LRUCache({ maxSize, sizeCalculation: (vector) => vector.byteLength }) : null;
  }

  /** The store this instance last saw in the catalog (null before it looked). */
  get kind(): VectorStoreKind | null {
    return this.seen;
  }

  /** Run inside the provider's preparation transaction, which holds the preparation lock. */
  async prepare(tx: Pick<Database, 'execute' | 'transaction'>): Promise<void> {
    let pgvector = false;
    if (this.options.store !== 'exact') {
      const available = rowsOf<{ available: boolean }>(
        await tx.execute(sql`select exists (select 1 from pg_available_extensions where name = 'vector') as available`),
      )[0]?.available;
      if (available) {
        // Creating it may need a superuser: then the exact store serves, and the error is not fatal.
        pgvector = await tx
          .transaction(async (savepoint) => {
            await savepoint.execute(sql`create extension if not exists vector`);
            return true;
          })
          .catch(() => false);
      }
    }
    await tx.execute(sql`
      create table if not exists search.vectors (
        workspace_id text not null,
        model text not null,
        revision_id text not null,
        memory_id text not null,
        namespace_id text not null,
        kind text not null,
        valid_from double precision not null,
        valid_to double precision,
        recorded_at double precision not null,
        recorded_until double precision,
        embedding ${sql.raw(pgvector ? 'vector' : 'bytea')} not null,
        bits bit varying,
        primary key (workspace_id, model, revision_id)
      )`);
    await tx.execute(
      sql`create index if not exists vectors_namespace on search.vectors (workspace_id, model, namespace_id)`,
    );
    const store = (await readStore(tx)) as StoreState;
    if (pgvector && store.kind === 'exact' && !store.filling) {
      // pgvector installed after vectors were stored: add the pgvector column (a catalog change)
      // and a partial index of the rows not copied yet (its build is the one pass over the table
      // that holds writes back); the indexer fills the column in the background (`fill`) while
      // the exact store goes on serving. Nothing is embedded again.
      await tx.execute(sql`alter table search.vectors add column embedding_pgvector vector`);
      await tx.execute(sql`
        create index vectors_unfilled on search.vectors (workspace_id, model, revision_id)
         where embedding_pgvector is null`);
    }
    this.saw(store.kind);
    // A table dropped and created again has no per-model index: check them anew.
    this.indexedModels.clear();
  }

  /** Remember the store last seen; another store than before: its per-model indexes are checked anew. */
  private saw(kind: VectorStoreKind | null): void {
    if (kind !== this.seen) this.indexedModels.clear();
    this.seen = kind;
  }

  /** The store as the catalog records it now (null: no table yet). */
  private async look(): Promise<VectorStoreKind | null> {
    const store = await readStore(this.db);
    this.saw(store?.kind ?? null);
    return this.seen;
  }

  /**
   * Run `work` against the store last seen (looked up when none was); if a statement finds the
   * other store (switched by another process since), look again and run it once more. `none`
   * answers while there is no table.
   */
  private async withStore<T>(work: (kind: VectorStoreKind) => Promise<T>, none: T): Promise<T> {
    const kind = this.seen ?? (await this.look());
    if (kind === null) return none;
    try {
      return await work(kind);
    } catch (error) {
      if (!OTHER_STORE.has(sqlState(error) ?? '')) throw error;
      const now = await this.look();
      if (now === null) return none;
      return work(now);
    }
  }

  /**
   * One step of filling the pgvector copy of an exact store, in a short transaction: up to
   * `FILL_STEP_ROWS` rows not copied yet (from the partial index, skipping rows another filler
   * holds). When none is left, one short transaction switches the store: it locks the table,
   * copies the rows a writer added since the last step, drops the exact column and renames the
   * copy to `embedding`. Every process then finds the pgvector store at its next statement.
   * Returns the rows copied (0: nothing to fill).
   */
  async fill(): Promise<number> {
    if ((await readStore(this.db))?.filling !== true) return 0;
    const copied = await this.db.transaction((tx) =>
      copyUnfilled(tx as never, FILL_STEP_ROWS, 'for update skip locked'),
    );
    if (copied > 0) return copied;
    const switched = await this.db.transaction(async (tx) => {
      // One switch at a time, and never inside another process's preparation.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended('tms-search-prepare', 0))`);
      if ((await readStore(tx))?.filling !== true) return 0;
      await tx.execute(sql`lock table search.vectors in access exclusive mode`);
      let residue = 0;
      for (;;) {
        const step = await copyUnfilled(tx as never, FILL_STEP_ROWS * 5, '');
        if (step === 0) break;
        residue += step;
      }
      await tx.execute(sql`drop index search.vectors_unfilled`);
      await tx.execute(sql`alter table search.vectors drop column embedding`);
      await tx.execute(sql`alter table search.vectors rename column embedding_pgvector to embedding`);
      return residue;
    });
    await this.look();
    return switched;
  }

  /** Whether the table exists (as last seen, or looked up). */
  private async exists(): Promise<boolean> {
    return (this.seen ?? (await this.look())) !== null;
  }

  /** pgvector: one HNSW cosine index per model, over the embedding cast to its dimensions. */
  private async ensureModelIndex(model: string, dimensions: number): Promise<void> {
    if (this.options.hnsw === false || this.indexedModels.has(model)) return;
    if ((this.seen ?? (await this.look())) !== 'pgvector') return;
    const name = `vectors_hnsw_${createHash('sha256').update(model).digest('hex').slice(0, 16)}`;
    await this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended('tms-search-prepare', 0))`);
      await tx.execute(sql`
        create index if not exists ${sql.raw(name)} on search.vectors
         using hnsw ((embedding::vector(${sql.raw(String(dimensions))})) vector_cosine_ops)
         where model = ${literal(model)}`);
    });
    this.indexedModels.add(model);
  }

  /**
   * Store a batch: through the fence's transaction (with the semantic cursor's advance) when
   * given one, else in a transaction of its own. The store is read in that transaction after
   * taking the table's write lock, so no switch commits between the read and the writes.
   */
  async apply(workspaceId: string, batch: VectorBatch, fence?: CursorFence): Promise<boolean> {
    if (batch.upserts.length > 0) await this.ensureModelIndex(batch.model, batch.dimensions);
    for (const upsert of batch.upserts) {
      if (upsert.vector.length !== batch.dimensions) {
        throw new Error(
          `a vector of ${upsert.vector.length} dimensions for model ${batch.model} (${batch.dimensions})`,
        );
      }
    }
    const write = (db: Database) => this.write(db, workspaceId, batch);
    if (fence) return fence.store(write, 'advance');
    await this.db.transaction((tx) => write(tx as never));
    return true;
  }

  private async write(tx: Executor, workspaceId: string, batch: VectorBatch): Promise<void> {
    const empty = batch.deletes.length === 0 && batch.updates.length === 0 && batch.upserts.length === 0;
    if (empty) return;
    await tx.execute(sql`lock table search.vectors in row exclusive mode`);
    const store = await readStore(tx);
    if (!store) throw new Error('the vector store is used before prepare()');
    this.saw(store.kind);
    if (batch.deletes.length) {
      // Every model's vector of a purged revision goes: no embedding of purged text is kept.
      await tx.execute(
        sql`delete from search.vectors where workspace_id = ${workspaceId} and revision_id in (${list(batch.deletes)})`,
      );
    }
    for (let i = 0; i < batch.updates.length; i += 200) {
      await this.updateMetadata(tx, workspaceId, batch.updates.slice(i, i + 200));
    }
    const pgvector = store.kind === 'pgvector';
    // While a pgvector copy is being filled, new vectors are written to both columns.
    const copy = store.filling ? sql`, embedding_pgvector` : sql``;
    const copyUpdate = store.filling ? sql`, embedding_pgvector = excluded.embedding_pgvector` : sql``;
    // 50 rows a statement: each carries a vector as text (a few kilobytes).
    for (let i = 0; i < batch.upserts.length; i += 50) {
      const chunk = batch.upserts.slice(i, i + 50);
      const values = sql.join(
        chunk.map(
          (d) => sql`(${workspaceId}, ${batch.model}, ${d.revisionId}, ${d.memoryId}, ${d.namespaceId}, ${d.kind},
            ${d.validFrom}::float8, ${d.validTo}::float8, ${d.recordedAt}::float8, ${d.recordedUntil}::float8,
            ${pgvector ? sql`${vectorText(d.vector)}::vector` : sql`${packed(d.vector)}::bytea`},
            ${pgvector ? sql`null::varbit` : sql`${signBits(d.vector)}::varbit`}
            ${store.filling ? sql`, ${vectorText(d.vector)}::vector` : sql``})`,
        ),
        sql`, `,
      );
      await tx.execute(sql`
        insert into search.vectors
          (workspace_id, model, revision_id, memory_id, namespace_id, kind, valid_from, valid_to,
           recorded_at, recorded_until, embedding, bits ${copy})
        values ${values}
        on conflict (workspace_id, model, revision_id) do update set
          memory_id = excluded.memory_id, namespace_id = excluded.namespace_id, kind = excluded.kind,
          valid_from = excluded.valid_from, valid_to = excluded.valid_to,
          recorded_at = excluded.recorded_at, recorded_until = excluded.recorded_until,
          embedding = excluded.embedding, bits = excluded.bits ${copyUpdate}`);
    }
  }

  /** New filter columns for revisions already embedded (of every model): no re-embedding. */
  private async updateMetadata(tx: Executor, workspaceId: string, rows: readonly VectorMetadata[]): Promise<void> {
    if (rows.length === 0) return;
    const values = sql.join(
      rows.map(
        (d) => sql`(${d.revisionId}, ${d.namespaceId}, ${d.kind}, ${d.validFrom}::float8, ${d.validTo}::float8,
          ${d.recordedAt}::float8, ${d.recordedUntil}::float8)`,
      ),
      sql`, `,
    );
    await tx.execute(sql`
      update search.vectors v set
        namespace_id = u.namespace_id, kind = u.kind, valid_from = u.valid_from, valid_to = u.valid_to,
        recorded_at = u.recorded_at, recorded_until = u.recorded_until
        from (values ${values}) as u(revision_id, namespace_id, kind, valid_from, valid_to, recorded_at, recorded_until)
       where v.workspace_id = ${workspaceId} and v.revision_id = u.revision_id`);
  }

  async revisionIds(workspaceId: string, model: string, revisionIds?: readonly string[]): Promise<string[]> {
    if ((revisionIds && revisionIds.length === 0) || !(await this.exists())) return [];
    const only = revisionIds ? sql`and revision_id in (${list(revisionIds)})` : sql``;
    const result = await this.db.execute(sql`
      select revision_id from search.vectors
       where workspace_id = ${workspaceId} and model = ${model} ${only}
       order by revision_id`);
    return rowsOf<{ revision_id: string }>(result).map((r) => r.revision_id);
  }

  async clear(workspaceId: string, keepModel?: string): Promise<void> {
    if (!(await this.exists())) return;
    const keep = keepModel === undefined ? sql`` : sql`and model <> ${keepModel}`;
    await this.db.execute(sql`delete from search.vectors where workspace_id = ${workspaceId} ${keep}`);
  }

  async search(query: SemanticQuery): Promise<SearchHit[]> {
    if (query.namespaceIds.length === 0 || query.limit <= 0 || query.revisionIds?.length === 0) return [];
    const filters = filtersOf(query, query.revisionIds);
    const wanted = query.limit + query.offset;
    const rows = await this.withStore(
      (kind) =>
        query.revisionIds
          ? this.scoreGiven(query, filters, kind)
          : kind === 'pgvector'
            ? this.searchHnsw(query, filters, wanted)
            : this.searchExact(query, filters, wanted),
      [],
    );
    return rows.map(toHit);
  }

  /**
   * A semantic search of one scope, for one query. A scope of at most `wholeScopeRows` vectors is
   * read whole at once (its revision ids only, while the query is still being embedded) and,
   * once the vector comes, ranked here from the kept vectors: exactly, in one pass that also
   * scores any candidate the other arm found, with no statement after the vector but a read of
   * vectors not kept yet. A larger scope is searched by `search` (HNSW, or the exact store's
   * coarse pass), one statement a page.
   */
  scope(scope: SemanticScope): ScopedSemanticSearch {
    const most = this.options.wholeScopeRows ?? 2000;
    const members =
      scope.namespaceIds.length === 0 || most <= 0
        ? Promise.resolve(null)
        : this.withStore(async (kind) => {
            const rows = packedRows<[string, string]>(
              await this.db.execute(sql`
                select json_agg(json_build_array(revision_id, memory_id)) as packed from (
                  select revision_id, memory_id from search.vectors
                   where ${filtersOf(scope)} ${kind === 'exact' ? EXACT_STORE : PGVECTOR_STORE}
                   limit ${most + 1}) scope`),
            ).map(([revision_id, memory_id]): ScopeMember => ({ revision_id, memory_id }));
            return rows.length > most ? null : { kind, rows };
          }, null);
    // Settled here too: a recall that never searches (its embedding failed) leaves no rejection behind.
    members.catch(() => {});
    let ranked: { vector: Float32Array; scores: Promise<ScoredRow[]> } | null = null;
    return {
      search: async (vector, page) => {
        const whole = await members;
        if (!whole) return this.search({ ...scope, ...page, vector });
        if (ranked?.vector !== vector) {
          const scores = this.scoredExactly({ ...scope, vector }, whole.rows, whole.kind).then((rows) =>
            rows.sort(bestFirst),
          );
          ranked = { vector, scores };
        }
        const all = await ranked.scores;
        const given = page.revisionIds && new Set(page.revisionIds);
        const chosen = given ? all.filter((r) => given.has(r.revision_id)) : all;
        return chosen.slice(page.offset, page.offset + page.limit).map(toHit);
      },
    };
  }

  /** The exact cosine of each named revision (found by primary key, no nearest-neighbour search), best first. */
  private async scoreGiven(query: SemanticQuery, filters: SQL, kind: VectorStoreKind) {
    let rows: { revision_id: string; memory_id: string; score: number }[];
    if (kind === 'pgvector') {
      const dimensions = sql.raw(String(query.vector.length));
      rows = rowsOf(
        await this.db.execute(sql`
          select revision_id, memory_id,
                 1 - (embedding::vector(${dimensions}) <=> ${vectorText(query.vector)}::vector(${dimensions})) as score
            from search.vectors
           where ${filters}`),
      );
    } else {
      const found = rowsOf<{ revision_id: string; memory_id: string }>(
        await this.db.execute(sql`select revision_id, memory_id from search.vectors where ${filters} ${EXACT_STORE}`),
      );
      rows = await this.scoredExactly(query, found, 'exact');
    }
    return rows
      .map((r) => ({ ...r, score: Number(r.score) }))
      .sort(bestFirst)
      .slice(query.offset, query.offset + query.limit);
  }

  private async searchHnsw(query: SemanticQuery, filters: SQL, wanted: number) {
    const dimensions = sql.raw(String(query.vector.length));
    const vector = vectorText(query.vector);
    return this.db.transaction(async (tx) => {
      // Iterative scans (pgvector >= 0.8) go on through the graph until enough rows pass the
      // filters, so a narrow namespace or time filter never starves the answer.
      await tx.execute(sql`set local hnsw.iterative_scan = strict_order`);
      await tx.execute(sql.raw(`set local hnsw.ef_search = ${Math.min(1000, Math.max(64, wanted))}`));
      const result = await tx.execute(sql`
        select revision_id, memory_id, score from (
          select revision_id, memory_id,
                 1 - (embedding::vector(${dimensions}) <=> ${vector}::vector(${dimensions})) as score
            from search.vectors
           where ${filters}
           order by embedding::vector(${dimensions}) <=> ${vector}::vector(${dimensions})
           limit ${wanted}) best
         order by score desc, revision_id
         limit ${query.limit} offset ${query.offset}`);
      return rowsOf<{ revision_id: string; memory_id: string; score: number }>(result);
    });
  }

  private async searchExact(query: SemanticQuery, filters: SQL, wanted: number) {
    const candidates = Math.max(this.options.rescoreCandidates ?? 400, 10 * wanted);
    const found = rowsOf<{ revision_id: string; memory_id: string }>(
      await this.db.execute(sql`
        select revision_id, memory_id from search.vectors
         where ${filters} ${EXACT_STORE}
         order by bit_count(bits # ${signBits(query.vector)}::varbit), revision_id
         limit ${candidates}`),
    );
    return (await this.scoredExactly(query, found, 'exact'))
      .sort(bestFirst)
      .slice(query.offset, query.offset + query.limit);
  }

  /**
   * The exact cosine of each found revision, from the kept vectors and one read of the rest (in
   * the store's own encoding). A vector deleted between the two reads (a purge) drops its
   * revision, as if not found.
   */
  private async scoredExactly(
    query: Pick<SemanticQuery, 'workspaceId' | 'model' | 'vector'>,
    found: readonly ScopeMember[],
    kind: VectorStoreKind,
  ): Promise<ScoredRow[]> {
    const keyOf = (revisionId: string) => `${query.workspaceId}\u0000${query.model}\u0000${revisionId}`;
    const vectors = new Map<string, Float32Array>();
    const missing: string[] = [];
    for (const { revision_id } of found) {
      const kept = this.decoded?.get(keyOf(revision_id));
      if (kept) vectors.set(revision_id, kept);
      else missing.push(revision_id);
    }
    if (missing.length > 0) {
      const bytes = kind === 'exact' ? sql`embedding::bytea` : sql`vector_send(embedding::vector)`;
      const read = rowsOf<{ revision_id: string; embedding: Uint8Array }>(
        await this.db.execute(sql`
          select revision_id, ${bytes} as embedding from search.vectors
           where workspace_id = ${query.workspaceId} and model = ${literal(query.model)}
             and revision_id in (${list(missing)})`),
      );
      for (const { revision_id, embedding } of read) {
        const vector = kind === 'exact' ? unpacked(embedding) : fromVectorSend(embedding);
        vectors.set(revision_id, vector);
        this.decoded?.set(keyOf(revision_id), vector);
      }
    }
    return found.flatMap(({ revision_id, memory_id }) => {
      const vector = vectors.get(revision_id);
      return vector ? [{ revision_id, memory_id, score: dot(vector, query.vector) }] : [];
    });
  }
}

interface ScopeMember {
  revision_id: string;
  memory_id: string;
}
type ScoredRow = ScopeMember & { score: number };

const toHit = (r: { revision_id: string; memory_id: string; score: number | string }): SearchHit => ({
  revisionId: r.revision_id,
  memoryId: r.memory_id,
  score: Number(r.score),
});

/** The filters of a search (and, given, its revisions) on the vectors' own copy of the revision's columns. */
function filtersOf(scope: SemanticScope, revisionIds?: readonly string[]): SQL {
  const kinds = scope.kinds?.length ? sql`and kind in (${list(scope.kinds)})` : sql``;
  const only = revisionIds ? sql`and revision_id in (${list(revisionIds)})` : sql``;
  // The model as a literal: the planner can then match the model's partial HNSW index.
  return sql`workspace_id = ${scope.workspaceId} and model = ${literal(scope.model)}
    and namespace_id in (${list(scope.namespaceIds)}) ${kinds} ${only}
    and recorded_at <= ${scope.knownAt} and (recorded_until is null or recorded_until > ${scope.knownAt})
    and valid_from <= ${scope.asOf} and (valid_to is null or valid_to > ${scope.asOf})`;
}
