import { COMMIT_CHANNEL, type Ledger } from '@tms/ledger';

/** A promise of the next commit notification of one workspace; `cancel` when no longer waiting. */
export interface NextCommit {
  readonly arrived: Promise<void>;
  cancel(): void;
}

/**
 * Commit notifications of every workspace, for the long polls and subscriptions of this
 * process: one LISTEN (started on first use) fanned out to the waiters of each workspace. A
 * notification is only a hint to look again; waiters also look again on a timer, since a
 * notification can be lost with the listening connection.
 */
export class CommitWatch {
  private readonly waiters = new Map<string, Set<() => void>>();
  private listening: Promise<unknown> | null = null;

  constructor(private readonly ledger: Ledger) {}

  /**
   * Register for the next commit of `workspaceId` now, before reading the feed, so that a
   * commit landing between the read and the wait is not missed (the first call waits until
   * the LISTEN is in place).
   */
  async next(workspaceId: string): Promise<NextCommit> {
    this.listening ??= this.ledger.handle
      .listen(COMMIT_CHANNEL, (payload) => this.notify(payload))
      // Without notifications the waiters' timers still find every commit.
      .catch(() => null);
    await this.listening;
    let wake: () => void = () => {};
    const arrived = new Promise<void>((resolve) => {
      wake = resolve;
    });
    let set = this.waiters.get(workspaceId);
    if (!set) {
      set = new Set();
      this.waiters.set(workspaceId, set);
    }
    set.add(wake);
    const cancel = () => {
      const current = this.waiters.get(workspaceId);
      if (!current) return;
      current.delete(wake);
      if (current.size === 0) this.waiters.delete(workspaceId);
    };
    return { arrived: arrived.then(cancel), cancel };
  }

  /** Resolve on the next commit of the workspace, after `ms`, or when `signal` aborts, whichever comes first. */
  async within(next: NextCommit, ms: number, signal?: AbortSignal): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    let stop: () => void = () => {};
    const elapsed = new Promise<void>((resolve) => {
      stop = resolve;
      timer = setTimeout(resolve, Math.max(0, ms));
      signal?.addEventListener('abort', stop, { once: true });
    });
    try {
      await Promise.race([next.arrived, elapsed]);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      next.cancel();
    }
  }

  private notify(workspaceId: string): void {
    const set = this.waiters.get(workspaceId);
    if (!set) return;
    this.waiters.delete(workspaceId);
    for (const wake of set) wake();
  }
}
