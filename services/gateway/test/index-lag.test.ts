import { Indexer, PostgresSearchProvider } from '@tms/search';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';

/** Poll until `check` holds (the watch and the indexer work in the background). */
async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A gauge's value; the index lag gauges carry an `arm` label (lexical unless asked). */
function gauge(metrics: string, name: string, arm = 'lexical'): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{arm="${arm}"} `));
  if (!line) throw new Error(`${name} missing from /metrics`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function createMemory(h: Harness): Promise<number> {
  const { api } = await h.workspace();
  const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'notes' })).body.namespace;
  const created = await api.post('/v1/memories', {
    namespace_id: ns.id,
    kind: 'claim',
    text: 'Indexing keeps up with the ledger.',
    valid_from: 0,
  });
  expect(created.status).toBe(200);
  return created.body.commit.sequence as number;
}

describe('the search index on Postgres (decisions §9)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('is kept by the gateway itself when INDEXER is not set', async () => {
    h = await startHarness({ driver: 'postgres', env: { INDEXER: undefined } });
    const { api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'notes' })).body.namespace;
    const created = await api.post('/v1/memories', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'The embedded indexer runs on Postgres too.',
      valid_from: 0,
    });
    const recallIndexed = () =>
      api.post('/v1/recall', {
        namespace_ids: [ns.id],
        query: 'embedded indexer',
        budget: { max_items: 5, max_context_chars: 1000 },
        min_sequence: created.body.commit.sequence,
        wait_ms: 5000,
      });
    // The builtin model loads as the gateway starts: ask again while it is not ready.
    let found = await recallIndexed();
    for (let tries = 0; tries < 6 && found.body.status !== 'complete'; tries += 1) found = await recallIndexed();
    expect(found.body.status).toBe('complete');
    expect(found.body.items.map((i: { memory: { id: string } }) => i.memory.id)).toEqual([created.body.memory.id]);
  });

  it('warns and shows the lag on /metrics when no indexer advances a workspace, then says it caught up', async () => {
    h = await startHarness({
      driver: 'postgres',
      // The builtin embedder gives the semantic arm its own series; no model loads (nothing embeds).
      env: { INDEXER: 'external', INDEX_STALL_SECONDS: '1', EMBEDDER: 'builtin' },
      lagWatch: true,
    });
    const harness = h;
    const metrics = async () => (await harness.api.get('/metrics')).text as string;
    const idle = await metrics();
    expect(gauge(idle, 'tms_indexer_lag_commits')).toBe(0);
    // prom-client's process and Node.js metrics sit beside ours.
    expect(gauge(idle, 'process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    expect(idle).toMatch(/^nodejs_eventloop_lag_seconds \d/m);

    await createMemory(harness);
    const stalled = () => harness.logs.filter((line) => line.includes('search index stalled'));
    await until(() => stalled().length > 0, 'the stall warning');
    const warning = JSON.parse(stalled()[0] ?? '{}');
    expect(warning.level).toBe(40);
    expect(warning.stalled_workspaces).toBeGreaterThanOrEqual(1);
    expect(warning.lag_commits).toBeGreaterThanOrEqual(3);

    const during = await metrics();
    expect(gauge(during, 'tms_indexer_lag_commits')).toBeGreaterThanOrEqual(3);
    expect(gauge(during, 'tms_indexer_lag_seconds')).toBeGreaterThanOrEqual(1);
    expect(gauge(during, 'tms_indexer_stalled_workspaces')).toBeGreaterThanOrEqual(1);
    // The semantic arm has its own series: no indexer embeds either.
    expect(gauge(idle, 'tms_indexer_lag_commits', 'semantic')).toBe(0);
    expect(gauge(during, 'tms_indexer_lag_commits', 'semantic')).toBeGreaterThanOrEqual(3);
    // Repeated only every few minutes, not on every check.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(stalled()).toHaveLength(1);

    // An indexer (as the external service would run) catches up; the watch says so.
    const indexer = new Indexer(harness.gateway.ledger, new PostgresSearchProvider(harness.gateway.ledger.handle.db), {
      pollMs: 50,
    });
    const running = indexer.run();
    try {
      await until(() => harness.logs.some((line) => line.includes('search index caught up again')), 'the recovery');
      const after = await metrics();
      expect(gauge(after, 'tms_indexer_lag_commits')).toBe(0);
      expect(gauge(after, 'tms_indexer_stalled_workspaces')).toBe(0);
    } finally {
      indexer.stop();
      await running;
    }
  });
});
