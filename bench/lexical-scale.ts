/**
 * The lexical arm's query latency at scale, on Postgres: N synthetic documents (bench/corpus.ts)
 * applied straight to the search provider (the write path is not measured here; see
 * recall-bench.ts), then the same queries through
 * - the provider's BM25 (documents found by their GIN-indexed tsvector, each query term's
 *   frequency read from the document's aligned term and frequency arrays): what recall runs,
 * - BM25 over a postings table (term, revision, tf) built from the same arrays: the layout the
 *   provider could have used instead,
 * - the former ranking (`ts_rank` over the vectors), for scale.
 * Prints p50/p95 per variant. Usage: pnpm --filter @tms/bench lexical-scale [N] (default 100000).
 */
import { Ledger } from '@tms/ledger';
import { PostgresSearchProvider, type SearchDocument } from '@tms/search';
import { createTestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { queryWithin, textFor } from './corpus';

const N = Number(process.argv[2] ?? 100_000);
const QUERIES = 200;
const WS = 'ws_scale';
const NS = 'ns_scale';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;

async function main() {
  const database = await createTestDatabase('tms_bench_lexical');
  // Building the postings table and vacuuming take longer than a request may.
  const ledger = await Ledger.open({ databaseUrl: database.url, statementTimeoutMs: 600_000 });
  try {
    await ledger.migrate();
    const provider = new PostgresSearchProvider(ledger.handle.db);
    await provider.prepare();
    const started = performance.now();
    for (let i = 0; i < N; i += 1000) {
      const upserts: SearchDocument[] = [];
      for (let k = i; k < Math.min(N, i + 1000); k += 1) {
        upserts.push({
          workspaceId: WS,
          revisionId: `rev_${String(k).padStart(8, '0')}`,
          memoryId: `mem_${k}`,
          namespaceId: NS,
          kind: 'claim',
          text: textFor(k),
          validFrom: 0,
          validTo: null,
          recordedAt: 1,
          recordedUntil: null,
        });
      }
      await provider.apply(WS, { upserts, deletes: [] });
    }
    const applySeconds = (performance.now() - started) / 1000;
    process.stderr.write(`applied ${N} documents in ${applySeconds.toFixed(1)} s\n`);
    const db = ledger.handle.db;
    await db.execute(sql`create table search.postings as
      select d.workspace_id, d.namespace_id, u.term, d.revision_id, u.tf
        from search.documents d, unnest(d.terms, d.frequencies) as u(term, tf)`);
    await db.execute(sql`alter table search.postings add primary key (workspace_id, namespace_id, term, revision_id)`);
    await db.execute(sql`vacuum analyze`);

    const now = 1e10;
    const variants: Record<string, (query: string) => Promise<unknown>> = {
      'bm25, term arrays (provider)': (text) =>
        provider.search({ workspaceId: WS, text, namespaceIds: [NS], asOf: now, knownAt: now, limit: 40, offset: 0 }),
      'bm25, postings table': (text) => {
        const terms = text.split(' ');
        return db.execute(sql`
          with scope as materialized (
            select sum(documents)::float8 as n, sum(total_length)::float8 / greatest(sum(documents), 1) as avgdl
              from search.namespace_stats where workspace_id = ${WS} and namespace_id in (${NS})
          ), weights as materialized (
            select t.term, ln(1 + (scope.n - t.df + 0.5) / (t.df + 0.5)) as idf
              from (select term, sum(documents)::float8 as df from search.term_stats
                     where workspace_id = ${WS} and namespace_id in (${NS})
                       and term in (${sql.join(
                         terms.map((t) => sql`${t}`),
                         sql`, `,
                       )})
                     group by term) t, scope
          )
          select d.revision_id, d.memory_id,
                 sum(w.idf * p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * d.length / scope.avgdl))) as score
            from weights w
            join search.postings p on p.workspace_id = ${WS} and p.namespace_id in (${NS}) and p.term = w.term
            join search.documents d on d.workspace_id = p.workspace_id and d.revision_id = p.revision_id
            cross join scope
           where d.recorded_at <= ${now} and (d.recorded_until is null or d.recorded_until > ${now})
             and d.valid_from <= ${now} and (d.valid_to is null or d.valid_to > ${now})
           group by d.revision_id, d.memory_id
           order by score desc, d.revision_id collate "C"
           limit 40`);
      },
      'former ts_rank': (text) =>
        db.execute(sql`
          select revision_id, memory_id, ts_rank(tsv, q) as score
            from search.documents, to_tsquery('simple', ${text.split(' ').join(' | ')}) q
           where workspace_id = ${WS} and namespace_id in (${NS}) and tsv @@ q
             and recorded_at <= ${now} and (recorded_until is null or recorded_until > ${now})
             and valid_from <= ${now} and (valid_to is null or valid_to > ${now})
           order by score desc, revision_id
           limit 40`),
    };
    const lines = [`documents: ${N}, applied in ${applySeconds.toFixed(1)} s (${(N / applySeconds).toFixed(0)}/s)`];
    for (let round = 0; round < 2; round += 1) {
      for (const [name, run] of Object.entries(variants)) {
        const times: number[] = [];
        for (let q = 0; q < QUERIES; q += 1) {
          const start = performance.now();
          await run(queryWithin(q, N));
          times.push(performance.now() - start);
        }
        times.sort((a, b) => a - b);
        if (round === 1) {
          lines.push(
            `${name}: p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms over ${QUERIES} queries`,
          );
        }
      }
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await ledger.close();
    await database.drop();
  }
}

await main();
