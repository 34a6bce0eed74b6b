import crypto from 'node:crypto';
import { type Database, rowsOf, Stores } from '@tms/ledger';
import { sql } from 'drizzle-orm';
import { PostgresVectorStore, type VectorStoreOptions } from './postgres-vectors';
import {
  type CursorFence,
  type DocumentBatch,
  type LexicalScope,
  type ScopedLexicalSearch,
  type ScopedSemanticSearch,
  type SearchDocument,
  type SearchHit,
  type SearchProvider,
  type SearchQuery,
  SearchUnavailableError,
  type SemanticQuery,
  type SemanticScope,
  type VectorBatch,
} from './provider';
import { list, packedRows } from './sql';
import { analyseDocument, analyseQuery } from './text-analysis';

/**
 * Version of the lexical index's tables (`search.documents`, `search.term_stats`,
 * `search.namespace_stats`), kept in `search.layout`. A deployment whose tables are of another
 * version (or that predates the record: version 1, `to_tsvector('simple')` ranked by `ts_rank`)
 * gets them dropped and recreated by `prepare`, and the indexer rebuilds them from the ledger.
 * Version 3 keys `search.term_stats` by term before namespace: a recall over a workspace's
 * thousand namespaces reads each query term's rows in one range, where version 2 scanned the table.
 * Version 4 adds to each term's row the bounds MaxScore prunes with (`search`): the highest
 * frequency of the term in a document and the shortest document holding it.
 * Version 5 adds to each document's tsvector its namespace as a term (`namespaceTerm`): a search
 * over a few namespaces finds only their documents in the term index; and `search.lexical_sentinel`.
 */
export const LEXICAL_LAYOUT_VERSION = 5;
const LAYOUT_PART = 'lexical';

/**
 * What the lexical arm reports while its tables have lost their rows (`unlogged`, below), until
 * the indexer's `prepare` has created them anew.
 */
const LEXICAL_TABLES_RESET =
  'the lexical index lost its rows (Postgres restarted after a crash, or a base backup was restored): the indexer rebuilds it';

/** The lexical arm's tables, created, dropped and made logged or unlogged together. */
const LEXICAL_TABLE_NAMES = ['documents', 'term_stats', 'namespace_stats', 'lexical_sentinel'] as const;

/** True while the lexical tables hold their rows: the sentinel's row is there (see `unlogged`). */
const SENTINEL_PRESENT = 'exists (select 1 from search.lexical_sentinel)';

/** What the lexical arm reports when its index was emptied for a rebuild after the caller read its cursor. */
const LEXICAL_INDEX_REBUILT = 'the lexical index is being rebuilt: its cursor went back since recall read it';

/** BM25's parameters: the textbook values (Robertson and Zaragoza), not fitted to any data set. */
const K1 = 1.2;
const B = 0.75;
/** Scores are rounded to this many decimals, so equal scores compare equal and fall to the tie-breaks (text digest, revision id). */
const SCORE_DECIMALS = 9;
/** How long `prepare` waits for an indexer's batch in flight on a workspace before giving up (it is retried). */
const CLAIM_WAIT_MS = 60_000;

/**
 * A namespace as a term of its documents' tsvectors. Words hold letters and digits only, so no
 * word is ever this term: a search over a few namespaces asks the term index for documents
 * holding one of them and a query word (`scored`), and gets none of the other namespaces'.
 */
const namespaceTerm = (namespaceId: string): string => `@${namespaceId}`;

/** A lexeme quoted for a tsvector or tsquery literal (its quotes and backslashes escaped). */
const quotedLexeme = (lexeme: string): string => `'${lexeme.replace(/['\\]/g, '\\$&')}'`;

/** A document's terms and its namespace's term as a tsvector literal (for matching; no positions). */
const termVector = (terms: Iterable<string>, namespaceId: string): string =>
  [...terms, namespaceTerm(namespaceId)].map(quotedLexeme).join(' ');

// The lexical arm's statements are built as text: every value is written in (see `scored`), and
// building them through Drizzle's `sql` fragments cost the gateway more than Postgres took to
// run them on a small scope.

/** A number written into the statement (typed float8), not sent as a parameter of unknown type. */
const constant = (value: number): string => {
  if (!Number.isFinite(value)) throw new Error(`not a finite number: ${value}`);
  return `${value}::float8`;
};

/** A string literal written into the statement (standard-conforming: only quotes are doubled). */
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** A text[] literal written into the statement, each element double-quoted and escaped. */
const literalArray = (values: readonly string[]): string =>
  `'{${values.map((v) => `"${v.replace(/["\\]/g, '\\$&').replaceAll("'", "''")}"`).join(',')}}'::text[]`;

/**
 * How far above the bound of the documents left out the last score kept must be for MaxScore to
 * stop: scores are rounded to SCORE_DECIMALS, and float8 sums may differ from the bound's in
 * their last bits.
 */
