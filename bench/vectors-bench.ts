/**
 * The semantic arm's vector search on the Postgres provider, per store and size: the exact
 * store (sign-bit scan + exact rescore, what a Postgres without pgvector runs) on the server
 * Postgres and on PGlite, and pgvector's HNSW index on PGlite. Vectors are random unit vectors
 * of 512 dimensions (the builtin model's size), 500 per namespace; each query asks the top 10
 * of one namespace (the dev split's scope) and of every namespace (the whole workspace).
 * Prints median and p95 latency per query, and recall@10 against a brute-force scan in JS.
 *
 * Usage: pnpm --filter @tms/bench vectors [sizes] [stores]
 *   sizes: comma-separated document counts (default 500,10000,100000)
 *   stores: comma-separated of pg-exact, pglite-exact, pglite-hnsw (default all three)
 */
import os from 'node:os';
import { Ledger } from '@tms/ledger';
import { PostgresSearchProvider, type SemanticQuery, type VectorDocument } from '@tms/search';
import { createTestDatabase, type TestDatabase } from '@tms/testkit';

const SIZES = (process.argv[2] ?? '500,10000,100000').split(',').map(Number);
const STORES = (process.argv[3] ?? 'pg-exact,pglite-exact,pglite-hnsw').split(',');
const DIMENSIONS = 512;
const PER_NAMESPACE = 500;
const QUERIES = 30;
const MODEL = 'bench:random@512';

function randomUnit(seed: number): Float32Array {
  let state = seed >>> 0 || 1;
  const v = new Float32Array(DIMENSIONS);
  let norm = 0;
  for (let i = 0; i < DIMENSIONS; i++) {
    // xorshift32, then a rough normal from the sum of three uniforms
    let sum = 0;
    for (let k = 0; k < 3; k++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      sum += (state >>> 0) / 2 ** 32 - 0.5;
    }
    v[i] = sum;
    norm += sum * sum;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < DIMENSIONS; i++) v[i] = (v[i] as number) * scale;
  return v;
}

function documents(count: number): VectorDocument[] {
  return Array.from({ length: count }, (_, i) => ({
    workspaceId: 'ws_bench',
    revisionId: `rev_${String(i).padStart(7, '0')}`,
    memoryId: `mem_${i}`,
    namespaceId: `ns_${Math.floor(i / PER_NAMESPACE)}`,
    kind: 'claim',
    validFrom: 0,
    validTo: null,
    recordedAt: 100,
    recordedUntil: null,
    vector: randomUnit(i + 1),
  }));
}

function bruteForce(docs: VectorDocument[], query: SemanticQuery): string[] {
  const scope = new Set(query.namespaceIds);
  return docs
    .filter((d) => scope.has(d.namespaceId))
    .map((d) => {
      let dot = 0;
      for (let i = 0; i < DIMENSIONS; i++) dot += (d.vector[i] as number) * (query.vector[i] as number);
      return { id: d.revisionId, dot };
    })
    .sort((a, b) => b.dot - a.dot || a.id.localeCompare(b.id))
    .slice(0, query.limit)
    .map((r) => r.id);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;

async function open(store: string): Promise<{ ledger: Ledger; database: TestDatabase | null }> {
  if (store === 'pg-exact') {
    const database = await createTestDatabase('tms_vectors_bench');
    const ledger = await Ledger.open({ databaseUrl: database.url });
    await ledger.migrate();
    return { ledger, database };
  }
  const ledger = await Ledger.open({ dataDir: 'memory://' });
  await ledger.migrate();
  return { ledger, database: null };
}

async function run(store: string, size: number): Promise<void> {
  const { ledger, database } = await open(store);
  try {
    const provider = new PostgresSearchProvider(ledger.handle.db, {
      store: store.endsWith('exact') ? 'exact' : 'auto',
    });
    await provider.prepare();
    const docs = documents(size);
    const loadStart = performance.now();
    for (let i = 0; i < docs.length; i += 500) {
      await provider.applyVectors('ws_bench', {
        model: MODEL,
        dimensions: DIMENSIONS,
        upserts: docs.slice(i, i + 500),
        updates: [],
        deletes: [],
      });
    }
    const loadSeconds = (performance.now() - loadStart) / 1000;
    const namespaces = Math.ceil(size / PER_NAMESPACE);
    for (const scope of ['one namespace', 'all namespaces'] as const) {
      if (scope === 'all namespaces' && namespaces === 1) continue;
      const latencies: number[] = [];
      let found = 0;
      let expected = 0;
      for (let q = 0; q < QUERIES + 3; q++) {
        const query: SemanticQuery = {
          workspaceId: 'ws_bench',
          namespaceIds:
            scope === 'one namespace'
              ? [`ns_${q % namespaces}`]
              : Array.from({ length: namespaces }, (_, n) => `ns_${n}`),
          asOf: 1000,
          knownAt: 1000,
          limit: 10,
          offset: 0,
          model: MODEL,
          vector: randomUnit(1_000_000 + q),
        };
        const start = performance.now();
        const hits = await provider.searchSemantic(query);
        const ms = performance.now() - start;
        if (q < 3) continue; // warm-up
        latencies.push(ms);
        const truth = new Set(bruteForce(docs, query));
        expected += truth.size;
        found += hits.filter((h) => truth.has(h.revisionId)).length;
      }
      latencies.sort((a, b) => a - b);
      console.log(
        [
          store.padEnd(13),
          String(size).padStart(7),
          scope.padEnd(15),
          `p50 ${percentile(latencies, 50).toFixed(1).padStart(8)} ms`,
          `p95 ${percentile(latencies, 95).toFixed(1).padStart(8)} ms`,
          `recall@10 ${(found / expected).toFixed(3)}`,
          `load ${loadSeconds.toFixed(1)} s`,
        ].join('  '),
      );
    }
  } finally {
    await ledger.close();
    await database?.drop();
  }
}

console.log(`${new Date().toISOString()} ${os.cpus()[0]?.model} x${os.cpus().length}, node ${process.version}`);
for (const size of SIZES) {
  for (const store of STORES) await run(store, size);
}
