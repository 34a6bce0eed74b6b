import { OPERATION_LIMITS } from '@tms/catalog';
import {
  type CommitStamp,
  collectingStores,
  consecutiveStamps,
  InsertCollector,
  type Ledger,
  type Stores,
} from '@tms/ledger';
import { batchingReads } from './batched-reads';
import type { Deadline } from './deadline';
import { deadlinePassed } from './deadline';
import { DomainError } from './errors';

/** Writes committed together in one transaction at most (a batch grows under load up to this). */
export const MAX_GROUP_SIZE = 64;

/** Where a batch is: named in the report of a batch that runs past its writes' deadlines. */
export type BatchStage =
  | 'opening its transaction'
  | 'taking idempotency locks'
  | 'reads and rules'
  | 'locking the head'
  | 'handlers finishing'
  | 'writing rows'
  | 'committing'
  | 'writes running alone';

export interface SlowBatchReport {
  workspaceId: string;
  writes: number;
  stage: BatchStage;
  elapsedMs: number;
}

/** Told about a batch still running well past its writes' deadlines (it is reported again while it runs). */
export interface GroupCommitObserver {
  slowBatch?(report: SlowBatchReport): void;
}

/** What a grouped write asks of the batch when it reaches its commit point. */
export interface CommitRequest {
  workspaceId: string;
  subjectIds: string[];
  operation: string;
  actorId: string;
}

/** A grouped write after its reads and rules ran (phase one), before its rows are written. */
export type PreparedWrite =
  /** Nothing to write (an idempotent replay): answered once the batch ends. */
  | { kind: 'answered'; result: GroupResult }
  | {
      kind: 'committing';
      /**
       * The commits it makes, in order: one for a write, one per step for a unit of several
       * (an imported line: its evidence, then its memory); none when it finished without a
       * commit (it still records its idempotent answer).
       */
      commits: CommitRequest[];
      /**
       * Resume the write with its stamps (one per commit request, consecutive sequences): it
       * adds its rows to the batch's collector and resolves to its answer (acknowledged only
       * after the batch commits).
       */
      finish(stamps: CommitStamp[], collector: InsertCollector): Promise<GroupResult>;
      /** The batch failed before `finish`: let the suspended handler end. */
      abandon(error: unknown): void;
    };

/**
 * One write's phase one (a grouped write, or one step of a unit of several): answered without a
 * commit, or suspended at its commit point (or finished before it, `commit` null).
 */
export type PreparedStep =
  | { kind: 'answered'; result: GroupResult }
  | {
      kind: 'committing';
      commit: CommitRequest | null;
      /** The handler's answer: settled already when `commit` is null, else once `finish` ran. */
      answer: Promise<object>;
      finish(stamp: CommitStamp | null, collector: InsertCollector): Promise<GroupResult>;
      abandon(error: unknown): void;
    };

/** A grouped write of one step. */
export function singleStep(step: PreparedStep): PreparedWrite {
  if (step.kind === 'answered') return step;
  return {
    kind: 'committing',
    commits: step.commit ? [step.commit] : [],
    finish: (stamps, collector) => step.finish(stamps[0] ?? null, collector),
    abandon: (error) => step.abandon(error),
  };
}

export interface GroupResult {
  json: string;
  replayed: boolean;
  /** The answer `json` was serialized from, when it was made now (a replay has only its text). */
  value?: unknown;
}

export interface GroupedWrite {
  readonly deadline: Deadline | null;
  /**
   * Principal and idempotency key of each of its steps (`principal\u001fkey`, the names of their
   * idempotency locks): two writes under one key never share a batch.
   */
  readonly idempotencyKeys: readonly string[];
  /**
   * Names no two writes of one batch may share besides their idempotency keys (a memory key in
   * its namespace): a write does not see its batch-mates' rows, so the second waits for the next
   * batch and its rules then see the first's.
   */
  readonly claims: readonly string[];
  /**
   * Phase one on the batch's transaction: reads and rules, up to the commit point. It must not
   * write (a rule failure then leaves no trace without a savepoint); a DomainError fails this
   * write alone. The batch has taken the advisory locks of its `idempotencyKeys` (as
   * `IdempotencyStorage.lock` names it) before.
   */
  prepare(stores: Stores): Promise<PreparedWrite>;
  /** The write by itself in its own transaction, used when its batch failed as a whole. */
  alone(): Promise<GroupResult>;
}

/** A write's own rule failed (not the database): it read only, so it can fail alone. */
function isRuleFailure(error: unknown): boolean {
  return error instanceof DomainError && error.code !== 'unavailable' && error.code !== 'internal';
}

