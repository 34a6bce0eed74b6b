import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { PostgresSearchProvider } from '@tms/search';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../gateway/test/harness';

const ROOT = path.resolve(import.meta.dirname, '../../..');

interface IndexerProcess {
  child: ChildProcess;
  batches: { workspaceId: string; commits: number; indexedSequence: number }[];
  firstBatch: Promise<void>;
  started: Promise<void>;
  exited: Promise<void>;
}

function startIndexer(databaseUrl: string, batchSize: number): IndexerProcess {
  // Its own process group, so that a signal reaches tsx's node child too (and kills for real).
  const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['services/indexer/src/main.ts'], {
    cwd: ROOT,
    detached: true,
    env: { ...process.env, DATABASE_URL: databaseUrl, INDEXER_BATCH_SIZE: String(batchSize), INDEXER_POLL_MS: '100' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const batches: IndexerProcess['batches'] = [];
  let onFirst: () => void = () => {};
  const firstBatch = new Promise<void>((resolve) => {
    onFirst = resolve;
  });
  let onStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    onStarted = resolve;
  });
  let buffer = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      try {
        const entry = JSON.parse(line);
        if (entry.msg === 'indexer started') onStarted();
        if (entry.msg === 'indexed') {
          batches.push({
            workspaceId: entry.workspaceId,
            commits: entry.commits,
            indexedSequence: entry.indexedSequence,
          });
          onFirst();
        }
      } catch {
        /* not a log line */
      }
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, batches, firstBatch, started, exited };
}

/** Signal the indexer's whole process group (tsx runs the service in a child node process). */
function signal(p: IndexerProcess, name: NodeJS.Signals): void {
  try {
    process.kill(-(p.child.pid as number), name);
  } catch {
    /* already gone */
  }
}

async function until(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('condition not reached in time');
}

describe('indexer processes on Postgres', () => {
  let h: Harness;
  let provider: PostgresSearchProvider;
  const workspaces: string[] = [];
  const running: IndexerProcess[] = [];

  /** What the index must hold when caught up: every unpurged revision, by workspace. */
  async function expectedRevisionIds(ws: string): Promise<string[]> {
    const lag = await h.gateway.ledger.stores.indexState.lag('postgres', false);
    expect(lag.some((l) => l.workspaceId === ws)).toBe(true);
    const { sql } = await import('drizzle-orm');
    const result = await h.gateway.ledger.handle.db.execute(
      sql`select id from revisions where workspace_id = ${ws} and purged_at is null order by id`,
    );
    return (result as unknown as { id: string }[]).map((r) => r.id);
  }

  async function caughtUp(): Promise<boolean> {
    return (await h.gateway.ledger.stores.indexState.lag('postgres', true)).length === 0;
  }

  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
    provider = new PostgresSearchProvider(h.gateway.ledger.handle.db);
    await provider.prepare();
    for (let w = 0; w < 3; w += 1) {
      const { id, api } = await h.workspace();
      workspaces.push(id);
      const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'bulk' })).body.namespace;
      const ids: { memory: string }[] = [];
      for (let batch = 0; batch < 8; batch += 1) {
        const created = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            api.post('/v1/memories', {
              namespace_id: ns.id,
              kind: 'claim',
              text: `fact ${w}-${batch}-${i}`,
              valid_from: 0,
            }),
          ),
        );
        ids.push(...created.map((c) => ({ memory: c.body.memory.id as string })));
      }
      // Corrections and purges, so batches carry updates and deletions too.
      for (const { memory } of ids.slice(0, 5)) {
        await api.post(`/v1/memories/${memory}/corrections`, { expected_generation: 1, text: `corrected ${memory}` });
      }
      for (const { memory } of ids.slice(5, 8)) {
        await api.post(`/v1/memories/${memory}/forget`, { mode: 'purge', expected_generation: 1 });
      }
    }
  }, 180_000);

  afterAll(async () => {
    for (const p of running) signal(p, 'SIGKILL');
    await h?.close();
  });

  it('survives SIGKILL mid-batch: the next indexer finishes and the index equals the ledger', async () => {
    const first = startIndexer(h.database?.url as string, 5);
    running.push(first);
    await first.firstBatch;
    signal(first, 'SIGKILL');
    await first.exited;

    // indexed_sequence never passes a commit whose documents are not in the index.
    for (const ws of workspaces) {
      const indexed = await h.gateway.ledger.stores.indexState.indexedSequence(ws, 'postgres');
      const commits = await h.gateway.ledger.stores.commits.after(ws, 0, 10_000);
      const memoryIds = new Set(
        commits.filter((c) => c.sequence <= indexed).flatMap((c) => c.subjectIds.filter((id) => id.startsWith('mem_'))),
      );
      const revisions = await h.gateway.ledger.stores.memories.revisionsOfMemories(ws, [...memoryIds]);
      const inIndex = new Set(await provider.indexedRevisionIds(ws));
      for (const r of revisions) if (r.purgedAt === null) expect(inIndex.has(r.id)).toBe(true);
    }

    const second = startIndexer(h.database?.url as string, 5);
    running.push(second);
    await until(caughtUp);
    for (const ws of workspaces) {
      expect(await provider.indexedRevisionIds(ws)).toEqual(await expectedRevisionIds(ws));
    }
    signal(second, 'SIGTERM');
    await second.exited;
  }, 120_000);

  it('two indexers share the work without applying a batch twice; killing one hands over', async () => {
    // Both indexers idle first; then the whole index starts over, so both see the backlog at once.
    const a = startIndexer(h.database?.url as string, 1);
    const b = startIndexer(h.database?.url as string, 1);
    running.push(a, b);
    await Promise.all([a.started, b.started]);
    // Idle indexers leave a cleared index alone until the reset shows them the backlog.
    for (const ws of workspaces) await provider.clear(ws);
    await h.gateway.ledger.transaction(async (stores) => {
      for (const ws of workspaces) await stores.indexState.reset(ws, 'postgres', Date.now() / 1000);
    });
    await Promise.all([a.firstBatch, b.firstBatch]);
    signal(a, 'SIGKILL');
    await a.exited;
    await until(caughtUp);

    const ranges = [...a.batches, ...b.batches].map((x) => ({
      ws: x.workspaceId,
      from: x.indexedSequence - x.commits + 1,
      to: x.indexedSequence,
    }));
    expect(a.batches.length).toBeGreaterThan(0);
    expect(b.batches.length).toBeGreaterThan(0);
    for (const ws of workspaces) {
      const mine = ranges.filter((r) => r.ws === ws).sort((x, y) => x.from - y.from);
      // Acknowledged batches never overlap: no commit was applied twice by two indexers.
      for (let i = 1; i < mine.length; i += 1) expect(mine[i]?.from).toBeGreaterThan(mine[i - 1]?.to as number);
      expect(await provider.indexedRevisionIds(ws)).toEqual(await expectedRevisionIds(ws));
    }
    signal(b, 'SIGTERM');
    await b.exited;
  }, 120_000);
});
