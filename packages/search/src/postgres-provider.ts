import type { Database } from '@tms/ledger';
import { type SQL, sql } from 'drizzle-orm';
import { PostgresVectorStore, type VectorStoreOptions } from './postgres-vectors';
import {
  queryTerms,
  type SearchDocument,
  type SearchHit,
  type SearchProvider,
  type SearchQuery,
  type SemanticQuery,
  type VectorBatch,
} from './provider';

const rowsOf = <T>(result: unknown): T[] =>
  Array.isArray(result) ? (result as T[]) : (((result as { rows?: T[] }).rows ?? []) as T[]);

const list = (values: readonly string[]): SQL =>
  sql.join(
    values.map((v) => sql`${v}`),
    sql`, `,
  );

/**
 * Embedded full-text search: a `tsvector` + GIN index in its own schema (`search`), beside the
 * ledger. Only the indexer writes it; it keeps no text, only the vector.
 */
export class PostgresSearchProvider implements SearchProvider {
  readonly name = 'postgres' as const;

  /** The semantic arm (./postgres-vectors.ts): vectors beside the lexical documents. */
  readonly vectors: PostgresVectorStore;

  constructor(
    private readonly db: Database,
    vectorOptions: VectorStoreOptions = {},
  ) {
    this.vectors = new PostgresVectorStore(db, vectorOptions);
  }

  async prepare(): Promise<void> {
    // Processes starting together would race on `create ... if not exists` (a duplicate-key
    // error in the catalog): one lock for the whole preparation, released at commit.
    await this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended('tms-search-prepare', 0))`);
      await tx.execute(sql`create schema if not exists search`);
      await tx.execute(sql`
      create table if not exists search.documents (
        workspace_id text not null,
        revision_id text not null,
        memory_id text not null,
        namespace_id text not null,
        kind text not null,
        tsv tsvector not null,
        valid_from double precision not null,
        valid_to double precision,
        recorded_at double precision not null,
        recorded_until double precision,
        primary key (workspace_id, revision_id)
      )`);
      await tx.execute(sql`create index if not exists documents_tsv on search.documents using gin (tsv)`);
      await tx.execute(
        sql`create index if not exists documents_namespace on search.documents (workspace_id, namespace_id)`,
      );
      await this.vectors.prepare(tx);
    });
  }

  async apply(
    workspaceId: string,
    batch: { upserts: readonly SearchDocument[]; deletes: readonly string[] },
  ): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (batch.deletes.length) {
        await tx.execute(
          sql`delete from search.documents where workspace_id = ${workspaceId} and revision_id in (${list(batch.deletes)})`,
        );
      }
      // 200 rows a statement keeps the parameter count far below Postgres' limit.
      for (let i = 0; i < batch.upserts.length; i += 200) {
        const chunk = batch.upserts.slice(i, i + 200);
        const values = sql.join(
          chunk.map(
            (d) => sql`(${d.workspaceId}, ${d.revisionId}, ${d.memoryId}, ${d.namespaceId}, ${d.kind},
              to_tsvector('simple', ${d.text.replaceAll('\u0000', ' ')}), ${d.validFrom}, ${d.validTo},
              ${d.recordedAt}, ${d.recordedUntil})`,
          ),
          sql`, `,
        );
        await tx.execute(sql`
          insert into search.documents
            (workspace_id, revision_id, memory_id, namespace_id, kind, tsv, valid_from, valid_to, recorded_at, recorded_until)
          values ${values}
          on conflict (workspace_id, revision_id) do update set
            namespace_id = excluded.namespace_id, kind = excluded.kind, tsv = excluded.tsv,
            valid_from = excluded.valid_from, valid_to = excluded.valid_to,
            recorded_at = excluded.recorded_at, recorded_until = excluded.recorded_until`);
      }
    });
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    const terms = queryTerms(query.text);
    if (terms.length === 0 || query.namespaceIds.length === 0) return [];
    const tsquery = terms.join(' | ');
    const kinds = query.kinds?.length ? sql`and kind in (${list(query.kinds)})` : sql``;
    const result = await this.db.execute(sql`
      select revision_id, memory_id, ts_rank(tsv, q) as score
        from search.documents, to_tsquery('simple', ${tsquery}) q
       where workspace_id = ${query.workspaceId}
         and namespace_id in (${list(query.namespaceIds)})
         ${kinds}
         and tsv @@ q
         and recorded_at <= ${query.knownAt} and (recorded_until is null or recorded_until > ${query.knownAt})
         and valid_from <= ${query.asOf} and (valid_to is null or valid_to > ${query.asOf})
       order by score desc, revision_id
       limit ${query.limit} offset ${query.offset}`);
    return rowsOf<{ revision_id: string; memory_id: string; score: number }>(result).map((r) => ({
      revisionId: r.revision_id,
      memoryId: r.memory_id,
      score: Number(r.score),
    }));
  }

  searchSemantic(query: SemanticQuery): Promise<SearchHit[]> {
    return this.vectors.search(query);
  }

  applyVectors(workspaceId: string, batch: VectorBatch): Promise<void> {
    return this.vectors.apply(workspaceId, batch);
  }

  vectorRevisionIds(workspaceId: string, model: string, revisionIds?: readonly string[]): Promise<string[]> {
    return this.vectors.revisionIds(workspaceId, model, revisionIds);
  }

  clearVectors(workspaceId: string, options: { keepModel?: string } = {}): Promise<void> {
    return this.vectors.clear(workspaceId, options.keepModel);
  }

  async clear(workspaceId: string): Promise<void> {
    await this.db.execute(sql`delete from search.documents where workspace_id = ${workspaceId}`);
  }

  async indexedRevisionIds(workspaceId: string): Promise<string[]> {
    const result = await this.db.execute(
      sql`select revision_id from search.documents where workspace_id = ${workspaceId} order by revision_id`,
    );
    return rowsOf<{ revision_id: string }>(result).map((r) => r.revision_id);
  }
}