interface Entry {
  write: GroupedWrite;
  observer: GroupCommitObserver | null;
  resolve(result: GroupResult): void;
  reject(error: unknown): void;
}

/** The stage of a running batch, updated as it goes. */
interface Progress {
  stage: BatchStage;
}

/**
 * Group commit per workspace (Postgres): writes queued for one workspace while its previous
 * batch commits are committed together in one transaction. Phase one runs every write's reads
 * and rules, all writes at once (their statements pipelined on the connection); then the head
 * is locked once, N sequences are taken in one update, and the commit rows, the writes' rows,
 * their idempotency records and one NOTIFY are sent together, followed by COMMIT: the
 * statements sent while the head is locked do not grow with N. Different workspaces commit in
 * parallel.
 */
export class GroupCommitter {
  private static readonly byLedger = new WeakMap<Ledger, GroupCommitter>();
  private readonly queues = new Map<string, Entry[]>();
  private readonly running = new Map<string, number>();
  /** Idempotency lock names and claims of the batches running per workspace. */
  private readonly held = new Map<string, Set<string>>();
  /** Drains running per workspace (each runs one batch at a time). */
  private readonly drains = new Map<string, number>();

  /** One group committer per ledger, shared by every domain on it (tests look at `pending`). */
  static of(ledger: Ledger): GroupCommitter {
    let committer = GroupCommitter.byLedger.get(ledger);
    if (!committer) {
      committer = new GroupCommitter(ledger);
      GroupCommitter.byLedger.set(ledger, committer);
    }
    return committer;
  }

  /**
   * A batch still running this long after its latest write's deadline is reported to its writes'
   * observers, and again each time as long again passes (a batch is bounded by its writes'
   * deadlines, so one that runs on is stuck somewhere: the report names where).
   */
  slowBatchGraceMs: number = OPERATION_LIMITS.timeoutMs;

  /**
   * A committer of its own, outside the per-ledger one (a bulk import's): bigger batches whose
   * reads are gathered and whose rows go as recordsets (`bulk`), two batches of a workspace at
   * once, so that one runs its rules while the other writes (the second waits for the head until
   * the first commits, so sequences stay in commit order). It commits on either ledger: on PGlite
   * a batch's statements simply run one after another.
   */
  static standalone(ledger: Ledger, maxGroupSize: number): GroupCommitter {
    return new GroupCommitter(ledger, maxGroupSize, true, 2);
  }

  private constructor(
    private readonly ledger: Ledger,
    private readonly maxGroupSize = MAX_GROUP_SIZE,
    /**
     * Batches of hundreds of writes: each kind of read of a batch's phase one gathered into one
     * statement (`batchingReads`), and its rows sent as JSON recordsets (`flushAsRecordsets`).
     */
    private readonly bulk = false,
    /** Batches of one workspace running at once. */
    private readonly parallelBatches = 1,
  ) {}

  /** Writes of a workspace queued or in its running batch. */
  pending(workspaceId: string): number {
    return (this.queues.get(workspaceId)?.length ?? 0) + (this.running.get(workspaceId) ?? 0);
  }

  submit(workspaceId: string, write: GroupedWrite, observer: GroupCommitObserver | null = null): Promise<GroupResult> {
    return this.submitAll(workspaceId, [write], observer)[0] as Promise<GroupResult>;
  }

  /** Several writes queued at once (a bulk import's chunk): the first batch takes as many as it may. */
  submitAll(
    workspaceId: string,
    writes: readonly GroupedWrite[],
    observer: GroupCommitObserver | null = null,
  ): Promise<GroupResult>[] {
    let queue = this.queues.get(workspaceId);
    if (!queue) {
      queue = [];
      this.queues.set(workspaceId, queue);
    }
    const queued = queue;
    const answers = writes.map(
      (write) => new Promise<GroupResult>((resolve, reject) => queued.push({ write, observer, resolve, reject })),
    );
    for (let active = this.drains.get(workspaceId) ?? 0; active < this.parallelBatches; active += 1) {
      this.drains.set(workspaceId, active + 1);
      void this.drain(workspaceId, queued);
    }
    return answers;
  }

