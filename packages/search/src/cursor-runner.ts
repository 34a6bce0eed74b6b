import { type Attributes, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { CommitRow, Database, Ledger, Stores } from '@tms/ledger';
import type { CursorFence } from './provider';

export type ArmName = 'lexical' | 'semantic';

/** What every batch report holds; each arm adds its own counts. */
export interface BatchCounts {
  workspaceId: string;
  commits: number;
  indexedSequence: number;
}

/** The memories a batch of commits touched. */
export function memoriesOf(commits: readonly CommitRow[]): string[] {
  return [...new Set(commits.flatMap((c) => c.subjectIds.filter((id) => id.startsWith('mem_'))))];
}

/** The fences of one batch: `partial` stores without moving the cursor, `final` moves it. */
export interface BatchFences {
  partial: CursorFence;
  final: CursorFence;
}

/**
 * One arm of the index (lexical, semantic) as a plug-in of the cursor runner. The runner owns
 * the cursor: it drains the workspaces that are behind, traces each batch, claims, plans in one
 * short transaction, and stores and advances through the fences; the arm only says what a batch
 * reads and what work it does.
 */
export interface IndexingArm<Plan, Report extends BatchCounts> {
  readonly name: ArmName;
  /** The span of one batch ('index batch', 'embed batch'). */
  readonly spanName: string;
  spanAttributes(workspaceId: string): Attributes;
  /** Its cursor in `index_state` (rejects while it cannot be named: an embedder without a model yet). */
  cursor(): Promise<string>;
  /** Before each pass over the workspaces behind: rejects while the arm's index cannot take batches (the run then retries). */
  beforePass?(): Promise<void>;
  /** Inside the plan's short transaction: what these commits need, read from committed rows. */
  plan(stores: Stores, workspaceId: string, commits: readonly CommitRow[]): Promise<Plan>;
  /** Outside any transaction: the work, stored through the fences. Returns the arm's own counts. */
  work(workspaceId: string, plan: Plan, fences: BatchFences): Promise<Omit<Report, keyof BatchCounts>>;
  /** Span attributes of a stored batch beyond its commits. */
  describe?(span: Span, report: Report): void;
}

export interface CursorRunnerOptions<Report> {
  /** Commits per batch. */
  batchSize: number;
  /**
   * Claim each workspace (per arm) with a transaction-scoped advisory lock while a batch is
   * planned and while it is stored. Off for the embedded PGlite ledger, where one process owns the database.
   */
  exclusive: boolean;
  /** A batch whose advance has committed. */
  onBatch?: ((report: Report) => void) | undefined;
  /** Called inside the store transaction, after the batch's writes and before the advance (tests fail here). */
  beforeAdvance?: ((workspaceId: string, sequence: number) => Promise<void> | void) | undefined;
}

/** How long a store waits, outside any transaction, for a claim another indexer holds before dropping the batch. */
const STORE_CLAIM_WAIT_MS = 2000;
const STORE_CLAIM_POLL_MS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How the arms of one indexer are paced: woken by NOTIFY on every commit, polling as the fallback, stopped once. */
export class Wakeups {
  private readonly waiting = new Set<() => void>();
  private halted = false;

  get stopped(): boolean {
    return this.halted;
  }

  /** A commit was recorded: every arm that is not backing off looks again. */
  wake(): void {
    for (const wake of [...this.waiting]) wake();
  }

  stop(): void {
    this.halted = true;
    this.wake();
  }

  /**
   * Wait `ms`, or until a commit wakes it; while `failing` (or when commits are none of its
   * business, `byCommits` false), commits do not cut the wait short (stop does).
   */
  wait(ms: number, failing: boolean, byCommits = true): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        if ((failing || !byCommits) && !this.halted) return;
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiting.delete(wake);
        resolve();
      }, ms);
      this.waiting.add(wake);
    });
  }
}

