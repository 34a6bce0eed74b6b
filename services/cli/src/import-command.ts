import crypto from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import { finished } from 'node:stream/promises';
import {
  DomainError,
  type ImportLine,
  type ImportOutcome,
  importLineOf,
  parseImportLine,
  parseStrictJson,
} from '@tms/domain';
import type { CliEnv } from './env';
import { MEM0_ROOT, type Mem0Line, mem0Line, mem0Records } from './mem0';
import { type AdminOutput, operatorSubject, type RunAsOperator, withOperator } from './operator';
import { progressBar } from './progress';

/** Lines handed to the domain at once; two such chunks are in flight, so reading overlaps committing. */
const CHUNK_LINES = 1024;
/** Chunks in flight at once. */
const CHUNKS_IN_FLIGHT = 2;
/** A longer line is rejected unread (four times the largest request body). */
export const MAX_LINE_BYTES = 1_048_576;
/** Without a terminal, a plain progress line at most this often. */
const PLAIN_PROGRESS_MS = 2000;
/** Without `--reject`, rejected lines are described on stderr up to this many. */
const REJECTS_ON_STDERR = 100;
/** Exit code of an import that ran to its end but rejected lines (1: it failed, 2: a wrong argument). */
export const EXIT_REJECTED = 3;

export interface ImportArgs {
  workspace: string;
  /** A file, or `-` for stdin. */
  file: string;
  /** Where rejected lines go (NDJSON); null: described on stderr. */
  reject: string | null;
  /** `ndjson`: import lines; `mem0`: a Mem0 `get_all` output. */
  from: 'ndjson' | 'mem0';
}

/** Where the command reports while it runs. */
export interface ImportIo {
  stdin: NodeJS.ReadableStream;
  stderr(text: string): void;
  stderrIsTerminal: boolean;
}

/** One input line (or Mem0 record) on its way: where it was, what it said, and its parse. */
interface Item {
  number: number;
  /** The line as read (for the reject file; made only for a line refused). */
  original(): string;
  /** Bytes of input consumed up to the end of this item (progress over a file). */
  offset: number;
  parse(): ImportLine;
}

export interface ImportTotals {
  workspace: string;
  lines: number;
  committed: number;
  replayed: number;
  rejected: number;
  seconds: number;
  lines_per_second: number;
}

/** Counts redrawn on a terminal and printed now and then otherwise, as `svc export` does. */
class ImportProgress {
  private readonly started = performance.now();
  private lastPlain = this.started;
  lines = 0;
  committed = 0;
  replayed = 0;
  rejected = 0;
  offset = 0;

  constructor(
    private readonly io: ImportIo,
    private readonly size: number | null,
  ) {}

  get seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  get done(): number {
    return this.committed + this.replayed + this.rejected;
  }

  private line(): string {
    const rate = this.seconds > 0 ? Math.round(this.done / this.seconds) : 0;
    const bar = this.size === null ? '' : `${progressBar(this.offset, this.size, 30, 'bytes')}, `;
    return `${bar}${this.lines} read, ${this.committed} committed, ${this.replayed} replayed, ${this.rejected} rejected, ${rate} lines/s`;
  }

  update(): void {
    if (this.io.stderrIsTerminal) {
      this.io.stderr(`\r${this.line()}`);
      return;
    }
    const now = performance.now();
    if (now - this.lastPlain >= PLAIN_PROGRESS_MS) {
      this.io.stderr(`${this.line()}\n`);
      this.lastPlain = now;
    }
  }

  finish(): void {
    if (this.io.stderrIsTerminal) this.io.stderr(`\r${this.line()}\n`);
  }
}

/** Rejected lines: NDJSON in a file (line number, the service's error code and detail, the line), or a note on stderr. */
class Rejects {
  private readonly file: fs.WriteStream | null;
  private described = 0;

  constructor(
    private readonly path: string | null,
    private readonly io: ImportIo,
  ) {
    this.file = path === null ? null : fs.createWriteStream(path);
  }

  async opened(): Promise<void> {
    if (!this.file) return;
    await Promise.race([once(this.file, 'open'), once(this.file, 'error').then(([error]) => Promise.reject(error))]);
  }

  async add(item: Item, code: string, detail: string | null): Promise<void> {
    if (this.file) {
      const record = { line: item.number, code, detail, original: item.original() };
      if (!this.file.write(`${JSON.stringify(record)}\n`)) await once(this.file, 'drain');
      return;
    }
    this.described += 1;
    if (this.described <= REJECTS_ON_STDERR) {
      this.io.stderr(`line ${item.number}: ${code}${detail ? `: ${detail}` : ''}\n`);
    }
  }