  /**
   * One batch at a time per drain; the next starts when the previous has committed. The last
   * drain to find the queue empty removes it, so the next write starts a drain afresh.
   */
  private async drain(workspaceId: string, queue: Entry[]): Promise<void> {
    while (queue.length > 0) {
      const { batch, names } = this.take(workspaceId, queue);
      // Everything queued waits on a name a running batch holds: this drain's turn is over.
      if (batch.length === 0) break;
      this.running.set(workspaceId, (this.running.get(workspaceId) ?? 0) + batch.length);
      const held = this.held.get(workspaceId) ?? new Set<string>();
      this.held.set(workspaceId, held);
      for (const name of names) held.add(name);
      try {
        await this.run(workspaceId, batch);
      } finally {
        for (const name of names) held.delete(name);
        if (held.size === 0) this.held.delete(workspaceId);
        const left = (this.running.get(workspaceId) ?? 0) - batch.length;
        if (left > 0) this.running.set(workspaceId, left);
        else this.running.delete(workspaceId);
      }
    }
    const drains = (this.drains.get(workspaceId) ?? 1) - 1;
    if (drains > 0) this.drains.set(workspaceId, drains);
    else {
      this.drains.delete(workspaceId);
      this.queues.delete(workspaceId);
    }
  }

  /**
   * The next batch in arrival order; a second write under an idempotency key or a claim already
   * in it, or in a batch of the workspace still running, waits for a later one.
   */
  private take(workspaceId: string, queue: Entry[]): { batch: Entry[]; names: string[] } {
    const batch: Entry[] = [];
    const left: Entry[] = [];
    const running = this.held.get(workspaceId);
    const taken = new Set<string>();
    for (const entry of queue) {
      const names = [...entry.write.idempotencyKeys, ...entry.write.claims];
      if (batch.length >= this.maxGroupSize || names.some((name) => taken.has(name) || running?.has(name))) {
        left.push(entry);
        continue;
      }
      for (const name of names) taken.add(name);
      batch.push(entry);
    }
    queue.splice(0, queue.length, ...left);
    return { batch, names: [...taken] };
  }

  /** Reports the batch while it runs past its writes' deadlines; returns the function that stops it. */
  private watch(workspaceId: string, batch: Entry[], progress: Progress): () => void {
    const observers = new Set(batch.flatMap((e) => (e.observer?.slowBatch ? [e.observer] : [])));
    if (observers.size === 0) return () => {};
    const started = Date.now();
    const latestDeadlineMs = Math.max(0, ...batch.map((e) => e.write.deadline?.remainingMs() ?? 0));
    const intervalMs = latestDeadlineMs + this.slowBatchGraceMs;
    let timer: NodeJS.Timeout;
    const report = () => {
      const elapsedMs = Date.now() - started;
      for (const observer of observers) {
        observer.slowBatch?.({ workspaceId, writes: batch.length, stage: progress.stage, elapsedMs });
      }
      timer = setTimeout(report, intervalMs).unref();
    };
    timer = setTimeout(report, intervalMs).unref();
    return () => clearTimeout(timer);
  }

  private async run(workspaceId: string, queued: Entry[]): Promise<void> {
    const outcomes = new Map<Entry, { result: GroupResult } | { error: unknown }>();
    // Queued past its deadline: start nothing for it.
    const batch = queued.filter((entry) => {
      if (!entry.write.deadline?.passed) return true;
      outcomes.set(entry, { error: deadlinePassed() });
      return false;
    });
    const suspended: Extract<PreparedWrite, { kind: 'committing' }>[] = [];
    const progress: Progress = { stage: 'opening its transaction' };
    const stopWatching = this.watch(workspaceId, batch, progress);
    try {
      await this.ledger.transaction(
        async (stores) => {
          try {
            await this.runInTransaction(workspaceId, batch, stores, outcomes, suspended, progress);
            progress.stage = 'committing';
          } catch (error) {
            // Also reached when postgres.js already failed the transaction on a closed
            // connection while this callback was still running: no handler stays suspended.
            for (const prepared of suspended) prepared.abandon(error);
            throw error;
          }
        },
        { retry: false },
      );
    } catch (error) {
      // Nothing of the batch committed: every write runs again by itself (its own deadline,
      // idempotency record and error answer, as without grouping), so none is half-answered.
      for (const prepared of suspended) prepared.abandon(error);
      for (const entry of batch) outcomes.delete(entry);
      progress.stage = 'writes running alone';
      await Promise.all(
        batch.map(async (entry) => {
          try {
            outcomes.set(entry, { result: await entry.write.alone() });
          } catch (aloneError) {
            outcomes.set(entry, { error: aloneError });
          }
        }),
      );
    } finally {
      stopWatching();
    }
    for (const entry of queued) {
      const outcome = outcomes.get(entry);
      if (!outcome) entry.reject(new DomainError('internal', 'a grouped write was not answered'));
      else if ('result' in outcome) entry.resolve(outcome.result);
      else entry.reject(outcome.error);
    }
  }

