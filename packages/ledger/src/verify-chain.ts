import {
  type ChainBreak,
  type CommitDigestInput,
  commitDigest,
  GENESIS_CHAIN_HASH,
  nextChainHash,
  sha256Hex,
  walkChain,
} from './chain';
import { type ChangedField, explainBrokenCommit } from './chain-diagnosis';
import type { RecordInterval } from './storage/chain-storage';
import type { Stores } from './stores';

/** Commits recomputed per batch: each batch is one read of commits and one per kind of row. */
export const VERIFY_BATCH = 500;

export type ChainVerdict =
  | { intact: true; sequence: number; chainHash: string }
  | {
      intact: false;
      sequence: number;
      reason: string;
      /** For a commit that no longer matches its chain hash: the records' fields found changed (none when unknown). */
      changed?: ChangedField[];
    };

/** Where a chain first disagrees with the rows, why, and (when known) what changed. */
type Break = ChainBreak & { changed?: ChangedField[] };

export interface VerifyOptions {
  /** First sequence to recompute; the chain hash stored at `from - 1` is taken as given. */
  from?: number;
  batchSize?: number;
  /** Called after each batch with the last sequence checked and the head's. */
  onProgress?: (sequence: number, head: number) => void;
  /** Called after each page of the record-end pass with the revisions checked so far. */
  onRecordEnds?: (revisions: number) => void;
  /**
   * An earlier copy of each commit's digest input (an export's `commit` lines), to name every
   * field a broken commit changed; trusted only where it chains to the stored hash.
   */
  recorded?: (sequence: number) => CommitDigestInput | undefined;
}

/**
 * Recompute a workspace's chain from its rows (`svc ledger verify`, docs/ledger-proofs.md), then
 * check every revision's record end against the commit that ended it: the first sequence whose
 * rows no longer match, or the head reached.
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
  let previous = await stores.commits.chainHashAt(workspaceId, from - 1);
  if (previous === null) {
    return { intact: false, sequence: from - 1, reason: `commit ${from - 1} is missing or not chained` };
  }
  const retractions: Retractions = new Map();
  let broken: Break | null = null;
  let next = from;
  while (next <= head.sequence) {
    const rows = await stores.chain.commits(workspaceId, next, head.sequence, batchSize);
    if (rows.length === 0) {
      broken = { sequence: next, reason: `commit ${next} is missing` };
      break;
    }
    const inputs = await stores.chain.digestInputs(workspaceId, rows);
    const walked = walkChain(
      previous,
      next,
      inputs.map((input, i) => ({ input, chainHash: rows[i]?.chainHash ?? null })),
    );
    const reached = 'broken' in walked ? walked.broken.sequence - 1 : walked.sequence;
    for (const input of inputs) if (input.sequence <= reached) noteRetraction(input, retractions);
    if ('broken' in walked) {
      const at = inputs.findIndex((input) => input.sequence === walked.broken.sequence);
      const stored = rows[at]?.chainHash;
      const before = at === 0 ? previous : rows[at - 1]?.chainHash;
      const input = inputs[at];
      // A commit whose rows give another hash (not a missing or unchained one): name what changed.
      broken =
        input && stored && before && nextChainHash(before, commitDigest(input)) !== stored
          ? {
              sequence: input.sequence,
              ...explainBrokenCommit(before, input, stored, options.recorded?.(input.sequence)),
            }
          : walked.broken;
      break;
    }
    previous = walked.head;
    next = walked.sequence + 1;
    options.onProgress?.(walked.sequence, head.sequence);
  }
  const badEnd = await firstBadRecordEnd(stores, workspaceId, retractions, {
    from,
    allRetractionsSeen: broken === null,
    pageSize: batchSize,
    onPage: options.onRecordEnds,
  });
  const first = badEnd !== null && (broken === null || badEnd.sequence < broken.sequence) ? badEnd : broken;
  if (first) return { intact: false, ...first };
  return { intact: true, sequence: head.sequence, chainHash: previous };
}

/** The retraction commits seen by revision id: when and at which sequence each ended its revision. */
type Retractions = Map<string, { sequence: number; recordedAt: number }>;

