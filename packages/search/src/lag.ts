import type { IndexLag, Ledger } from '@tms/ledger';
import { Gauge, type Registry } from 'prom-client';

/** How far one provider's index trails the ledger, summed over the workspaces that are behind. */
export interface IndexLagSummary {
  /** Workspaces with at least one commit not yet indexed. */
  workspacesBehind: number;
  /** Commits recorded but not yet indexed. */
  commits: number;
  /** Age in seconds of the oldest commit not yet indexed (0 when caught up). */
  oldestSeconds: number;
  /** Workspaces whose oldest unindexed commit is older than the stall threshold. */
  stalled: IndexLag[];
}

const nowSeconds = () => Date.now() / 1000;

/** Read the lag once: one statement over workspace heads, index state and the first unindexed commit. */
export async function readIndexLag(
  ledger: Ledger,
  provider: string,
  stallSeconds: number,
  now: number = nowSeconds(),
): Promise<IndexLagSummary> {
  const behind = await ledger.stores.indexState.lag(provider, true);
  let commits = 0;
  let oldest = now;
  const stalled: IndexLag[] = [];
  for (const workspace of behind) {
    commits += workspace.headSequence - workspace.indexedSequence;
    const since = workspace.oldestUnindexedAt ?? now;
    oldest = Math.min(oldest, since);
    if (now - since >= stallSeconds) stalled.push(workspace);
  }
  return { workspacesBehind: behind.length, commits, oldestSeconds: Math.max(0, now - oldest), stalled };
}

/**
 * The index lag on a Prometheus registry, read from the ledger at scrape time, so the gateway
 * shows it whether the indexer runs inside it or as its own service.
 */
export function indexLagMetrics(registry: Registry, ledger: Ledger, provider: string, stallSeconds: number): void {
  // One read serves the three gauges of a scrape.
  let pending: Promise<IndexLagSummary | null> | null = null;
  const read = () => {
    pending ??= readIndexLag(ledger, provider, stallSeconds)
      .catch(() => null)
      .finally(() => setTimeout(() => (pending = null), 0).unref());
    return pending;
  };
  new Gauge({
    name: 'tms_indexer_lag_commits',
    help: 'Commits recorded in the ledger but not yet indexed, summed over workspaces',
    registers: [registry],
    async collect() {
      this.set((await read())?.commits ?? 0);
    },
  });
  new Gauge({
    name: 'tms_indexer_lag_seconds',
    help: 'Age of the oldest commit not yet indexed, over all workspaces (0 when caught up)',
    registers: [registry],
    async collect() {
      this.set((await read())?.oldestSeconds ?? 0);
    },
  });
  new Gauge({
    name: 'tms_indexer_stalled_workspaces',
    help: `Workspaces with a commit no indexer advanced past for ${stallSeconds} s or more`,
    registers: [registry],
    async collect() {
      this.set((await read())?.stalled.length ?? 0);
    },
  });
}

export interface IndexLagWatchOptions {
  /** A commit unindexed for this long means no indexer is advancing its workspace (decisions §9: 30 s). */
  stallSeconds: number;
  /** How often the ledger is asked. */
  intervalMs: number;
  /** While stalled, the warning is repeated this often (not on every check). */
  repeatMs: number;
  onStalled(summary: IndexLagSummary): void;
  onRecovered(): void;
}

/**
 * Watches for workspaces whose commits no indexer advanced (a stopped external indexer, a
 * provider that keeps failing) and reports it, so `pending` recalls never go unexplained.
 */
export class IndexLagWatch {
  private timer: NodeJS.Timeout | null = null;
  private stalledSince: number | null = null;
  private lastWarning = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly provider: string,
    private readonly options: IndexLagWatchOptions,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check().catch(() => undefined), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One check; a lost database is the readiness probe's business, not this watch's. */
  async check(now: number = Date.now()): Promise<IndexLagSummary> {
    const summary = await readIndexLag(this.ledger, this.provider, this.options.stallSeconds, now / 1000);
    if (summary.stalled.length > 0) {
      if (this.stalledSince === null || now - this.lastWarning >= this.options.repeatMs) {
        this.stalledSince ??= now;
        this.lastWarning = now;
        this.options.onStalled(summary);
      }
    } else if (this.stalledSince !== null) {
      this.stalledSince = null;
      this.options.onRecovered();
    }
    return summary;
  }
}