export interface RunControl {
  wakeups: Wakeups;
  /** The wait between passes, cut short by a commit unless `byCommits` is false. */
  pollMs: number;
  byCommits?: boolean;
  /** Before a retry after a failure (the provider's `prepare`: an index deleted meanwhile is created again). */
  beforeRetry(): Promise<void>;
  onError?: ((error: unknown, attempt: number, arm: ArmName) => void) | undefined;
}

interface Planned<Plan> {
  from: number;
  last: number;
  commits: number;
  plan: Plan;
}

/**
 * The one cursor runner both arms of the indexer run on (decisions §11). A batch:
 * 1. is planned in one short transaction holding the workspace's claim for the arm: the cursor,
 *    the commits after it, and what the arm reads for them;
 * 2. is worked on with no transaction open (the lexical arm analyses text, the semantic arm embeds);
 * 3. is stored, and the cursor advanced, through a fence: one short transaction that takes the
 *    claim again and first checks that the cursor has not moved since step 1. If another indexer
 *    stored the same commits meanwhile, this batch writes nothing and reports nothing.
 * Applying the same commits twice is harmless in any case (documents and vectors are keyed by
 * revision id), and the check keeps a batch planned from older rows from landing after a newer one.
 */
export class CursorRunner<Plan, Report extends BatchCounts> {
  constructor(
    protected readonly ledger: Ledger,
    readonly arm: IndexingArm<Plan, Report>,
    private readonly options: CursorRunnerOptions<Report>,
  ) {}

  /** The arm's cursor in `index_state`. */
  cursor(): Promise<string> {
    return this.arm.cursor();
  }