/** A retraction (`memories.forget` in mode retract) names the memory and the revision it ends. */
function noteRetraction(input: CommitDigestInput, into: Retractions): void {
  if (input.operation !== 'memories.forget') return;
  for (const record of input.records) {
    if (record.kind === 'revision') into.set(record.id, { sequence: input.sequence, recordedAt: input.recorded_at });
  }
}

/**
 * A revision's `recorded_until` is set by the later commit that ends it, so no digest holds it;
 * it is checked against that commit instead. A revision followed by a next generation ends when
 * that generation was recorded (a correction or attestation); the last one is open, or ends when
 * the retraction that names it was recorded. The earliest mismatch, named by the commit that
 * ended (or should have ended) the revision; none before `from`. Without every retraction seen
 * (the walk broke first), a last revision's end is not judged.
 */
async function firstBadRecordEnd(
  stores: Stores,
  workspaceId: string,
  retractions: Retractions,
  options: {
    from: number;
    allRetractionsSeen: boolean;
    pageSize: number;
    onPage?: ((revisions: number) => void) | undefined;
  },
): Promise<Break | null> {
  let first: Break | null = null;
  /** A revision whose `recorded_until` is `found` where the commit that ends it says `expected`. */
  const found = (sequence: number, revision: RecordInterval, expected: number | null, reason: string) => {
    if (sequence >= options.from && (first === null || sequence < first.sequence)) {
      const change = { kind: 'revision', id: revision.id, field: 'recorded_until', found: revision.recordedUntil };
      first = { sequence, reason, changed: [{ ...change, recorded: expected }] };
    }
  };
  const checkLast = (last: RecordInterval) => {
    const retraction = retractions.get(last.id);
    if (retraction) {
      if (last.recordedUntil !== retraction.recordedAt) {
        found(
          retraction.sequence,
          last,
          retraction.recordedAt,
          `revision ${last.id} does not end when commit ${retraction.sequence} retracted it (recorded_until is ${last.recordedUntil}, the retraction was recorded at ${retraction.recordedAt})`,
        );
      }
    } else if (last.recordedUntil !== null && options.allRetractionsSeen) {
      found(
        last.commitSequence,
        last,
        null,
        `revision ${last.id} has a recorded_until (${last.recordedUntil}) though no commit ended it`,
      );
    }
  };
  let previous: RecordInterval | null = null;
  let checked = 0;
  for (;;) {
    const page = await stores.chain.recordIntervals(workspaceId, previous, options.pageSize);
    checked += page.length;
    for (const revision of page) {
      if (previous && previous.memoryId === revision.memoryId) {
        if (revision.generation === previous.generation + 1 && previous.recordedUntil !== revision.recordedAt) {
          found(
            revision.commitSequence,
            previous,
            revision.recordedAt,
            `revision ${previous.id} does not end when generation ${revision.generation} was recorded (recorded_until is ${previous.recordedUntil}, generation ${revision.generation} was recorded at ${revision.recordedAt})`,
          );
        }
      } else if (previous) {
        checkLast(previous);
      }
      previous = revision;
    }
    // A last page found empty (the one before was full) has checked nothing more: not reported again.
    if (page.length > 0 || checked === 0) options.onPage?.(checked);
    if (page.length < options.pageSize) break;
  }
  if (previous) checkLast(previous);
  return first;
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
  memory: { field: 'key', hash: 'key_sha256' },
};

/**
 * Verify an export offline (`svc ledger verify --file`): its `commit` lines must chain from
 * genesis without a gap, and every text an exported revision, evidence or memory line carries (a
 * memory's is its key) must hash to what its commit recorded. Lines come in file order.
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
  let broken: Break | null = 'broken' in walked ? walked.broken : null;
  if (broken) {
    const at = broken.sequence - 1;
    const [before, commit] = [commits[at - 1]?.chainHash ?? (at === 0 ? GENESIS_CHAIN_HASH : null), commits[at]];
    if (commit?.chainHash && before && nextChainHash(before, commitDigest(commit.input)) !== commit.chainHash) {
      broken = { sequence: broken.sequence, ...explainBrokenCommit(before, commit.input, commit.chainHash) };
    }
  }
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
