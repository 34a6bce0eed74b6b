import fs from 'node:fs';
import readline from 'node:readline';
import {
  type ChainVerdict,
  type CommitDigestInput,
  type ExportedCommit,
  type Ledger,
  verifyExportLines,
  verifyWorkspaceChain,
} from '@tms/ledger';
import { progressBar } from './progress';

/** Why verification ended without an intact chain: the CLI's one line, exit code 1. */
export class ChainBroken extends Error {}

function verdictLine(where: string, verdict: ChainVerdict): string {
  if (!verdict.intact) throw new ChainBroken(`${where} breaks at sequence ${verdict.sequence}: ${verdict.reason}`);
  return `${where} is intact up to sequence ${verdict.sequence}, chain_hash ${verdict.chainHash}`;
}

/**
 * `svc ledger verify --workspace W [--from N] [--file EXPORT]`: recompute the chain from the rows,
 * progress on stderr. An export taken before (`--file`) names every field a broken commit changed.
 * On a terminal each phase redraws one line; elsewhere each chain batch is a line of its own, and
 * the record-end pass one line once it is done.
 */
export async function verifyLedger(
  ledger: Ledger,
  args: { workspace: string; from: number; reference?: string; batchSize?: number },
  stderr: { write(text: string): void; isTTY: boolean } = process.stderr,
): Promise<string> {
  const recorded = args.reference === undefined ? undefined : await recordedDigests(args.reference);
  let drawn = false;
  let recordEnds: number | null = null;
  const line = (text: string) => (stderr.isTTY ? `\r${text}` : `${text}\n`);
  const verdict = await ledger.snapshot((stores) =>
    verifyWorkspaceChain(stores, args.workspace, {
      from: args.from,
      batchSize: args.batchSize,
      recorded: recorded && ((sequence) => recorded.get(sequence)),
      onProgress: (sequence, head) => {
        stderr.write(line(progressBar(sequence, head)));
        drawn = true;
      },
      onRecordEnds: (revisions) => {
        if (stderr.isTTY) {
          // The record-end pass draws its own line below the chain's.
          if (recordEnds === null && drawn) stderr.write('\n');
          stderr.write(line(`record ends: ${revisions} revisions checked`));
          drawn = true;
        }
        recordEnds = revisions;
      },
    }),
  );
  if (stderr.isTTY && drawn) stderr.write('\n');
  if (!stderr.isTTY && recordEnds !== null) stderr.write(line(`record ends: ${recordEnds} revisions checked`));
  return verdictLine(`ledger of workspace ${args.workspace}`, verdict);
}

/** The digest input of every `commit` line of an export, by sequence. */
async function recordedDigests(file: string): Promise<Map<number, CommitDigestInput>> {
  const digests = new Map<number, CommitDigestInput>();
  for await (const line of exportLines(file)) {
    if (line.type === 'commit') {
      const commit = line as unknown as ExportedCommit;
      digests.set(commit.sequence, commit.digest_input);
    }
  }
  if (digests.size === 0) throw new Error(`${file} holds no commit lines (a whole workspace's export has them)`);
  return digests;
}

async function* exportLines(file: string): AsyncGenerator<Record<string, unknown>> {
  const input = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of input) {
    if (line.trim() !== '') yield JSON.parse(line) as Record<string, unknown>;
  }
}

/** `svc ledger verify --file F`: an export (`svc export`) checked offline with the same arithmetic. */
export async function verifyExportFile(file: string): Promise<string> {
  const lines: Record<string, unknown>[] = [];
  for await (const line of exportLines(file)) lines.push(line);
  return verdictLine(`export ${file}`, verifyExportLines(lines));
}
