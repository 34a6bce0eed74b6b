import type { Stores } from './stores';
import { chainOver, VERIFY_BATCH } from './verify-chain';

/** What the migration needs of the ledger (`Ledger` passes itself). */
export interface ChainingLedger {
  readonly stores: Stores;
  transaction<T>(fn: (stores: Stores) => Promise<T>): Promise<T>;
}

/** Progress of chaining one workspace's older commits. */
export interface ChainingProgress {
  workspaceId: string;
  sequence: number;
  head: number;
}

/**
 * Chain ledgers written before the chain existed (run by `svc migrate` after the SQL migrations):
 * each workspace whose last commit has no chain hash is chained in batches, each committed on its
 * own, from where an earlier run stopped (the end of the chained prefix; sequence 1 the first
 * time). Writes go on meanwhile (they leave their chain hash null while the commit before has
 * none); the last batch runs with the head locked and chains what they wrote too, after which
 * writes chain themselves. Answers the number of workspaces chained.
 */
export async function chainOlderLedgers(
  ledger: ChainingLedger,
  onProgress: (progress: ChainingProgress) => void = () => {},
  batchSize = VERIFY_BATCH,
): Promise<number> {
  const pending = await ledger.stores.chain.unchainedWorkspaces();
  for (const { workspaceId, sequence: head } of pending) {
    const resumed = await ledger.stores.chain.chainedPrefix(workspaceId);
    let previous = resumed.chainHash;
    let next = resumed.sequence + 1;
    const chainBatch = async (stores: Stores, upTo: number) => {
      while (next <= upTo) {
        const rows = await stores.chain.commits(workspaceId, next, upTo, batchSize);
        if (rows.length === 0) break;
        const hashes = chainOver(previous, await stores.chain.digestInputs(workspaceId, rows));
        await stores.chain.setChainHashes(
          workspaceId,
          rows.map((row, i) => ({ sequence: row.sequence, chainHash: hashes[i] as string })),
        );
        previous = hashes.at(-1) as string;
        next = (rows.at(-1)?.sequence ?? next) + 1;
        onProgress({ workspaceId, sequence: next - 1, head: upTo });
      }
    };
    // Batches of their own transaction each, up to the head seen at the start.
    while (next <= head) {
      const before = next;
      await ledger.transaction((stores) => chainBatch(stores, Math.min(head, next + batchSize - 1)));
      if (next === before) break;
    }
    await ledger.transaction(async (stores) => {
      const locked = await stores.chain.lockHead(workspaceId);
      if (!locked || locked.chainHash !== null) return;
      await chainBatch(stores, locked.sequence);
    });
  }
  return pending.length;
}