  async close(): Promise<string> {
    if (this.file) {
      this.file.end();
      await finished(this.file);
      return ` (see ${this.path})`;
    }
    const left = this.described - REJECTS_ON_STDERR;
    return left > 0 ? ` (${left} more not shown; --reject FILE keeps them all)` : '';
  }
}

/** The lines of a byte stream (split at LF; a CR before it is JSON whitespace), bounded in length. */
async function* byteLines(
  input: AsyncIterable<Buffer | string>,
): AsyncGenerator<{ bytes: Buffer | null; offset: number }> {
  let parts: Buffer[] = [];
  let length = 0;
  let tooLong = false;
  let offset = 0;
  for await (const read of input) {
    const chunk = typeof read === 'string' ? Buffer.from(read) : read;
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      if (!tooLong) {
        if (length + piece.length > MAX_LINE_BYTES) {
          tooLong = true;
          parts = [];
        } else if (piece.length > 0) {
          parts.push(piece);
          length += piece.length;
        }
      }
      if (end === -1) {
        offset += chunk.length - start;
        break;
      }
      offset += end + 1 - start;
      yield { bytes: tooLong ? null : Buffer.concat(parts, length), offset };
      parts = [];
      length = 0;
      tooLong = false;
      start = end + 1;
    }
  }
  if (tooLong || length > 0) yield { bytes: tooLong ? null : Buffer.concat(parts, length), offset };
}

const isBlank = (bytes: Buffer) => bytes.every((b) => b === 0x20 || b === 0x09 || b === 0x0d);

/** The import lines of an NDJSON stream; blank lines are skipped (but counted in line numbers). */
async function* ndjsonItems(input: AsyncIterable<Buffer | string>, workspace: string): AsyncGenerator<Item> {
  let number = 0;
  for await (const { bytes, offset } of byteLines(input)) {
    number += 1;
    if (bytes === null) {
      yield {
        number,
        original: () => '',
        offset,
        parse: () => {
          throw new DomainError('budget_exceeded', `line: longer than ${MAX_LINE_BYTES} bytes`);
        },
      };
      continue;
    }
    if (isBlank(bytes)) continue;
    const line = bytes;
    yield {
      number,
      original: () => line.toString('utf8').replace(/\r$/, ''),
      offset,
      parse: () => parseImportLine(line, workspace),
    };
  }
}

async function readAll(input: AsyncIterable<Buffer | string>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of input) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(parts);
}

/**
 * The import lines of a Mem0 `get_all` output (a JSON document read whole): each record's owner
 * namespace is found by its path under `mem0/`, or created (as the operator, under a key derived
 * from the owner, so that a rerun finds or replays it). A record is numbered by its place in the list.
 */
async function mem0Items(
  input: AsyncIterable<Buffer | string>,
  workspace: string,
  run: RunAsOperator,
): Promise<Item[]> {
  const bytes = await readAll(input);
  const records = mem0Records(parseStrictJson(bytes.toString('utf8'), 'file'));
  const converted: Mem0Line[] = records.map(mem0Line);
  const owners = new Set(converted.flatMap((c) => (c.ok ? [c.owner] : [])));
  const namespaces = await mem0Namespaces(run, workspace, owners);
  return converted.map((c, i): Item => {
    const item = { number: i + 1, original: () => JSON.stringify(records[i]), offset: bytes.length };
    if (!c.ok) {
      return {
        ...item,
        parse: () => {
          throw new DomainError('invalid_input', c.detail);
        },
      };
    }
    const namespace = namespaces.get(c.owner) as string | DomainError;
    return {
      ...item,
      parse: () => {
        if (namespace instanceof DomainError) throw namespace;
        return importLineOf({ namespace_id: namespace, ...c.line }, workspace);
      },
    };
  });
}

/** Every namespace of the workspace by its display path (`a/b`), first one found per path. */
async function namespacesByPath(run: RunAsOperator, workspace: string): Promise<Map<string, string>> {
  const byPath = new Map<string, string>();
  let cursor: string | undefined;
  do {
    const query: Record<string, unknown> = { limit: 100 };
    if (cursor) query.cursor = cursor;
    const { answer } = await run('namespaces.list', workspace, { query });
    for (const ns of answer.namespaces) {
      const path = JSON.stringify(ns.display_path);
      if (!byPath.has(path)) byPath.set(path, ns.id);
    }
    cursor = answer.next_cursor ?? undefined;
  } while (cursor);
  return byPath;
}

