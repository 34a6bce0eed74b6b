import { once } from 'node:events';
import fs from 'node:fs';
import { finished } from 'node:stream/promises';
import { type ExportPlan, planExport } from '@tms/domain';
import type { Ledger } from '@tms/ledger';
import { progressBar } from './progress';

/** Commits read per page: each page is at most six statements and a bounded set of rows. */
export const EXPORT_BATCH = 500;
/** Without a terminal, a plain progress line at most this often. */
const PLAIN_PROGRESS_MS = 2000;

export interface ExportArgs {
  workspace: string;
  namespace: string | null;
  output: string | null;
}

/** Rows written so far against the head, redrawn on a terminal and printed now and then otherwise. */
class ExportProgress {
  private readonly started = performance.now();
  private lastPlain = this.started;
  rows = 0;
  sequence = 0;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly head: number,
  ) {}

  private line(): string {
    const seconds = (performance.now() - this.started) / 1000;
    const rate = seconds > 0 ? Math.round(this.rows / seconds) : 0;
    return `${progressBar(this.sequence, this.head)}, ${this.rows} rows, ${rate} rows/s`;
  }

  update(rows: number, sequence: number): void {
    this.rows += rows;
    this.sequence = sequence;
    if (this.stream.isTTY) {
      this.stream.write(`\r${this.line()}`);
      return;
    }
    const now = performance.now();
    if (now - this.lastPlain >= PLAIN_PROGRESS_MS) {
      this.stream.write(`${this.line()}\n`);
      this.lastPlain = now;
    }
  }

  finish(): number {
    if (this.stream.isTTY) this.stream.write(`\r${this.line()}\n`);
    return (performance.now() - this.started) / 1000;
  }
}

/** Write a chunk, waiting for the stream to drain when its buffer is full (flat memory). */
async function write(out: NodeJS.WritableStream, chunk: string): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

async function writeLines(plan: ExportPlan, out: NodeJS.WritableStream, progress: ExportProgress): Promise<void> {
  // A reader that goes away (`svc export | head`) fails the export with one line, not a crash.
  let failure: Error | null = null;
  const onError = (error: Error) => {
    failure ??= error;
  };
  out.on('error', onError);
  try {
    let after = 0;
    for (;;) {
      if (failure) throw new Error(`cannot write the export: ${(failure as Error).message}`);
      const { lines, lastSequence } = await plan.page(after, EXPORT_BATCH);
      if (lastSequence === null) return;
      let chunk = '';
      for (const line of lines) chunk += `${JSON.stringify(line)}\n`;
      if (chunk !== '') await write(out, chunk);
      // Rows are the resources; the commit lines carrying the chain are not counted among them.
      progress.update(lines.filter((line) => line.type !== 'commit').length, lastSequence);
      after = lastSequence;
    }
  } finally {
    out.off('error', onError);
  }
}

/**
 * `svc export`: the workspace's ledger as NDJSON in sequence order, to stdout or to a file. A
 * file is written beside its name and renamed into place only when complete, so a failed export
 * never leaves a file that looks whole.
 */
export async function exportWorkspace(
  ledger: Ledger,
  args: ExportArgs,
  stdout: NodeJS.WritableStream = process.stdout,
  stderr: NodeJS.WriteStream = process.stderr,
): Promise<string> {
  return ledger.snapshot(async (stores) => {
    const plan = await planExport(stores, args.workspace, args.namespace);
    const head = plan.scope.headSequence;
    const target = args.output ?? 'stdout';
    stderr.write(
      `exporting workspace ${args.workspace}${args.namespace ? ` namespace ${args.namespace}` : ''} up to sequence ${head} to ${target}\n`,
    );
    const progress = new ExportProgress(stderr, head);
    if (args.output === null) {
      await writeLines(plan, stdout, progress);
    } else {
      const partial = `${args.output}.partial`;
      const file = fs.createWriteStream(partial);
      try {
        await Promise.race([once(file, 'open'), once(file, 'error').then(([error]) => Promise.reject(error))]);
        await writeLines(plan, file, progress);
        file.end();
        await finished(file);
        fs.renameSync(partial, args.output);
      } catch (error) {
        file.destroy();
        fs.rmSync(partial, { force: true });
        throw error;
      }
    }
    const seconds = progress.finish();
    return `exported ${progress.rows} rows of workspace ${args.workspace} (commits up to ${head}) to ${target} in ${seconds.toFixed(1)} s`;
  });
}
