import { Ledger } from '@tms/ledger';
import { type CursorFence, type DocumentBatch, Indexer, PostgresSearchProvider } from '@tms/search';
import { createTestDatabase, gate, type TestDatabase } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from '../../gateway/test/harness';

/** The indexer under test opens its own pool under this name, so pg_stat_activity tells its sessions apart. */
const INDEXER_APPLICATION = 'tms-runner-under-test';

const rowsOf = <T>(result: unknown) => (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];

/** The indexer's sessions as Postgres sees them: those inside a transaction, and those not idle. */
async function indexerSessions(observer: Ledger): Promise<{ inTransaction: number; busy: number }> {
  const [row] = rowsOf<{ in_transaction: number; busy: number }>(
    await observer.handle.db.execute(sql`
      select count(*) filter (where xact_start is not null)::int as in_transaction,
             count(*) filter (where state <> 'idle')::int as busy
        from pg_stat_activity
       where datname = current_database() and application_name = ${INDEXER_APPLICATION}`),
  );
  return { inTransaction: row?.in_transaction ?? -1, busy: row?.busy ?? -1 };
}

async function seed(h: Harness, texts: string[]) {
  const { id: workspaceId, api } = await h.workspace();
  const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'runner' })).body.namespace.id as string;
  const memories: { memory: string; revision: string }[] = [];
  for (const text of texts) {
    const created = await api.post('/v1/memories', { namespace_id: ns, kind: 'claim', text, valid_from: 0 });
    expect(created.status).toBe(200);
    memories.push({ memory: created.body.memory.id, revision: created.body.revision.id });
  }
  return { workspaceId, api, memories };
}

async function caughtUp(ledger: Ledger, workspaceId: string, cursor = 'postgres'): Promise<boolean> {
  const lag = (await ledger.stores.indexState.lag(cursor, false)).find((w) => w.workspaceId === workspaceId);
  return lag !== undefined && lag.indexedSequence === lag.headSequence;
}

describe('the lexical arm on the cursor runner (Postgres)', () => {
  let h: Harness;
  let indexerLedger: Ledger;
  let external: TestDatabase;
  let externalLedger: Ledger;
  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
    const url = new URL(h.database?.url as string);
    url.searchParams.set('application_name', INDEXER_APPLICATION);
    indexerLedger = await Ledger.open({ databaseUrl: url.toString() });
    await new PostgresSearchProvider(indexerLedger.handle.db).prepare();
    external = await createTestDatabase('tms_external_index');
    externalLedger = await Ledger.open({ databaseUrl: external.url });
  });
  afterAll(async () => {
    await indexerLedger?.close();
    await externalLedger?.close();
    await external?.drop();
    await h?.close();
  });

  it('holds no transaction while it applies, and stores with the advance in one transaction on one connection', async () => {
    const { workspaceId, memories } = await seed(h, ['The heron waits at dawn', 'Tide tables for March']);
    const observed: { atApply: { inTransaction: number; busy: number }; inStore: unknown }[] = [];
    class ObservedProvider extends PostgresSearchProvider {
      override async apply(ws: string, batch: DocumentBatch, fence?: CursorFence): Promise<boolean> {
        const atApply = await indexerSessions(h.gateway.ledger);
        const entry: (typeof observed)[number] = { atApply, inStore: null };
        observed.push(entry);
        const watched: CursorFence | undefined = fence && {
          store: (write, mode) =>
            fence.store(async (db) => {
              entry.inStore = await indexerSessions(h.gateway.ledger);
              await write(db);
            }, mode),
          confirm: () => fence.confirm(),
        };
        return super.apply(ws, batch, watched);
      }
    }
    const provider = new ObservedProvider(indexerLedger.handle.db);
    const indexer = new Indexer(indexerLedger, provider, { exclusive: true, batchSize: 2 });
    expect(await indexer.catchUp()).toBeGreaterThan(0);
    expect(observed.length).toBeGreaterThan(1);
    for (const { atApply, inStore } of observed) {
      // Under the old discipline the claim's transaction was open here, and the provider took a second connection.
      expect(atApply).toEqual({ inTransaction: 0, busy: 0 });
      expect(inStore).toEqual({ inTransaction: 1, busy: 1 });
    }
    expect(await caughtUp(indexerLedger, workspaceId)).toBe(true);
    expect(await provider.indexedRevisionIds(workspaceId)).toEqual(memories.map((m) => m.revision).sort());
  });

  it('an index outside the database (as Meilisearch): enqueued under the fence, waited for holding no transaction, then advanced', async () => {
    const { workspaceId, memories } = await seed(h, ['Lanterns along the quay', 'The ferry leaves at six']);
    // Meilisearch does not run here: another database stands in for it, its `apply` for the task Meilisearch runs.
    const index = new PostgresSearchProvider(externalLedger.handle.db);
    await index.prepare();
    const waits: { inTransaction: number; busy: number }[] = [];
    class ExternalIndex extends PostgresSearchProvider {
      override async apply(ws: string, batch: DocumentBatch, fence?: CursorFence): Promise<boolean> {
        if (!fence) return index.apply(ws, batch);
        const queue: DocumentBatch[] = [];
        if (!(await fence.store(async () => void queue.push(batch), 'confirm'))) return false;
        waits.push(await indexerSessions(h.gateway.ledger));
        for (const task of queue) await index.apply(ws, task);
        return fence.confirm();
      }
    }
    const indexer = new Indexer(indexerLedger, new ExternalIndex(externalLedger.handle.db), {
      exclusive: true,
      batchSize: 2,
    });
    expect(await indexer.catchUp()).toBeGreaterThan(0);
    expect(waits.length).toBeGreaterThan(0);
    for (const sessions of waits) expect(sessions).toEqual({ inTransaction: 0, busy: 0 });
    expect(await caughtUp(indexerLedger, workspaceId)).toBe(true);
    expect(await index.indexedRevisionIds(workspaceId)).toEqual(memories.map((m) => m.revision).sort());
  });
});