/** The namespace of each owner (`mem0/<owner>`), created on demand; an owner whose namespace cannot be made gets the error. */
async function mem0Namespaces(
  run: RunAsOperator,
  workspace: string,
  owners: ReadonlySet<string>,
): Promise<Map<string, string | DomainError>> {
  const byPath = await namespacesByPath(run, workspace);
  const ensure = async (parent: string | null, path: string[]): Promise<string> => {
    const found = byPath.get(JSON.stringify(path));
    if (found) return found;
    const name = path.at(-1) as string;
    const key = `mem0-ns-${crypto.createHash('sha256').update(JSON.stringify(path)).digest('hex')}`;
    const { answer } = await run('namespaces.create', workspace, { body: { parent_id: parent, name } }, key);
    byPath.set(JSON.stringify(path), answer.namespace.id);
    return answer.namespace.id;
  };
  const result = new Map<string, string | DomainError>();
  if (owners.size === 0) return result;
  const root = await ensure(null, [MEM0_ROOT]);
  for (const owner of owners) {
    try {
      result.set(owner, await ensure(root, [MEM0_ROOT, owner]));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      result.set(owner, error);
    }
  }
  return result;
}

/**
 * `svc import` (docs/import.md): lines into one workspace as the operator, committed in batches
 * through the domain's rules. Progress on stderr; stdout is one JSON line of totals. Rejected
 * lines go to `--reject` (or are described on stderr) and exit with `EXIT_REJECTED`.
 */
export async function importFile(env: CliEnv, args: ImportArgs, io: ImportIo): Promise<AdminOutput> {
  const input: AsyncIterable<Buffer | string> =
    args.file === '-' ? (io.stdin as AsyncIterable<Buffer | string>) : fs.createReadStream(args.file);
  const size = args.file === '-' ? null : fs.statSync(args.file).size;
  return withOperator(env, async (run, ledger, domain) => {
    if (!(await ledger.stores.directory.getWorkspace(args.workspace))) {
      throw new Error(`no workspace ${args.workspace}`);
    }
    const rejects = new Rejects(args.reject, io);
    await rejects.opened();
    const progress = new ImportProgress(io, size);
    io.stderr(`importing ${args.file === '-' ? 'stdin' : args.file} into workspace ${args.workspace}\n`);
    const items: AsyncIterable<Item> | Item[] =
      args.from === 'mem0' ? await mem0Items(input, args.workspace, run) : ndjsonItems(input, args.workspace);
    const subject = operatorSubject(env);

    const settle = async (chunk: { item: Item; line: ImportLine }[], outcomes: ImportOutcome[]) => {
      for (let i = 0; i < chunk.length; i += 1) {
        const { item } = chunk[i] as (typeof chunk)[number];
        const outcome = outcomes[i] as ImportOutcome;
        if (outcome.status === 'rejected') {
          progress.rejected += 1;
          await rejects.add(item, outcome.code, outcome.detail);
        } else progress[outcome.status] += 1;
        progress.offset = Math.max(progress.offset, item.offset);
      }
      progress.update();
    };
    const inFlight: Promise<void>[] = [];
    const submit = (chunk: { item: Item; line: ImportLine }[]) => {
      const lines = chunk.map((c) => c.line);
      const settled = domain
        .importLines(args.workspace, lines, { operatorSubject: subject })
        .then((outcomes) => settle(chunk, outcomes));
      // Awaited in turn below; a chunk failing while an earlier one is awaited is not unhandled.
      settled.catch(() => {});
      inFlight.push(settled);
    };
    let chunk: { item: Item; line: ImportLine }[] = [];
    try {
      for await (const item of items) {
        progress.lines += 1;
        try {
          chunk.push({ item, line: item.parse() });
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          progress.rejected += 1;
          await rejects.add(item, error.code, error.detail ?? null);
        }
        if (chunk.length >= CHUNK_LINES) {
          submit(chunk);
          chunk = [];
          if (inFlight.length >= CHUNKS_IN_FLIGHT) await inFlight.shift();
        }
      }
      if (chunk.length > 0) submit(chunk);
      while (inFlight.length > 0) await inFlight.shift();
    } finally {
      // A failed run still waits for what it sent, so that nothing is committed after it reports.
      await Promise.allSettled(inFlight);
      progress.finish();
    }
    const seeRejects = await rejects.close();
    const seconds = progress.seconds;
    const totals: ImportTotals = {
      workspace: args.workspace,
      lines: progress.lines,
      committed: progress.committed,
      replayed: progress.replayed,
      rejected: progress.rejected,
      seconds: Math.round(seconds * 1000) / 1000,
      lines_per_second: seconds > 0 ? Math.round(progress.done / seconds) : 0,
    };
    const note = `imported ${totals.lines} lines into ${args.workspace} in ${seconds.toFixed(1)} s (${totals.lines_per_second} lines/s): ${totals.committed} committed, ${totals.replayed} replayed, ${totals.rejected} rejected${totals.rejected > 0 ? seeRejects : ''}`;
    return {
      stdout: JSON.stringify(totals),
      note,
      ...(totals.rejected > 0
        ? { failure: `${totals.rejected} of ${totals.lines} lines rejected`, exitCode: EXIT_REJECTED }
        : {}),
    };
  });
}
