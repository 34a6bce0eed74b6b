import { createTestDatabase, type TestDatabase, testMigrateOptions } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainingProgress, chainOlderLedgers } from '../src/chain-migration';
import { Ledger } from '../src/ledger';
import { verifyWorkspaceChain } from '../src/verify-chain';

/*
 * `svc migrate` chains ledgers written before the hash chain, in batches that commit one by one.
 * A run that stops part way (a crash, a deploy) leaves the batches it committed: the next run
 * goes on after them instead of chaining the workspace from sequence 1 again.
 */

const WS = 'ws_older';
const COMMITS = 12;
const BATCH = 5;

for (const driver of ['postgres', 'pglite'] as const) {
  describe(`chaining older ledgers (${driver})`, () => {
    let database: TestDatabase | null = null;
    let ledger: Ledger;
    let chainedHead: string;

    beforeAll(async () => {
      database = driver === 'postgres' ? await createTestDatabase('tms_chain_migration') : null;
      ledger = await Ledger.open({ databaseUrl: database?.url });
      await ledger.migrate(testMigrateOptions());
      // A workspace of namespaces, one per commit, chained as written.
      await ledger.transaction((stores) => stores.commits.createHead(WS));
      for (let n = 1; n <= COMMITS; n += 1) {
        await ledger.transaction(async (stores) => {
          const { previousChainHash, ...stamp } = await stores.commits.allocate(WS);
          const id = `ns_${n}`;
          const commit = {
            workspaceId: WS,
            ...stamp,
            operation: 'namespaces.create',
            actorId: 'act_1',
            subjectIds: [id],
          };
          await stores.commits.insert(commit);
          await stores.namespaces.insert({
            workspaceId: WS,
            id,
            parentId: null,
            name: `n${n}`,
            ancestorIds: [],
            pathKey: Buffer.from([n]),
            createdAt: stamp.recordedAt,
            updatedAt: stamp.recordedAt,
          });
          await stores.chain.seal(commit, previousChainHash);
        });
      }
      const verdict = await ledger.snapshot((stores) => verifyWorkspaceChain(stores, WS));
      if (!verdict.intact) throw new Error(`not chained: ${verdict.reason}`);
      chainedHead = verdict.chainHash;
      // As a ledger written before the chain existed.
      await ledger.handle.db.execute(sql`update commits set chain_hash = null where workspace_id = ${WS}`);
    });

    afterAll(async () => {
      await ledger?.close();
      await database?.drop();
    });

    it('a run that stopped part way is resumed after the batches it committed', async () => {
      const stopped: number[] = [];
      // The second batch fails before its commit: the first (sequences 1-5) stays chained.
      const failing = chainOlderLedgers(
        ledger,
        (progress: ChainingProgress) => {
          stopped.push(progress.sequence);
          if (progress.sequence > BATCH) throw new Error('stopped');
        },
        BATCH,
      );
      await expect(failing).rejects.toThrow('stopped');
      expect(stopped).toEqual([5, 10]);
      expect(await ledger.stores.chain.chainedPrefix(WS)).toMatchObject({ sequence: 5 });

      const resumed: number[] = [];
      expect(await chainOlderLedgers(ledger, (progress) => resumed.push(progress.sequence), BATCH)).toBe(1);
      // From sequence 6 on, not from 1.
      expect(resumed).toEqual([10, 12]);
      expect(await ledger.snapshot((stores) => verifyWorkspaceChain(stores, WS))).toEqual({
        intact: true,
        sequence: COMMITS,
        chainHash: chainedHead,
      });
      // Nothing is left to chain.
      expect(await chainOlderLedgers(ledger)).toBe(0);
    });
  });
}