describe.each(DRIVERS)('two lexical indexers racing on one workspace (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  it('a batch planned before a purge and stored after another indexer did the purge writes nothing', async () => {
    const ledger = h.gateway.ledger;
    const { workspaceId, api, memories } = await seed(h, ['Ana keeps bees on the roof', 'The well is dry in August']);
    const [purged, kept] = memories as [(typeof memories)[0], (typeof memories)[0]];
    const held = gate();
    const entered = gate();
    class HeldProvider extends PostgresSearchProvider {
      override async apply(ws: string, batch: DocumentBatch, fence?: CursorFence): Promise<boolean> {
        entered.open();
        await held.opened;
        return super.apply(ws, batch, fence);
      }
    }
    const provider = new PostgresSearchProvider(ledger.handle.db);
    await provider.prepare();
    const slow = new Indexer(ledger, new HeldProvider(ledger.handle.db));
    const fast = new Indexer(ledger, provider);
    // The slow indexer has planned both memories as live and works outside any transaction...
    const slowBatch = slow.indexBatch(workspaceId);
    await entered.opened;
    // ...when one of them is purged, and the other indexer indexes everything, the purge included:
    // the workspace's claim is not held while the slow one applies.
    const forget = await api.post(`/v1/memories/${purged.memory}/forget`, { mode: 'purge', expected_generation: 1 });
    expect(forget.status).toBe(200);
    expect(await fast.indexBatch(workspaceId)).toBeGreaterThan(0);
    expect(await provider.indexedRevisionIds(workspaceId)).toEqual([kept.revision]);
    // The slow batch finds the cursor moved: it writes nothing, so the purged text does not come back.
    held.open();
    expect(await slowBatch).toBe(0);
    expect(await provider.indexedRevisionIds(workspaceId)).toEqual([kept.revision]);
    const namespace = (await ledger.stores.memories.revisionsOfMemories(workspaceId, [kept.memory]))[0]?.namespaceId;
    const statistics = await provider.termStatistics(workspaceId, namespace as string);
    expect(statistics.documents).toBe(1);
    // Only the kept text's terms are counted: the purged one's never were, or were uncounted.
    expect(statistics.terms.has('roof')).toBe(false);
    expect(statistics.terms.get('the')).toBe(1);
    expect(await caughtUp(ledger, workspaceId)).toBe(true);
  });
});