  /** Index every workspace that is behind until all are caught up; returns commits indexed. */
  async catchUp(): Promise<number> {
    let total = 0;
    await this.arm.beforePass?.();
    for (const { workspaceId } of await this.ledger.stores.indexState.lag(await this.arm.cursor(), true)) {
      for (;;) {
        const indexed = await this.indexBatch(workspaceId);
        total += indexed;
        if (indexed === 0) break;
        // PGlite answers within the microtask queue: yield so requests in the same process run.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return total;
  }

  /**
   * One batch of one workspace; 0 when nothing was left, another indexer holds the workspace, or
   * another indexer stored the same commits first. A span per batch when tracing is on (the
   * no-op API otherwise), its statements as children; the tracer is asked each time, so it
   * follows a replaced tracer provider. The batch is reported (`onBatch`) only once its advance
   * has committed.
   */
  indexBatch(workspaceId: string): Promise<number> {
    return trace
      .getTracer('tms-indexer')
      .startActiveSpan(this.arm.spanName, { attributes: this.arm.spanAttributes(workspaceId) }, async (span) => {
        try {
          const report = await this.batch(workspaceId);
          span.setAttribute('tms.commits', report?.commits ?? 0);
          if (!report) return 0;
          this.arm.describe?.(span, report);
          this.options.onBatch?.(report);
          return report.commits;
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      });
  }

  /**
   * Run `pass` (by default `catchUp`) until stopped, retrying with exponential backoff (250 ms
   * doubling, at most 30 s) while the provider, the embedder or the database fails. A pass that
   * answers true has more to do at once (background work) and runs again without waiting.
   */
  async run(control: RunControl, pass: () => Promise<boolean | number> = () => this.catchUp()): Promise<void> {
    let attempt = 0;
    while (!control.wakeups.stopped) {
      let delay = control.pollMs;
      try {
        if (attempt > 0) await control.beforeRetry();
        const more = (await pass()) === true;
        attempt = 0;
        if (more) delay = 0;
      } catch (error) {
        attempt += 1;
        control.onError?.(error, attempt, this.arm.name);
        delay = Math.min(30_000, 250 * 2 ** Math.min(attempt, 7));
      }
      if (control.wakeups.stopped) break;
      if (delay === 0) await new Promise((resolve) => setImmediate(resolve));
      else await control.wakeups.wait(delay, attempt > 0, control.byCommits ?? true);
    }
  }

  private async batch(workspaceId: string): Promise<Report | null> {
    const cursor = await this.arm.cursor();
    const planned = await this.planned(workspaceId, cursor);
    if (!planned) return null;
    const fences = new Fences(
      (body) => this.fenced(workspaceId, cursor, planned.from, body),
      (stores) => this.advance(stores, workspaceId, cursor, planned.last),
    );
    const counts = await this.arm.work(workspaceId, planned.plan, fences);
    if (!fences.advanced) return null;
    return { ...counts, workspaceId, commits: planned.commits, indexedSequence: planned.last } as Report;
  }

  /** Step 1, under the claim; null when nothing is left or another indexer holds the workspace. */
  private planned(workspaceId: string, cursor: string): Promise<Planned<Plan> | null> {
    const plan = async (stores: Stores): Promise<Planned<Plan> | null> => {
      const from = await stores.indexState.indexedSequence(workspaceId, cursor);
      const commits = await stores.commits.after(workspaceId, from, this.options.batchSize);
      const last = commits.at(-1);
      if (!last) return null;
      return {
        from,
        last: last.sequence,
        commits: commits.length,
        plan: await this.arm.plan(stores, workspaceId, commits),
      };
    };
    if (!this.options.exclusive) return plan(this.ledger.stores);
    return this.ledger.transaction(async (stores) =>
      (await stores.indexState.tryClaim(workspaceId, this.arm.name)) ? plan(stores) : null,
    );
  }

  /**
   * Step 3: one short transaction that holds the claim and runs `body` only if the cursor still
   * stands at `from`; false when it moved. While another indexer holds the claim (its own short
   * plan or store), it waits a little outside any transaction, then drops the batch.
   */
  private async fenced(
    workspaceId: string,
    cursor: string,
    from: number,
    body: (stores: Stores) => Promise<void>,
  ): Promise<boolean> {
    const deadline = Date.now() + STORE_CLAIM_WAIT_MS;
    for (;;) {
      const outcome = await this.ledger.transaction(async (stores) => {
        if (this.options.exclusive && !(await stores.indexState.tryClaim(workspaceId, this.arm.name))) return 'busy';
        if ((await stores.indexState.indexedSequence(workspaceId, cursor)) !== from) return 'moved';
        await body(stores);
        return 'stored';
      });
      if (outcome !== 'busy') return outcome === 'stored';
      if (Date.now() >= deadline) return false;
      await sleep(STORE_CLAIM_POLL_MS);
    }
  }

  /** Inside a store transaction: the batch's cursor moves to its last commit. */
  private async advance(stores: Stores, workspaceId: string, cursor: string, last: number): Promise<void> {
    await this.options.beforeAdvance?.(workspaceId, last);
    await stores.indexState.advance(workspaceId, cursor, last, Date.now() / 1000);
  }
}

type Fenced = (body: (stores: Stores) => Promise<void>) => Promise<boolean>;

/** The two fences of one batch; `advanced` once its cursor's advance has committed. */
class Fences implements BatchFences {
  advanced = false;
  private awaitingConfirm = false;
  readonly partial: CursorFence;
  readonly final: CursorFence;

  constructor(fenced: Fenced, advance: (stores: Stores) => Promise<void>) {
    this.partial = {
      store: (write: (db: Database) => Promise<void>) => fenced((stores) => write(stores.db)),
      confirm: async () => true,
    };
    this.final = {
      store: async (write, mode) => {
        const stored = await fenced(async (stores) => {
          await write(stores.db);
          if (mode === 'advance') await advance(stores);
        });
        if (stored && mode === 'advance') this.advanced = true;
        if (stored && mode === 'confirm') this.awaitingConfirm = true;
        return stored;
      },
      confirm: async () => {
        if (!this.awaitingConfirm) throw new Error('confirm() without a store to confirm');
        this.awaitingConfirm = false;
        const advanced = await fenced(advance);
        if (advanced) this.advanced = true;
        return advanced;
      },
    };
  }
}