const BOUND_MARGIN = 1e-6;

/** A scope of more documents than this, searched for words held by less than RARE_SHARE of them, is searched by the term index alone. */
const LARGE_SCOPE = 20_000;
const RARE_SHARE = 0.02;

/** How often at most `verifyIntact` looks at unlogged lexical tables. */
const VERIFY_EVERY_MS = 1000;

/** A hybrid recall's scope of up to this many documents is scored whole, once (`lexicalScope`). */
const WHOLE_SCOPE_DOCUMENTS = 2_000;

/** Up to this many namespaces, the statistics are read by their key; over more, a term's rows at once. */
const FEW_NAMESPACES = 16;

/** What BM25 needs of the addressed namespaces: N, avgdl, and per query term (aligned) df and idf. */
interface BM25Statistics {
  n: number;
  averageLength: number;
  df: number[];
  idf: number[];
  /** Per term, the highest frequency in a document and the shortest document holding it (bounds, see `remove`). */
  maxFrequency: number[];
  minLength: number[];
}

/**
 * The most term i can add to a document's score: BM25's term score grows with the frequency and
 * falls with the length, so no document scores more on it than the highest frequency would in
 * the shortest document holding it (from different documents, perhaps: still a bound).
 */
function termBound(statistics: BM25Statistics, i: number): number {
  const idf = statistics.idf[i] as number;
  const frequency = statistics.maxFrequency[i] as number;
  if (idf === 0 || frequency === 0) return 0;
  const norm = K1 * (1 - B + (B * (statistics.minLength[i] as number)) / statistics.averageLength);
  return (idf * frequency * (K1 + 1)) / (frequency + norm);
}

/**
 * Orders documents of equal score by their text (a digest of it), before their revision ids:
 * ids are random, so without it two identical loads would order ties differently.
 */
const contentKey = (text: string): string => crypto.createHash('sha256').update(text).digest('hex').slice(0, 32);

/** A text[] literal; every element double-quoted (so that a term "null" stays a word). Terms hold letters and digits only. */
const textArray = (terms: readonly string[]): string => `{${terms.map((t) => `"${t}"`).join(',')}}`;

/** A tsquery matching any of the terms. */
const anyOf = (terms: readonly string[]): string => terms.map(quotedLexeme).join(' | ');

/** Up to this many namespaces, a search asks the term index for their documents only (`namespaceTerm`). */
const NAMESPACES_IN_QUERY = 16;

/** A document as it is written: its distinct terms with their frequencies (aligned), its length and text digest. */
interface AnalysedRow {
  document: SearchDocument;
  terms: string[];
  frequencies: number[];
  length: number;
  key: string;
}

function analysedRow(document: SearchDocument): AnalysedRow {
  const { termFrequencies, length } = analyseDocument(document.text);
  return {
    document,
    terms: [...termFrequencies.keys()],
    frequencies: [...termFrequencies.values()],
    length,
    key: contentKey(document.text),
  };
}

/** Documents analysed between two turns of the event loop (an embedded indexer shares it with the gateway's requests). */
const ANALYSIS_SLICE = 250;

async function analysedRows(documents: readonly SearchDocument[]): Promise<AnalysedRow[]> {
  const rows: AnalysedRow[] = [];
  for (let i = 0; i < documents.length; i += ANALYSIS_SLICE) {
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    for (const document of documents.slice(i, i + ANALYSIS_SLICE)) rows.push(analysedRow(document));
  }
  return rows;
}

/** What a batch adds to the statistics: per namespace documents and length, per namespace and term documents. */
class StatisticsDelta {
  private readonly namespaces = new Map<
    string,
    { workspace_id: string; namespace_id: string; documents: number; total_length: number }
  >();
  private readonly terms = new Map<
    string,
    {
      workspace_id: string;
      namespace_id: string;
      term: string;
      documents: number;
      max_frequency: number;
      min_length: number;
    }
  >();

  add({ document, terms, frequencies, length }: AnalysedRow): void {
    const scope = `${document.workspaceId}\u001f${document.namespaceId}`;
    const namespace = this.namespaces.get(scope) ?? {
      workspace_id: document.workspaceId,
      namespace_id: document.namespaceId,
      documents: 0,
      total_length: 0,
    };
    namespace.documents += 1;
    namespace.total_length += length;
    this.namespaces.set(scope, namespace);
    for (const [i, term] of terms.entries()) {
      const key = `${document.workspaceId}\u001f${term}\u001f${document.namespaceId}`;
      const frequency = frequencies[i] as number;
      const row = this.terms.get(key);
      if (row) {
        row.documents += 1;
        row.max_frequency = Math.max(row.max_frequency, frequency);
        row.min_length = Math.min(row.min_length, length);
      } else
        this.terms.set(key, {
          workspace_id: document.workspaceId,
          namespace_id: document.namespaceId,
          term,
          documents: 1,
          max_frequency: frequency,
          min_length: length,
        });
    }
  }

