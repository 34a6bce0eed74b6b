import { createTestDatabase, sha256Hex, type TestDatabase, testMigrateOptions } from '@tms/testkit';
import { eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/ledger';
import type { MemoryRow, RevisionRow } from '../src/rows';
import { revisions, workspaceHeads } from '../src/schema';
import { collectingStores, consecutiveStamps, InsertCollector } from '../src/storage/insert-collector';
import type { Stores } from '../src/stores';
import { verifyWorkspaceChain } from '../src/verify-chain';
import { revisionRow, UNKEYED } from './rows';

/*
 * One source per chain hash: a write's commit is hashed from the very row objects its insert
 * sends, whether it commits alone (`ChainStorage.seal`) or in a group commit (`InsertCollector`),
 * so the same write gives the same chain hash on either path, on both ledgers; and the rows as
 * stored give it back (`verifyWorkspaceChain` recomputes every commit from the database).
 */

type Driver = 'postgres' | 'pglite';

const WS = 'ws_sources';
const ACTOR = 'act_writer';

/** Past any clock: every commit is stamped with it (`recorded_at` never goes back), on both ledgers alike. */
const STAMP = 4_000_000_000.25;

async function openLedger(driver: Driver, databases: TestDatabase[]): Promise<Ledger> {
  const database = driver === 'postgres' ? await createTestDatabase('tms_chain_sources') : null;
  if (database) databases.push(database);
  const ledger = await Ledger.open({ databaseUrl: database?.url });
  await ledger.migrate(testMigrateOptions());
  // A workspace whose commit 1 is chained from genesis, as `workspaces.create` leaves it.
  await ledger.transaction(async (stores) => {
    await stores.commits.createHead(WS);
    await stores.db.update(workspaceHeads).set({ recordedAt: STAMP }).where(eq(workspaceHeads.workspaceId, WS));
    const { previousChainHash, ...stamp } = await stores.commits.allocate(WS);
    const commit = { workspaceId: WS, ...stamp, operation: 'workspaces.create', actorId: ACTOR, subjectIds: [WS] };
    await stores.commits.insert(commit);
    await stores.directory.insertWorkspace({ id: WS, name: 'sources', createdAt: stamp.recordedAt, createdBy: ACTOR });
    await stores.chain.seal(commit, previousChainHash);
  });
  return ledger;
}

/** The rows of one `memories.create` (keyed or not, citing evidence or not), for the stamp allocated. */
function memoryWrite(n: number, stamp: { sequence: number; recordedAt: number }) {
  const memory: MemoryRow = {
    workspaceId: WS,
    id: `mem_${n}`,
    namespaceId: 'ns_facts',
    kind: 'claim',
    generation: 1,
    createdAt: stamp.recordedAt,
    ...UNKEYED,
    ...(n % 2 === 0 ? { key: `key:${n}`, keySha256: sha256Hex(`key:${n}`) } : {}),
  };
  const revision: RevisionRow = revisionRow(WS, `rev_${n}`, {
    memoryId: memory.id,
    namespaceId: 'ns_facts',
    text: `fact ${n} \u0000 🦊`,
    validFrom: -0.5,
    recordedAt: stamp.recordedAt,
    commitSequence: stamp.sequence,
    evidenceIds: n % 3 === 0 ? ['ev_a', 'ev_b'] : [],
  });
  const commit = {
    workspaceId: WS,
    ...stamp,
    operation: 'memories.create',
    actorId: ACTOR,
    subjectIds: [memory.id, revision.id],
  };
  return { memory, revision, commit };
}

/**
 * Writes 1..count, each in its own transaction and chained by `seal`. `beforeSeal` runs between
 * a write's inserts and its seal (a test changes the stored row there).
 */
async function writeAlone(
  ledger: Ledger,
  count: number,
  beforeSeal: (stores: Stores, n: number) => Promise<void> = async () => {},
): Promise<void> {
  for (let n = 1; n <= count; n += 1) {
    await ledger.transaction(async (stores) => {
      const { previousChainHash, ...stamp } = await stores.commits.allocate(WS);
      const { memory, revision, commit } = memoryWrite(n, stamp);
      await stores.commits.insert(commit);
      await stores.memories.insert(memory, revision);
      await beforeSeal(stores, n);
      await stores.chain.seal(commit, previousChainHash);
    });
  }
}

/** The same writes in one group commit, as `GroupCommitter` runs one. */
async function writeGrouped(ledger: Ledger, count: number): Promise<void> {
  await ledger.transaction(
    async (stores) => {
      const collector = new InsertCollector();
      const batch = collectingStores(stores, collector);
      const allocated = await stores.commits.allocateMany(WS, count);
      for (const [i, stamp] of consecutiveStamps(allocated, count).entries()) {
        const { memory, revision, commit } = memoryWrite(i + 1, stamp);
        collector.commit(commit);
        await batch.memories.insert(memory, revision);
      }
      collector.chain(allocated.previousChainHash);
      await collector.flush(stores.db, WS);
    },
    { retry: false },
  );
}

const chainHashes = async (ledger: Ledger) =>
  (await ledger.stores.chain.commits(WS, 1, 1000, 1000)).map((c) => [c.sequence, c.recordedAt, c.chainHash]);

const verify = (ledger: Ledger) => ledger.snapshot((stores) => verifyWorkspaceChain(stores, WS));

for (const driver of ['postgres', 'pglite'] as const) {
  describe(`one source per chain hash (${driver})`, () => {
    const databases: TestDatabase[] = [];
    const ledgers: Ledger[] = [];
    const open = async () => {
      const ledger = await openLedger(driver, databases);
      ledgers.push(ledger);
      return ledger;
    };
    afterAll(async () => {
      await Promise.all(ledgers.map((ledger) => ledger.close()));
      await Promise.all(databases.map((database) => database.drop()));
    });

    it('the same writes alone and grouped give the same chain hashes, and the stored rows give them back', async () => {
      const alone = await open();
      const grouped = await open();
      await writeAlone(alone, 5);
      await writeGrouped(grouped, 5);
      const hashes = await chainHashes(alone);
      expect(hashes).toHaveLength(6);
      expect(hashes.every(([, recordedAt, hash]) => recordedAt === STAMP && typeof hash === 'string')).toBe(true);
      expect(await chainHashes(grouped)).toEqual(hashes);
      expect(await verify(alone)).toMatchObject({ intact: true, sequence: 6 });
      expect(await verify(grouped)).toMatchObject({ intact: true, sequence: 6 });
    });

    it('a write alone is hashed from the objects it inserted, not from the rows read back', async () => {
      const reference = await open();
      const changed = await open();
      await writeGrouped(reference, 3);
      // Between its inserts and its seal, the third write's stored text changes behind the storage.
      await writeAlone(changed, 3, async (stores, n) => {
        if (n !== 3) return;
        await stores.db.update(revisions).set({ text: 'changed' }).where(eq(revisions.id, 'rev_3'));
      });
      expect(await chainHashes(changed)).toEqual(await chainHashes(reference));
      // The rows as stored no longer give commit 4's hash (the third write): what was hashed is what the insert sent.
      expect(await verify(changed)).toMatchObject({ intact: false, sequence: 4 });
    });

    it('a commit naming rows an earlier write inserted reads them from the ledger', async () => {
      const ledger = await open();
      await writeGrouped(ledger, 2);
      const sealed = await ledger.transaction(async (stores) => {
        const { previousChainHash, ...stamp } = await stores.commits.allocate(WS);
        const next = revisionRow(WS, 'rev_1b', {
          memoryId: 'mem_1',
          namespaceId: 'ns_facts',
          generation: 2,
          text: 'corrected',
          recordedAt: stamp.recordedAt,
          commitSequence: stamp.sequence,
          supportRevisionIds: ['rev_2'],
        });
        const commit = {
          workspaceId: WS,
          ...stamp,
          operation: 'memories.correct',
          actorId: ACTOR,
          subjectIds: ['mem_1', 'rev_1b'],
        };
        await stores.commits.insert(commit);
        await stores.memories.insertRevision(next, 2);
        await stores.memories.endRecord(WS, 'rev_1', stamp.recordedAt);
        return stores.chain.seal(commit, previousChainHash);
      });
      expect(sealed).toMatch(/^[0-9a-f]{64}$/);
      expect(await verify(ledger)).toEqual({ intact: true, sequence: 4, chainHash: sealed });
    });
  });
}
