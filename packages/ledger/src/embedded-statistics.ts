import type { PGlite } from '@electric-sql/pglite';

/** Growth since the last analyze that makes the next one due: autovacuum's defaults (50 rows, then 10%). */
const BASE_THRESHOLD = 50;
const SCALE_FACTOR = 0.1;
/** How often the ledger's growth is read. */
export const EMBEDDED_STATISTICS_INTERVAL_MS = 30_000;

/**
 * Planner statistics for the embedded ledger. PGlite runs no autovacuum, so without this its
 * tables would never be analyzed and every plan would rest on guesses: a recall's ledger read of
 * 40 candidates among 1,451 memories chose a poor index and took 12.5 ms at the median, 7.8 ms
 * once analyzed. Every interval this reads the ledger's size in commits (the sum of the
 * workspaces' heads) and runs `analyze` when it grew past autovacuum's default threshold since
 * the last one (50 commits, then 10%). Statistics are stored with the data, so a restart keeps
 * them. `analyze` takes the one connection while it samples (milliseconds at thousands of rows).
 */
export class EmbeddedStatistics {
  /** Commits counted when the statistics were last refreshed (0: not by this process). */
  private analyzedAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<boolean> | null = null;

  constructor(
    private readonly client: PGlite,
    private readonly intervalMs = EMBEDDED_STATISTICS_INTERVAL_MS,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.refresh().catch(() => {
        // A failed analyze (the ledger closing) is retried at the next interval.
      });
    }, this.intervalMs);
    // Statistics alone do not keep a process alive.
    this.timer.unref();
  }

  /** Analyze now if the ledger grew past the threshold since the last time; true if it did. */
  refresh(): Promise<boolean> {
    this.running ??= this.refreshIfDue().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  private async refreshIfDue(): Promise<boolean> {
    let commits: number;
    try {
      const { rows } = await this.client.query<{ commits: number | string }>(
        'select coalesce(sum(sequence), 0) as commits from workspace_heads',
      );
      commits = Number(rows[0]?.commits ?? 0);
    } catch {
      // Not migrated yet: nothing to analyze.
      return false;
    }
    if (commits - this.analyzedAt < BASE_THRESHOLD + SCALE_FACTOR * this.analyzedAt) return false;
    await this.client.exec('analyze');
    this.analyzedAt = commits;
    return true;
  }
}
