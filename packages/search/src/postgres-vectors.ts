import { createHash } from 'node:crypto';
import type { Database } from '@tms/ledger';
import { type SQL, sql } from 'drizzle-orm';
import { LRUCache } from 'lru-cache';
import type { SearchHit, SemanticQuery, VectorBatch, VectorMetadata } from './provider';

const rowsOf = <T>(result: unknown): T[] =>
  Array.isArray(result) ? (result as T[]) : (((result as { rows?: T[] }).rows ?? []) as T[]);

const list = (values: readonly string[]): SQL =>
  sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  );

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
const dot = (a: Float32Array, b: Float32Array): number => {
  let sum = 0;
  for (let i = 0; i < b.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
};
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
   * Exact store: bytes of decoded vectors kept in this process (default 64 MiB, about 32,000
   * vectors of 512 dimensions; 0 keeps none). A revision's vector under one model never changes,
   * so a kept one is as good as a read: each search then reads only the candidates' ids, where
   * reading their vectors (2 KiB each, sent as hex text) cost most of a hybrid recall's CPU.
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
 * The semantic arm's vectors beside the lexical documents, in the `search` schema: one row per
 * (workspace, model, revision) with its own copy of the revision's filter columns. The copy
 * keeps the two arms independent: each advances on its own cursor, and a semantic search never
 * waits for or depends on the lexical index.
 */
export class PostgresVectorStore {
  private storeKind: VectorStoreKind | null = null;
  private readonly indexedModels = new Set<string>();
  /** Exact store: decoded vectors by workspace, model and revision (`vectorCacheBytes`). */
  private readonly decoded: LRUCache<string, Float32Array> | null;

  constructor(
    private readonly db: Database,
    private readonly options: VectorStoreOptions = {},
  ) {
    const maxSize = options.vectorCacheBytes ?? 64 * 1024 * 1024;
    this.decoded = maxSize > 0 ? new LRUCache({ maxSize, sizeCalculation: (vector) => vector.byteLength }) : null;
  }

  /** Which store `prepare` settled on (null before it ran). */
  get kind(): VectorStoreKind | null {
    return this.storeKind;
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
    const column = rowsOf<{ type: string }>(
      await tx.execute(sql`
        select format_type(atttypid, atttypmod) as type from pg_attribute
         where attrelid = 'search.vectors'::regclass and attname = 'embedding'`),
    )[0]?.type;
    if (pgvector && column === 'bytea') await this.convertToPgvector(tx);
    this.storeKind = pgvector || column === 'vector' ? 'pgvector' : 'exact';
    this.indexedModels.clear();
  }

  /** pgvector installed after vectors were stored: convert them in place (no re-embedding). */
  private async convertToPgvector(tx: Pick<Database, 'execute'>): Promise<void> {
    await tx.execute(sql`alter table search.vectors add column embedding_vector vector`);
    for (;;) {
      const rows = rowsOf<{ workspace_id: string; model: string; revision_id: string; embedding: Uint8Array }>(
        await tx.execute(sql`
          select workspace_id, model, revision_id, embedding from search.vectors
           where embedding_vector is null limit 500`),
      );
      if (rows.length === 0) break;
      for (const row of rows) {
        const bytes = row.embedding;
        const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        const vector = Float32Array.from({ length: bytes.byteLength / 4 }, (_, i) => view.getFloat32(i * 4, true));
        await tx.execute(sql`
          update search.vectors set embedding_vector = ${vectorText(vector)}::vector
           where workspace_id = ${row.workspace_id} and model = ${row.model} and revision_id = ${row.revision_id}`);
      }
    }
    await tx.execute(sql`alter table search.vectors drop column embedding`);
    await tx.execute(sql`alter table search.vectors rename column embedding_vector to embedding`);
    await tx.execute(sql`alter table search.vectors alter column embedding set not null`);
    await tx.execute(sql`update search.vectors set bits = null`);
  }

  /**
   * The store in use: settled by `prepare`, or read from the table where another process
   * prepared it (a gateway beside an external indexer); null while there is no table yet.
   */
  private async currentKind(): Promise<VectorStoreKind | null> {
    if (this.storeKind) return this.storeKind;
    const column = rowsOf<{ type: string | null }>(
      await this.db.execute(sql`
        select (select format_type(atttypid, atttypmod) from pg_attribute
                 where attrelid = to_regclass('search.vectors') and attname = 'embedding') as type`),
    )[0]?.type;
    if (!column) return null;
    this.storeKind = column === 'vector' ? 'pgvector' : 'exact';
    return this.storeKind;
  }

  private async preparedKind(): Promise<VectorStoreKind> {
    const kind = await this.currentKind();
    if (!kind) throw new Error('the vector store is used before prepare()');
    return kind;
  }

  /** pgvector: one HNSW cosine index per model, over the embedding cast to its dimensions. */
  private async ensureModelIndex(model: string, dimensions: number): Promise<void> {
    if ((await this.preparedKind()) !== 'pgvector' || this.indexedModels.has(model)) return;
    if (this.options.hnsw === false) return;
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

  async apply(workspaceId: string, batch: VectorBatch): Promise<void> {
    const kind = await this.preparedKind();
    await this.ensureModelIndex(batch.model, batch.dimensions);
    for (const upsert of batch.upserts) {
      if (upsert.vector.length !== batch.dimensions) {
        throw new Error(
          `a vector of ${upsert.vector.length} dimensions for model ${batch.model} (${batch.dimensions})`,
        );
      }
    }
    await this.db.transaction(async (tx) => {
      if (batch.deletes.length) {
        // Every model's vector of a purged revision goes: no embedding of purged text is kept.
        await tx.execute(
          sql`delete from search.vectors where workspace_id = ${workspaceId} and revision_id in (${list(batch.deletes)})`,
        );
      }
      for (let i = 0; i < batch.updates.length; i += 200) {
        await this.updateMetadata(tx, workspaceId, batch.updates.slice(i, i + 200));
      }
      // 50 rows a statement: each carries a vector as text (a few kilobytes).
      for (let i = 0; i < batch.upserts.length; i += 50) {
        const chunk = batch.upserts.slice(i, i + 50);
        const values = sql.join(
          chunk.map(
            (d) => sql`(${workspaceId}, ${batch.model}, ${d.revisionId}, ${d.memoryId}, ${d.namespaceId}, ${d.kind},
              ${d.validFrom}::float8, ${d.validTo}::float8, ${d.recordedAt}::float8, ${d.recordedUntil}::float8,
              ${kind === 'pgvector' ? sql`${vectorText(d.vector)}::vector` : sql`${packed(d.vector)}::bytea`},
              ${kind === 'pgvector' ? sql`null::varbit` : sql`${signBits(d.vector)}::varbit`})`,
          ),
          sql`, `,
        );
        await tx.execute(sql`
          insert into search.vectors
            (workspace_id, model, revision_id, memory_id, namespace_id, kind, valid_from, valid_to,
             recorded_at, recorded_until, embedding, bits)
          values ${values}
          on conflict (workspace_id, model, revision_id) do update set
            memory_id = excluded.memory_id, namespace_id = excluded.namespace_id, kind = excluded.kind,
            valid_from = excluded.valid_from, valid_to = excluded.valid_to,
            recorded_at = excluded.recorded_at, recorded_until = excluded.recorded_until,
            embedding = excluded.embedding, bits = excluded.bits`);
      }
    });
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
    if ((revisionIds && revisionIds.length === 0) || (await this.currentKind()) === null) return [];
    const only = revisionIds ? sql`and revision_id in (${list(revisionIds)})` : sql``;
    const result = await this.db.execute(sql`
      select revision_id from search.vectors
       where workspace_id = ${workspaceId} and model = ${model} ${only}
       order by revision_id`);
    return rowsOf<{ revision_id: string }>(result).map((r) => r.revision_id);
  }

  async clear(workspaceId: string, keepModel?: string): Promise<void> {
    if ((await this.currentKind()) === null) return;
    const keep = keepModel === undefined ? sql`` : sql`and model <> ${keepModel}`;
    await this.db.execute(sql`delete from search.vectors where workspace_id = ${workspaceId} ${keep}`);
  }

  async search(query: SemanticQuery): Promise<SearchHit[]> {
    if (query.namespaceIds.length === 0 || query.limit <= 0 || query.revisionIds?.length === 0) return [];
    const kinds = query.kinds?.length ? sql`and kind in (${list(query.kinds)})` : sql``;
    const only = query.revisionIds ? sql`and revision_id in (${list(query.revisionIds)})` : sql``;
    // The model as a literal: the planner can then match the model's partial HNSW index.
    const filters = sql`workspace_id = ${query.workspaceId} and model = ${literal(query.model)}
      and namespace_id in (${list(query.namespaceIds)}) ${kinds} ${only}
      and recorded_at <= ${query.knownAt} and (recorded_until is null or recorded_until > ${query.knownAt})
      and valid_from <= ${query.asOf} and (valid_to is null or valid_to > ${query.asOf})`;
    const wanted = query.limit + query.offset;
    const kind = await this.currentKind();
    if (kind === null) return [];
    const rows = query.revisionIds
      ? await this.scoreGiven(query, filters, kind)
      : kind === 'pgvector'
        ? await this.searchHnsw(query, filters, wanted)
        : await this.searchExact(query, filters, wanted);
    return rows.map((r) => ({ revisionId: r.revision_id, memoryId: r.memory_id, score: Number(r.score) }));
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
        await this.db.execute(sql`select revision_id, memory_id from search.vectors where ${filters}`),
      );
      rows = await this.scoredExactly(query, found);
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
         where ${filters}
         order by bit_count(bits # ${signBits(query.vector)}::varbit), revision_id
         limit ${candidates}`),
    );
    return (await this.scoredExactly(query, found)).sort(bestFirst).slice(query.offset, query.offset + query.limit);
  }

  /**
   * The exact cosine of each found revision, from the kept vectors and one read of the rest. A
   * vector deleted between the two reads (a purge) drops its revision, as if not found.
   */
  private async scoredExactly(query: SemanticQuery, found: readonly { revision_id: string; memory_id: string }[]) {
    const keyOf = (revisionId: string) => `${query.workspaceId}\u0000${query.model}\u0000${revisionId}`;
    const vectors = new Map<string, Float32Array>();
    const missing: string[] = [];
    for (const { revision_id } of found) {
      const kept = this.decoded?.get(keyOf(revision_id));
      if (kept) vectors.set(revision_id, kept);
      else missing.push(revision_id);
    }
    if (missing.length > 0) {
      const read = rowsOf<{ revision_id: string; embedding: Uint8Array }>(
        await this.db.execute(sql`
          select revision_id, embedding from search.vectors
           where workspace_id = ${query.workspaceId} and model = ${literal(query.model)}
             and revision_id in (${list(missing)})`),
      );
      for (const { revision_id, embedding } of read) {
        const vector = unpacked(embedding);
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
