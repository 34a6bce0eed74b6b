/**
 * Recall and indexing at scale on Postgres: writes N memories through the real domain write
 * path, indexes them, then measures recall. Prints figures and ratios against baselines run in
 * the same process: indexer throughput against the raw write rate, and recall latency against a
 * plain memories.get. Usage: pnpm --filter @tms/bench recall [N] (default 100000).
 */
import os from 'node:os';
import { TokenVerifier } from '@tms/auth';
import { OPERATIONS_BY_NAME, type Operation } from '@tms/catalog';
import { type Caller, Domain, type RawInput } from '@tms/domain';
import { Ledger } from '@tms/ledger';
import { Indexer, PostgresSearchProvider } from '@tms/search';
import { createTestDatabase, enrolledSessionCaller } from '@tms/testkit';
import { queryFor, textFor } from './corpus';

const N = Number(process.argv[2] ?? 100_000);
const CONCURRENCY = 8;
const QUERIES = 300;

const op = (name: string) => OPERATIONS_BY_NAME.get(name) as Operation;
let keySeq = 0;
const call = async (domain: Domain, caller: Caller, name: string, raw: Partial<RawInput>, workspace: string | null) =>
  JSON.parse(
    (
      await domain.execute(
        op(name),
        { params: raw.params ?? {}, query: raw.query ?? {}, body: raw.body },
        { caller, requestId: 'bench', selectedWorkspaceId: workspace, idempotencyKey: `bench-${keySeq++}` },
      )
    ).json,
  );

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, performance.now() - start];
}

async function main() {
  const database = await createTestDatabase('tms_bench');
  const ledger = await Ledger.open({ databaseUrl: database.url, maxConnections: CONCURRENCY + 2 });
  try {
    await ledger.migrate();
    const provider = new PostgresSearchProvider(ledger.handle.db);
    await provider.prepare();
    const domain = new Domain(ledger, new TokenVerifier({}), provider);
    const caller: Caller = await enrolledSessionCaller(ledger, 'bench', 'bench-user');
    const ws = (await call(domain, caller, 'workspaces.create', { body: { name: 'bench' } }, null)).workspace.id;
    const ns = (await call(domain, caller, 'namespaces.create', { body: { parent_id: null, name: 'bulk' } }, ws))
      .namespace.id;

    // 1. Raw write rate through the domain (validation, idempotency record, commit, one transaction).
    let next = 0;
    const memoryIds: string[] = [];
    const [, writeMs] = await timed(() =>
      Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let i = next++; i < N; i = next++) {
            const body = { namespace_id: ns, kind: 'claim', text: textFor(i), valid_from: 0 };
            const created = await call(domain, caller, 'memories.create', { body }, ws);
            if (i % 97 === 0) memoryIds.push(created.memory.id);
            if (i > 0 && i % 10_000 === 0) process.stderr.write(`  wrote ${i}\n`);
          }
        }),
      ),
    );
    const writeRate = N / (writeMs / 1000);

    // 2. Indexer throughput over the whole backlog.
    const indexer = new Indexer(ledger, provider, { batchSize: 500 });
    const [commits, indexMs] = await timed(() => indexer.catchUp());
    const indexRate = commits / (indexMs / 1000);

    // 3. Recall latency, and memories.get as the in-process baseline.
    const recallMs: number[] = [];
    const getMs: number[] = [];
    let returned = 0;
    for (let q = 0; q < QUERIES; q += 1) {
      const body = {
        namespace_ids: [ns],
        query: queryFor(q),
        budget: { max_items: 20, max_context_chars: 20_000 },
      };
      const [result, ms] = await timed(() => call(domain, caller, 'recall', { body }, ws));
      recallMs.push(ms);
      returned += result.items.length;
      const id = memoryIds[q % memoryIds.length] as string;
      getMs.push((await timed(() => call(domain, caller, 'memories.get', { params: { id } }, ws)))[1]);
    }
    recallMs.sort((a, b) => a - b);
    getMs.sort((a, b) => a - b);

    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    const lines = [
      `machine: ${os.cpus().length} x ${cpu}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, Postgres at ${new URL(database.url).host}`,
      `memories: ${N}`,
      `write rate (memories.create through the domain, ${CONCURRENCY} concurrent): ${writeRate.toFixed(0)}/s`,
      `indexer throughput (postgres full-text, batches of 500): ${indexRate.toFixed(0)} commits/s = ${(indexRate / writeRate).toFixed(2)}x the write rate`,
      `recall latency over ${QUERIES} queries: p50 ${percentile(recallMs, 50).toFixed(1)} ms, p99 ${percentile(recallMs, 99).toFixed(1)} ms (${(returned / QUERIES).toFixed(1)} items on average)`,
      `memories.get baseline: p50 ${percentile(getMs, 50).toFixed(1)} ms, p99 ${percentile(getMs, 99).toFixed(1)} ms; recall/get p50 ratio ${(percentile(recallMs, 50) / percentile(getMs, 50)).toFixed(1)}x`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await ledger.close();
    await database.drop();
  }
}

await main();
