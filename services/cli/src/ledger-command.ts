import fs from 'node:fs';
import readline from 'node:readline';
import { type ChainVerdict, type Ledger, verifyExportLines, verifyWorkspaceChain } from '@tms/ledger';
import { progressBar } from './progress';

/** Why verification ended without an intact chain: the CLI's one line, exit code 1. */
export class ChainBroken extends Error {}

function verdictLine(where: string, verdict: ChainVerdict): string {
  if (!verdict.intact) throw new ChainBroken(`${where} breaks at sequence ${verdict.sequence}: ${verdict.reason}`);
  return `${where} is intact up to sequence ${verdict.sequence}, chain_hash ${verdict.chainHash}`;
}

/** `svc ledger verify --workspace W [--from N]`: recompute the chain from the rows, progress on stderr. */
export async function verifyLedger(
  ledger: Ledger,
  args: { workspace: string; from: number },
  stderr: NodeJS.WriteStream = process.stderr,
): Promise<string> {
  // On a terminal each phase redraws one line; elsewhere every step is a line of its own.
  const show = (line: string) => stderr.write(stderr.isTTY ? `\r${line}` : `${line}\n`);
  let phase: 'chain' | 'record ends' = 'chain';
  const verdict = await ledger.snapshot((stores) =>
    verifyWorkspaceChain(stores, args.workspace, {
      from: args.from,
      onProgress: (sequence, head) => show(progressBar(sequence, head)),
      onRecordEnds: (revisions) => {
        if (phase === 'chain' && stderr.isTTY) stderr.write('\n');
        phase = 'record ends';
        show(`record ends: ${revisions} revisions checked`);
      },
    }),
  );
  if (stderr.isTTY) stderr.write('\n');
  return verdictLine(`ledger of workspace ${args.workspace}`, verdict);
}

/** `svc ledger verify --file F`: an export (`svc export`) checked offline with the same arithmetic. */
export async function verifyExportFile(file: string): Promise<string> {
  const lines: Record<string, unknown>[] = [];
  const input = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of input) {
    if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
  }
  return verdictLine(`export ${file}`, verifyExportLines(lines));
}