  namespaceRows() {
    return [...this.namespaces.values()];
  }

  termRows() {
    return [...this.terms.values()];
  }
}

/**
 * Embedded full-text search ranked by Okapi BM25, in its own schema (`search`) beside the
 * ledger. Only the indexer writes it; it keeps no text, only each revision's terms (of
 * text-analysis.ts: a GIN-indexed tsvector to find the documents holding a query term, and
 * aligned arrays of terms and frequencies to score them), its length, and the statistics BM25 needs, kept current as batches are applied: per namespace and term the number
 * of documents holding it, per namespace the number of documents and their total length. A
 * revision's text never changes, so its terms are counted once when it is first indexed and
 * uncounted when it is deleted (purged); applying it again only updates its temporal columns.
 * Scores are computed in SQL with IDF over the namespaces the query addresses; every filter
 * (workspace, namespaces, kinds, as_of, known_at) is applied inside the query.
 */
export class PostgresSearchProvider implements SearchProvider {
  readonly name = 'postgres' as const;

  /** The semantic arm (./postgres-vectors.ts): vectors beside the lexical documents. */
  readonly vectors: PostgresVectorStore;
  /** When `verifyIntact` last found the lexical tables whole (ms since the epoch). */
  private verifiedAt = 0;

  constructor(
    private readonly db: Database,
    vectorOptions: VectorStoreOptions = {},
    private readonly lexicalOptions: {
      /** See `lexicalScope` (default 2000). */
      wholeScopeDocuments?: number;
      /**
       * The lexical tables unlogged (the factory's default on a Postgres server, `LEXICAL_TABLES`;
       * never on PGlite). They hold nothing the ledger does not: written without the WAL, a batch's
       * statistics no longer copy into it every page they change first after a checkpoint, and
       * the indexer keeps up with a sixth more at a million memories. Postgres empties unlogged
       * tables after a crash, and a base backup or a standby holds them empty; the sentinel's row
       * goes with them, recall then reports the lexical arm unavailable, and the indexer's next
       * pass (`verifyIntact`) fails until `prepare` has created the tables anew and sent the
       * cursors back to 0.
       */
      unlogged?: boolean;
    } = {},
  ) {
    this.vectors = new PostgresVectorStore(db, vectorOptions);
  }