  private async runInTransaction(
    workspaceId: string,
    batch: Entry[],
    stores: Stores,
    outcomes: Map<Entry, { result: GroupResult } | { error: unknown }>,
    suspended: Extract<PreparedWrite, { kind: 'committing' }>[],
    progress: Progress,
  ): Promise<void> {
    progress.stage = 'taking idempotency locks';
    // No statement outlives the earliest deadline in the batch (a later one's write then runs
    // alone). The timeout is set by the statement that tries every write's idempotency lock.
    const deadlines = batch.map((e) => e.write.deadline).filter((d): d is Deadline => d !== null);
    const statementTimeoutMs =
      deadlines.length > 0 ? Math.max(1, Math.ceil(Math.min(...deadlines.map((d) => d.remainingMs())))) : null;
    const lockNames = batch.flatMap((e) => e.write.idempotencyKeys);
    await stores.idempotency.lockAll(lockNames, statementTimeoutMs);
    const collector = new InsertCollector();
    const collecting = collectingStores(stores, collector);
    const batchStores = this.bulk ? batchingReads(collecting) : collecting;
    progress.stage = 'reads and rules';

    // Phase one: every write's reads and rules. They only read and hold no lock on the head,
    // so they run together: postgres.js pipelines their statements on the transaction's
    // connection (one socket write and one wait for the batch's first reads, not one per write).
    const prepared = await Promise.allSettled(batch.map((entry) => entry.write.prepare(batchStores)));
    const committing: { entry: Entry; write: Extract<PreparedWrite, { kind: 'committing' }> }[] = [];
    let failure: unknown = null;
    prepared.forEach((settled, i) => {
      const entry = batch[i] as Entry;
      if (settled.status === 'rejected') {
        // A rule of this write failed: it read only, so it fails alone. Anything else (a
        // database error) aborted the transaction: the batch fails as a whole.
        if (isRuleFailure(settled.reason)) {
          outcomes.set(entry, { error: settled.reason });
        } else failure ??= settled.reason;
      } else if (settled.value.kind === 'answered') {
        outcomes.set(entry, { result: settled.value.result });
      } else {
        suspended.push(settled.value);
        committing.push({ entry, write: settled.value });
      }
    });
    if (failure !== null) throw failure;
    // Past its deadline before its commit point: it only read, so it is answered alone.
    for (let i = committing.length - 1; i >= 0; i -= 1) {
      const { entry, write } = committing[i] as (typeof committing)[number];
      if (!entry.write.deadline?.passed) continue;
      write.abandon(deadlinePassed());
      outcomes.set(entry, { error: deadlinePassed() });
      committing.splice(i, 1);
    }
    if (committing.length === 0) return;

    // Phase two: lock the head once and take every sequence, then send all rows together.
    progress.stage = 'locking the head';
    const requests = committing.flatMap(({ write }) => write.commits);
    for (const request of requests) {
      if (request.workspaceId !== workspaceId) throw new DomainError('internal', 'grouped write in another workspace');
    }
    const allocated = requests.length > 0 ? await stores.commits.allocateMany(workspaceId, requests.length) : null;
    const stamps = allocated ? consecutiveStamps(allocated, requests.length) : [];
    requests.forEach((request, i) => {
      const stamp = stamps[i] as CommitStamp;
      collector.commit({
        workspaceId,
        sequence: stamp.sequence,
        recordedAt: stamp.recordedAt,
        operation: request.operation,
        actorId: request.actorId,
        subjectIds: request.subjectIds,
      });
    });
    progress.stage = 'handlers finishing';
    let next = 0;
    const finished = await Promise.all(
      committing.map(({ write }) => {
        const own = stamps.slice(next, next + write.commits.length);
        next += write.commits.length;
        return write.finish(own, collector);
      }),
    );
    suspended.length = 0;
    // The batch's commits are chained in sequence order from the collected rows (no statement).
    if (allocated) collector.chain(allocated.previousChainHash);
    // Every row of the batch and one NOTIFY, in one statement.
    progress.stage = 'writing rows';
    const notify = requests.length > 0 ? workspaceId : null;
    if (this.bulk) await collector.flushAsRecordsets(stores.db, notify);
    else await collector.flush(stores.db, notify);
    // Right before COMMIT: a write past its deadline must not commit, so the batch rolls back
    // and its writes run alone (where the late one is answered `unavailable`).
    for (const { entry } of committing) {
      if (entry.write.deadline?.passed) throw deadlinePassed();
    }
    committing.forEach(({ entry }, i) => {
      outcomes.set(entry, { result: finished[i] as GroupResult });
    });
  }
}
