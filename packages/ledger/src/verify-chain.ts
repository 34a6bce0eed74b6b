import {
  type ChainBreak,
  type CommitDigestInput,
  commitDigest,
  GENESIS_CHAIN_HASH,
  nextChainHash,
  sha256Hex,
  walkChain,
} from './chain';
import type { Stores } from './stores';

/** Commits recomputed per batch: each batch is one read of commits and one per kind of row. */
export const VERIFY_BATCH = 500;

export type ChainVerdict =
  | { intact: true; sequence: number; chainHash: string }
  | { intact: false; sequence: number; reason: string };

export interface VerifyOptions {
  /** First sequence to recompute; the chain hash stored at `from - 1` is taken as given. */
  from?: number;
  batchSize?: number;
  /** Called after each batch with the last sequence checked and the head's. */
  onProgress?: (sequence: number, head: number) => void;
}

/**
 * Recompute a workspace's chain from its rows (`svc ledger verify`, docs/ledger-proofs.md): the
 * first sequence whose rows no longer give its stored chain hash, or the head reached.
 */
export async function verifyWorkspaceChain(
  stores: Stores,
  workspaceId: string,
  options: VerifyOptions = {},
): Promise<ChainVerdict> {
  const head = await stores.chain.head(workspaceId);
  if (!head) throw new Error(`no workspace ${workspaceId}`);
  const from = Math.max(1, options.from ?? 1);
  const batchSize = options.batchSize ?? VERIFY_BATCH;
  let previous = from === 1 ? GENESIS_CHAIN_HASH : await stores.chain.chainHashAt(workspaceId, from - 1);
  if (previous === null) {
    return { intact: false, sequence: from - 1, reason: `commit ${from - 1} is missing or not chained` };
  }
  let next = from;
  while (next <= head.sequence) {
    const rows = await stores.chain.commits(workspaceId, next, head.sequence, batchSize);
    if (rows.length === 0) return { intact: false, sequence: next, reason: `commit ${next} is missing` };
    const inputs = await stores.chain.digestInputs(workspaceId, rows);
    const walked = walkChain(
      previous,
      next,
      inputs.map((input, i) => ({ input, chainHash: rows[i]?.chainHash ?? null })),
    );
    if ('broken' in walked) return { intact: false, ...walked.broken };
    previous = walked.head;
    next = walked.sequence + 1;
    options.onProgress?.(walked.sequence, head.sequence);
  }
  if (head.chainHash !== previous) {
    return {
      intact: false,
      sequence: head.sequence,
      reason: `the head's chain hash differs from commit ${head.sequence}'s`,
    };
  }
  return { intact: true, sequence: head.sequence, chainHash: previous };
}

/** A `commit` line of an export (`svc export`), as `verifyExportLines` reads it. */
export interface ExportedCommit {
  type: 'commit';
  sequence: number;
  chain_hash: string | null;
  digest_input: CommitDigestInput;
}

/** Export lines that carry a text, and the record field that holds its hash. */
const TEXT_FIELDS: Readonly<Record<string, { field: string; hash: string }>> = {
  revision: { field: 'text', hash: 'text_sha256' },
  evidence: { field: 'excerpt', hash: 'excerpt_sha256' },
};

/**
 * Verify an export offline (`svc ledger verify --file`): its `commit` lines must chain from
 * genesis without a gap, and every text an exported revision or evidence line carries must hash
 * to what its commit recorded. Lines come in file order.
 */
export function verifyExportLines(lines: Iterable<Record<string, unknown>>): ChainVerdict {
  const commits: { input: CommitDigestInput; chainHash: string | null }[] = [];
  const texts: { sequence: number; id: string; field: string; sha256: string }[] = [];
  for (const line of lines) {
    if (line.type === 'commit') {
      const commit = line as unknown as ExportedCommit;
      commits.push({ input: commit.digest_input, chainHash: commit.chain_hash });
    } else {
      // The texts a file carries must hash to what their commits recorded.
      const text = TEXT_FIELDS[line.type as string];
      const value = text ? line[text.field] : undefined;
      if (text && typeof value === 'string') {
        texts.push({
          sequence: line.sequence as number,
          id: line.id as string,
          field: text.hash,
          sha256: sha256Hex(value),
        });
      }
    }
  }
  if (commits.length === 0) return { intact: false, sequence: 0, reason: 'the file holds no commit lines' };
  const walked = walkChain(GENESIS_CHAIN_HASH, 1, commits);
  const bySequence = new Map(commits.map((c) => [c.input.sequence, c.input]));
  let broken: ChainBreak | null = 'broken' in walked ? walked.broken : null;
  for (const text of texts) {
    const record = bySequence.get(text.sequence)?.records.find((r) => r.id === text.id);
    if (record?.[text.field] !== text.sha256 && (broken === null || text.sequence < broken.sequence)) {
      broken = { sequence: text.sequence, reason: `the text of ${text.id} does not match commit ${text.sequence}` };
    }
  }
  if (broken) return { intact: false, ...broken };
  const reached = walked as { head: string; sequence: number };
  return { intact: true, sequence: reached.sequence, chainHash: reached.head };
}

/** Chain hashes from `previous` over the given digest inputs (the migration's arithmetic). */
export function chainOver(previous: string, inputs: readonly CommitDigestInput[]): string[] {
  const hashes: string[] = [];
  let hash = previous;
  for (const input of inputs) {
    hash = nextChainHash(hash, commitDigest(input));
    hashes.push(hash);
  }
  return hashes;
}