  async prepare(): Promise<void> {
    // Processes starting together would race on `create ... if not exists` (a duplicate-key
    // error in the catalog), or upgrade twice: one lock for the whole preparation, released at commit.
    await this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended('tms-search-prepare', 0))`);
      await tx.execute(sql`create schema if not exists search`);
      await tx.execute(sql`
        create table if not exists search.layout (part text primary key, version integer not null)`);
      const recorded = rowsOf<{ version: number }>(
        await tx.execute(sql`select version from search.layout where part = ${LAYOUT_PART}`),
      )[0]?.version;
      if (recorded !== LEXICAL_LAYOUT_VERSION || !(await intact(tx as never))) {
        await this.rebuildLexicalTables(tx as never);
      } else await this.setPersistence(tx as never);
      await this.vectors.prepare(tx);
    });
  }

  /**
   * Throws `SearchUnavailableError` while the lexical tables have lost their rows (see
   * `unlogged`). The indexer asks before each pass; unlogged tables are looked at once a second
   * at most (a pass may follow every commit), logged ones never lose their rows.
   */
  async verifyIntact(): Promise<void> {
    if (!this.lexicalOptions.unlogged || Date.now() - this.verifiedAt < VERIFY_EVERY_MS) return;
    if (!(await intact(this.db))) throw new SearchUnavailableError(LEXICAL_TABLES_RESET);
    this.verifiedAt = Date.now();
  }

  /**
   * Tables created logged and now wanted unlogged, or the reverse (`LEXICAL_TABLES` changed):
   * rewritten so, rows kept. Processes that disagree would rewrite them at each other's start.
   */
  private async setPersistence(tx: Database): Promise<void> {
    const wanted = this.lexicalOptions.unlogged ? 'u' : 'p';
    const differing = rowsOf<{ name: string }>(
      await tx.execute(sql`
        select c.relname as name from pg_class c
         where c.relnamespace = 'search'::regnamespace and c.relkind = 'r' and c.relpersistence <> ${wanted}
           and c.relname = any(${sql.raw(literalArray(LEXICAL_TABLE_NAMES))})`),
    ).map((r) => r.name);
    for (const name of differing) {
      await tx.execute(sql.raw(`alter table search.${name} set ${wanted === 'u' ? 'unlogged' : 'logged'}`));
    }
  }

  /**
   * An older (or unrecorded) layout: wait for every indexer store in flight to end (a batch
   * writes its documents and advances its cursor in one transaction holding the workspace's
   * claim), rebuild the tables empty, and send this provider's lexical cursors back to 0 while
   * the claims are held. A batch planned before and stored after finds its cursor moved (or, from
   * 0, writes into the new tables), so no cursor passes documents the new tables lack.
   */
  private async rebuildLexicalTables(tx: Database): Promise<void> {
    const stores = new Stores(tx as never);
    const ledgerMigrated = rowsOf<{ present: boolean }>(
      await tx.execute(sql`select to_regclass('index_state') is not null as present`),
    )[0]?.present;
    const workspaces = ledgerMigrated ? await stores.indexState.lag(this.name, false) : [];
    for (const { workspaceId } of workspaces) await claimWaiting(stores, workspaceId);
    await tx.execute(sql.raw(`drop table if exists ${LEXICAL_TABLE_NAMES.map((t) => `search.${t}`).join(', ')}`));
    const table = sql.raw(this.lexicalOptions.unlogged ? 'unlogged table' : 'table');
    await tx.execute(sql`
        create ${table} search.documents (
          workspace_id text not null,
          revision_id text not null,
          memory_id text not null,
          namespace_id text not null,
          kind text not null,
          tsv tsvector not null,
          terms text[] not null,
          frequencies integer[] not null,
          length integer not null,
          content_key text not null,
          valid_from double precision not null,
          valid_to double precision,
          recorded_at double precision not null,
          recorded_until double precision,
          primary key (workspace_id, revision_id)
        )`);
    await tx.execute(sql`create index documents_tsv on search.documents using gin (tsv)`);
    await tx.execute(sql`create index documents_namespace on search.documents (workspace_id, namespace_id)`);
    // Its counts are updated in place with every batch: room left on each page lets Postgres
    // update a row without touching the primary key index (a heap-only tuple update).
    await tx.execute(sql`
        create ${table} search.term_stats (
          workspace_id text not null,
          namespace_id text not null,
          term text not null,
          documents integer not null,
          max_frequency integer not null,
          min_length integer not null,
          primary key (workspace_id, term, namespace_id)
        ) with (fillfactor = 70)`);
    await tx.execute(sql`
        create ${table} search.namespace_stats (
          workspace_id text not null,
          namespace_id text not null,
          documents integer not null,
          total_length bigint not null,
          primary key (workspace_id, namespace_id)
        )`);
    // Emptied with the others when Postgres resets unlogged tables: its row missing tells.
    await tx.execute(sql`create ${table} search.lexical_sentinel (intact boolean primary key)`);
    await tx.execute(sql`insert into search.lexical_sentinel values (true)`);
    const now = Date.now() / 1000;
    for (const { workspaceId } of workspaces) await stores.indexState.reset(workspaceId, this.name, now);
    await tx.execute(sql`
        insert into search.layout (part, version) values (${LAYOUT_PART}, ${LEXICAL_LAYOUT_VERSION})
        on conflict (part) do update set version = excluded.version`);
  }

  /**
   * The analysis (words, stems, text digests) runs first, outside any transaction; the writes
   * then go into one transaction: the fence's, which also checks and advances the indexer's
   * cursor (these tables live in the ledger's database), or a transaction of their own.
   */
  async apply(workspaceId: string, batch: DocumentBatch, fence?: CursorFence): Promise<boolean> {
    const rows = await analysedRows(batch.upserts);
    const write = (db: Database) => this.write(db, workspaceId, batch.deletes, rows);
    if (fence) return fence.store(write, 'advance');
    await this.db.transaction((tx) => write(tx as never));
    return true;
  }

  private async write(
    tx: Database,
    workspaceId: string,
    deletes: readonly string[],
    documents: readonly AnalysedRow[],
  ): Promise<void> {
    if (deletes.length) await this.remove(tx, workspaceId, deletes);
    const counts = new StatisticsDelta();
    // 200 rows a statement keeps the parameter count far below Postgres' limit.
    for (let i = 0; i < documents.length; i += 200) {
      const chunk = documents.slice(i, i + 200);
      const rows = sql.join(
        chunk.map(
          ({ document: d, terms, frequencies, length, key }) => sql`(${d.workspaceId}, ${d.revisionId}, ${d.memoryId},
            ${d.namespaceId}, ${d.kind}, ${termVector(terms, d.namespaceId)}::tsvector, ${textArray(terms)}::text[],
            ${`{${frequencies.join(',')}}`}::integer[], ${length}::integer, ${key}, ${d.validFrom}::float8,
            ${d.validTo}::float8, ${d.recordedAt}::float8, ${d.recordedUntil}::float8)`,
        ),
        sql`, `,
      );
      const inserted = new Set(
        rowsOf<{ revision_id: string }>(
          await tx.execute(sql`
            insert into search.documents
              (workspace_id, revision_id, memory_id, namespace_id, kind, tsv, terms, frequencies, length, content_key,
               valid_from, valid_to, recorded_at, recorded_until)
            values ${rows}
            on conflict (workspace_id, revision_id) do nothing
            returning revision_id`),
        ).map((r) => r.revision_id),
      );
      // New revisions are counted into the statistics; those already indexed keep their
      // terms (a revision's text never changes) and only their temporal columns are updated.
      for (const entry of chunk) if (inserted.has(entry.document.revisionId)) counts.add(entry);
      const known = chunk.filter((entry) => !inserted.has(entry.document.revisionId));
      if (known.length) {
        const temporal = sql.join(
          known.map(
            ({ document: d }) => sql`(${d.workspaceId}, ${d.revisionId}, ${d.validFrom}::float8, ${d.validTo}::float8,
              ${d.recordedAt}::float8, ${d.recordedUntil}::float8)`,
          ),
          sql`, `,
        );
        await tx.execute(sql`
          update search.documents d
             set valid_from = v.valid_from, valid_to = v.valid_to,
                 recorded_at = v.recorded_at, recorded_until = v.recorded_until
            from (values ${temporal}) as v(workspace_id, revision_id, valid_from, valid_to, recorded_at, recorded_until)
           where d.workspace_id = v.workspace_id and d.revision_id = v.revision_id`);
      }
    }
    // The batch's statistics in one statement each (a term shared by many documents is updated
    // once), as JSON: one parameter whatever the number of rows; `json`, which Postgres reads in
    // half the time `jsonb` takes to build. The rows go in key order: each index page is visited
    // once for all its rows of the batch.
    const namespaces = counts.namespaceRows();
    if (namespaces.length) {
      await tx.execute(sql`
        insert into search.namespace_stats as s (workspace_id, namespace_id, documents, total_length)
        select * from json_to_recordset(${JSON.stringify(namespaces)}::json)
          as r(workspace_id text, namespace_id text, documents integer, total_length bigint)
        on conflict (workspace_id, namespace_id) do update
          set documents = s.documents + excluded.documents, total_length = s.total_length + excluded.total_length`);
    }
    const terms = counts.termRows();
    if (terms.length) {
      await tx.execute(sql`
        insert into search.term_stats as s (workspace_id, namespace_id, term, documents, max_frequency, min_length)
        select * from json_to_recordset(${JSON.stringify(terms)}::json)
          as r(workspace_id text, namespace_id text, term text, documents integer, max_frequency integer, min_length integer)
        order by workspace_id, term, namespace_id
        on conflict (workspace_id, term, namespace_id) do update
          set documents = s.documents + excluded.documents,
              max_frequency = greatest(s.max_frequency, excluded.max_frequency),
              min_length = least(s.min_length, excluded.min_length)`);
    }
  }

  /** Delete documents and uncount their terms; a term no document holds any more leaves no row behind. */
  // A term's frequency and length bounds are left as they were: bounds of the documents left,
  // looser than need be until the row goes (no document holding the term) and comes back anew.
  private async remove(tx: Database, workspaceId: string, revisionIds: readonly string[]): Promise<void> {
    const emptied = await tx.execute(sql`
      with gone as (
        delete from search.documents
         where workspace_id = ${workspaceId} and revision_id in (${list(revisionIds)})
        returning namespace_id, terms, length
      ), uncounted as (
        update search.namespace_stats s
           set documents = s.documents - g.documents, total_length = s.total_length - g.total_length
          from (select namespace_id, count(*) as documents, sum(length) as total_length
                  from gone group by namespace_id) g
         where s.workspace_id = ${workspaceId} and s.namespace_id = g.namespace_id
      )
      update search.term_stats s
         set documents = s.documents - g.documents
        from (select g.namespace_id, u.term, count(*) as documents
                from gone g, unnest(g.terms) as u(term)
               group by g.namespace_id, u.term) g
       where s.workspace_id = ${workspaceId} and s.term = g.term and s.namespace_id = g.namespace_id
      returning s.namespace_id, s.term, s.documents`);
    const zero = rowsOf<{ namespace_id: string; term: string; documents: number }>(emptied).filter(
      (r) => Number(r.documents) <= 0,
    );
    for (let i = 0; i < zero.length; i += 500) {
      const keys = sql.join(
        zero.slice(i, i + 500).map((r) => sql`(${r.term}, ${r.namespace_id})`),
        sql`, `,
      );
      await tx.execute(sql`
        delete from search.term_stats
         where workspace_id = ${workspaceId} and (term, namespace_id) in (${keys}) and documents <= 0`);
    }
    await tx.execute(sql`delete from search.namespace_stats where workspace_id = ${workspaceId} and documents <= 0`);
  }

  /**
   * BM25: idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)) with N and df summed over the addressed
   * namespaces; each matching document scores
   * sum over its query terms of idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avgdl)).
   *
   * The statistics are read first (`statistics`), then the documents are scored with them
   * (`scored`). A query holding common terms would score every document that holds one (a name
   * in a third of a namespace: tens of thousands of rows at 100,000), so it is pruned as
   * MaxScore does (Turtle and Flood, 1995), with the same answer: a term contributes to any
   * score at most its bound (`termBound`: its highest frequency in the shortest document holding
   * it), so the documents holding only the commonest terms score at most the sum of their bounds. The rarest terms are searched first, each document found scored on
   * every query term; when the last of the `offset + limit` best found scores above that sum,
   * no document left out can rank among them, ties included, and their order is the answer.
   * Otherwise every document holding any term is scored.
   */
  async search(query: SearchQuery): Promise<SearchHit[]> {
    const terms = analyseQuery(query.text);
    if (terms.length === 0 || query.namespaceIds.length === 0) return [];
    if (query.revisionIds?.length === 0) return [];
    const statistics = await this.statistics(query, terms);
    // No statistics: the namespaces hold no documents.
    if (statistics === null) return [];
    return this.searchWith(query, terms, statistics);
  }

  /**
   * A scope of up to `wholeScopeDocuments` (2,000) documents is scored whole at the first page asked:
   * every document holding a query term, in `search`'s order, so that the later pages and the
   * scores of the semantic arm's candidates are read from that one answer, not asked in two
   * statements each (the statistics, the scores). A larger scope is searched a page at a time
   * (`search`, pruned), its statistics read once.
   */
  lexicalScope(scope: LexicalScope): ScopedLexicalSearch {
    let whole: Promise<{ hits: SearchHit[] | null; terms: string[]; statistics: BM25Statistics | null }> | null = null;
    return {
      search: async (page) => {
        whole ??= this.scoredWhole(scope);
        const { hits, terms, statistics } = await whole;
        if (terms.length === 0 || statistics === null || page.revisionIds?.length === 0) return [];
        if (hits === null) return this.searchWith({ ...scope, ...page }, terms, statistics);
        const given = page.revisionIds && new Set(page.revisionIds);
        const chosen = given ? hits.filter((hit) => given.has(hit.revisionId)) : hits;
        return chosen.slice(page.offset, page.offset + page.limit);
      },
    };
  }

  private async scoredWhole(scope: LexicalScope) {
    const terms = analyseQuery(scope.text);
    if (terms.length === 0 || scope.namespaceIds.length === 0) return { hits: [], terms, statistics: null };
    const statistics = await this.statistics(scope, terms);
    const most = this.lexicalOptions.wholeScopeDocuments ?? WHOLE_SCOPE_DOCUMENTS;
    const small = statistics !== null && statistics.n <= most;
    const hits = small ? await this.scored(scope, terms, statistics, terms, null, 0) : null;
    return { hits, terms, statistics };
  }

  private async searchWith(query: SearchQuery, terms: string[], statistics: BM25Statistics): Promise<SearchHit[]> {
    const wanted = query.offset + query.limit;
    if (!query.revisionIds && terms.length > 1 && wanted > 0) {
      const byRarity = terms
        .map((term, i) => ({
          term,
          df: statistics.df[i] as number,
          idf: statistics.idf[i] as number,
          bound: termBound(statistics, i),
        }))
        .sort((a, b) => a.df - b.df);
      // The first pass searches the rarest terms, as few as will do: held by `wanted` documents
      // at least (a document counted once per term), and with the other terms' bounds summing
      // below what a document holding each rare term once, of average length, scores (the sum of
      // their idfs). Past that the pass is unlikely to stop early (two words about as rare), and
      // every document is scored at once.
      for (let rare = 1; rare < byRarity.length; rare += 1) {
        const first = byRarity.slice(0, rare);
        const held = first.reduce((sum, t) => sum + t.df, 0);
        const typical = first.reduce((sum, t) => sum + t.idf, 0);
        const bound = byRarity.slice(rare).reduce((sum, t) => sum + t.bound, 0);
        if (held < wanted || bound >= typical) continue;
        const found = await this.scored(
          query,
          terms,
          statistics,
          first.map((t) => t.term),
          wanted,
          0,
        );
        const last = found[wanted - 1];
        if (last && last.score > bound + BOUND_MARGIN) return found.slice(query.offset);
        break;
      }
    }
    return this.scored(query, terms, statistics, terms, query.limit, query.offset);
  }

  /**
   * N, avgdl and each term's df and idf over the addressed namespaces, computed by Postgres (and
   * written back into `scored`'s statement as the same float8 values: a float8 reads back exactly).
   */
  private async statistics(query: LexicalScope, terms: readonly string[]): Promise<BM25Statistics | null> {
    const namespaces = literalArray(query.namespaceIds);
    const workspace = literal(query.workspaceId);
    const ofTerms = `select namespace_id, term, documents, max_frequency, min_length from search.term_stats
       where workspace_id = ${workspace} and term = any(${literalArray(terms)})`;
    // Over many namespaces, each term's rows are read in one range of the key (term before
    // namespace) and the scope's kept: asked for both lists at once, Postgres would plan a probe
    // per term and namespace, or, costing that, scan the table.
    const termRows =
      query.namespaceIds.length > FEW_NAMESPACES
        ? `, term_rows as materialized (${ofTerms})`
        : `, term_rows as (${ofTerms} and namespace_id = any(${namespaces}))`;
    const rows = rowsOf<{
      intact: boolean;
      cursor: string | number | null;
      n: number | null;
      average_length: number;
      term: string | null;
      df: number;
      idf: number;
      max_frequency: number;
      min_length: number;
    }>(
      await this.db.execute(
        sql.raw(`
        with scope as materialized (
          select sum(documents)::float8 as n,
                 sum(total_length)::float8 / greatest(sum(documents), 1) as average_length
            from search.namespace_stats
           where workspace_id = ${workspace} and namespace_id = any(${namespaces})
        )
        ${termRows}
        select ${SENTINEL_PRESENT} as intact,
               (select indexed_sequence from index_state
                 where workspace_id = ${workspace} and provider = ${literal(this.name)}) as cursor,
               scope.n, scope.average_length, t.term, t.df, ln(1 + (scope.n - t.df + 0.5) / (t.df + 0.5)) as idf,
               t.max_frequency, t.min_length
          from scope
          left join (select term, sum(documents)::float8 as df, max(max_frequency) as max_frequency,
                            min(min_length) as min_length
                       from term_rows
                      where namespace_id = any(${namespaces})
                      group by term) t on true`),
      ),
    );
    const first = rows[0];
    if (first && !first.intact) throw new SearchUnavailableError(LEXICAL_TABLES_RESET);
    // The tables and the cursor as of one snapshot: a cursor below the caller's was reset with them.
    if (first && query.indexedSequence !== undefined && Number(first.cursor ?? 0) < query.indexedSequence) {
      throw new SearchUnavailableError(LEXICAL_INDEX_REBUILT);
    }
    if (!first || first.n === null) return null;
    const byTerm = new Map(rows.filter((r) => r.term !== null).map((r) => [r.term as string, r]));
    return {
      n: Number(first.n),
      averageLength: Number(first.average_length),
      df: terms.map((t) => Number(byTerm.get(t)?.df ?? 0)),
      idf: terms.map((t) => Number(byTerm.get(t)?.idf ?? 0)),
      maxFrequency: terms.map((t) => Number(byTerm.get(t)?.max_frequency ?? 0)),
      minLength: terms.map((t) => Number(byTerm.get(t)?.min_length ?? 0)),
    };
  }

  /**
   * The documents holding any of `matching` (of the query's `terms`), scored on every query term,
   * best first. Values are written into the statement, not sent as parameters: a prepared
   * statement's generic plan would serve a namespace of a thousand documents and one of a
   * hundred thousand alike, where each needs its own (the namespace's rows, or the term index).
   */
  private async scored(
    query: LexicalScope & Pick<SearchQuery, 'revisionIds'>,
    terms: readonly string[],
    statistics: BM25Statistics,
    matching: readonly string[],
    /** Null: every document found. */
    limit: number | null,
    offset: number,
  ): Promise<SearchHit[]> {
    const kinds = query.kinds?.length ? `and m.kind = any(${literalArray(query.kinds)})` : '';
    // A few namespaces are asked of the term index with the words (a document of theirs holding
    // a word), which then returns none of the other namespaces' documents: in a workspace of a
    // million, nine in ten of the documents holding a word lie outside a namespace of 100,000.
    const namespacesInQuery = query.namespaceIds.length <= NAMESPACES_IN_QUERY;
    const matches = namespacesInQuery
      ? `(${anyOf(query.namespaceIds.map(namespaceTerm))}) & (${anyOf(matching)})`
      : anyOf(matching);
    // Documents so found, and over more namespaces those of words held by few of many documents
    // in scope, are each checked for their namespace: Postgres would otherwise also read the
    // namespace index for every document of the scope (100,000 entries, 50 ms) to intersect
    // the two. The expression hides that index from it.
    const held = matching.reduce((sum, term) => sum + (statistics.df[terms.indexOf(term)] ?? 0), 0);
    const rareInScope = statistics.n > LARGE_SCOPE && held < statistics.n * RARE_SHARE;
    const namespaceColumn = namespacesInQuery || rareInScope ? `(m.namespace_id || '')` : 'm.namespace_id';
    const only = query.revisionIds ? `and m.revision_id = any(${literalArray(query.revisionIds)})` : '';
    // Each query term's frequency is read from the document's aligned term and frequency arrays
    // (array_position): no unnesting, no grouping per document.
    const frequencies = terms
      .map((term, i) => `coalesce(m.frequencies[array_position(m.terms, ${literal(term)}::text)], 0) as f${i}`)
      .join(', ');
    const norm = `${constant(K1)} * (${constant(1 - B)} + ${constant(B)} * m.length / ${constant(statistics.averageLength)})`;
    const score = terms
      .map((_, i) => `${constant(statistics.idf[i] as number)} * f.f${i} * ${constant(K1 + 1)} / (f.f${i} + ${norm})`)
      .join(' + ');
    const result = await this.db.execute(
      sql.raw(`
      select json_agg(json_build_array(revision_id, memory_id, score)
                      order by score desc, content_key collate "C", revision_id collate "C") as packed from (
      select m.revision_id, m.memory_id, m.content_key,
             round((${score})::numeric, ${SCORE_DECIMALS}) as score
        from search.documents m
        cross join lateral (select ${frequencies}) as f
       where m.workspace_id = ${literal(query.workspaceId)}
         and ${namespaceColumn} = any(${literalArray(query.namespaceIds)})
         ${kinds} ${only}
         and m.tsv @@ ${literal(matches)}::tsquery
         and m.recorded_at <= ${constant(query.knownAt)}
         and (m.recorded_until is null or m.recorded_until > ${constant(query.knownAt)})
         and m.valid_from <= ${constant(query.asOf)} and (m.valid_to is null or m.valid_to > ${constant(query.asOf)})
       order by score desc, m.content_key collate "C", m.revision_id collate "C"
       limit ${limit === null ? 'all' : Math.trunc(limit)} offset ${Math.trunc(offset)}) found`),
    );
    return packedRows<[string, string, number]>(result).map(([revisionId, memoryId, score]) => ({
      revisionId,
      memoryId,
      score: Number(score),
    }));
  }

  searchSemantic(query: SemanticQuery): Promise<SearchHit[]> {
    return this.vectors.search(query);
  }

  semanticScope(scope: SemanticScope): ScopedSemanticSearch {
    return this.vectors.scope(scope);
  }

  applyVectors(workspaceId: string, batch: VectorBatch, fence?: CursorFence): Promise<boolean> {
    return this.vectors.apply(workspaceId, batch, fence);
  }

  fillVectorStore(): Promise<number> {
    return this.vectors.fill();
  }

  vectorRevisionIds(workspaceId: string, model: string, revisionIds?: readonly string[]): Promise<string[]> {
    return this.vectors.revisionIds(workspaceId, model, revisionIds);
  }

  clearVectors(workspaceId: string, options: { keepModel?: string } = {}): Promise<void> {
    return this.vectors.clear(workspaceId, options.keepModel);
  }

  async clear(workspaceId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.execute(sql`delete from search.documents where workspace_id = ${workspaceId}`);
      await tx.execute(sql`delete from search.term_stats where workspace_id = ${workspaceId}`);
      await tx.execute(sql`delete from search.namespace_stats where workspace_id = ${workspaceId}`);
    });
  }

  async indexedRevisionIds(workspaceId: string): Promise<string[]> {
    const result = await this.db.execute(
      sql`select revision_id from search.documents where workspace_id = ${workspaceId} order by revision_id`,
    );
    return rowsOf<{ revision_id: string }>(result).map((r) => r.revision_id);
  }

  /** The BM25 statistics of a namespace (tests and diagnostics): documents, total length, and per term its document count. */
  async termStatistics(
    workspaceId: string,
    namespaceId: string,
  ): Promise<{ documents: number; totalLength: number; terms: Map<string, number> }> {
    const totals = rowsOf<{ documents: number; total_length: number | string }>(
      await this.db.execute(sql`
        select documents, total_length from search.namespace_stats
         where workspace_id = ${workspaceId} and namespace_id = ${namespaceId}`),
    )[0];
    const terms = rowsOf<{ term: string; documents: number }>(
      await this.db.execute(sql`
        select term, documents from search.term_stats
         where workspace_id = ${workspaceId} and namespace_id = ${namespaceId} order by term`),
    );
    return {
      documents: Number(totals?.documents ?? 0),
      totalLength: Number(totals?.total_length ?? 0),
      terms: new Map(terms.map((r) => [r.term, Number(r.documents)])),
    };
  }
}

/** Whether the lexical tables hold their rows: the sentinel's row is there. */
async function intact(db: Database): Promise<boolean> {
  const result = await db.execute(sql.raw(`select ${SENTINEL_PRESENT} as intact`));
  return rowsOf<{ intact: boolean }>(result)[0]?.intact === true;
}

/** Take a workspace's indexer claim for the current transaction, waiting while a batch holds it. */
async function claimWaiting(stores: Stores, workspaceId: string): Promise<void> {
  const deadline = Date.now() + CLAIM_WAIT_MS;
  while (!(await stores.indexState.tryClaim(workspaceId))) {
    if (Date.now() > deadline) {
      throw new SearchUnavailableError(`an indexer batch on ${workspaceId} did not end within ${CLAIM_WAIT_MS} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
