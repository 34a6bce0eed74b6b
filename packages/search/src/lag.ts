import type { IndexLag, Ledger } from '@tms/ledger';
import { Gauge, type Registry } from 'prom-client';
import type { ArmName } from './cursor-runner';
import type { Embedder } from './embedders/embedder';
import { semanticCursorName } from './provider';

/**
 * One arm of the index and its cursor in `index_state`: the lexical arm's is the provider's
 * name, the semantic arm's `semanticCursorName(provider, model)` (decisions §11).
 */
export interface IndexArm {
  arm: ArmName;
  cursor: string;
}

/**
 * The arms a deployment keeps: lexical always, semantic unless EMBEDDER=none. The semantic
 * cursor is read when used: an openai model without configured dimensions is named only once its
 * endpoint has answered; until then its cursor is one nothing advances, so every commit counts
 * as not embedded (and stalls are reported) while the embedder is down.
 */
export function indexArms(provider: string, embedder?: Pick<Embedder, 'kind' | 'model'> | null): IndexArm[] {
  const arms: IndexArm[] = [{ arm: 'lexical', cursor: provider }];
  if (embedder && embedder.kind !== 'none') {
    arms.push({
      arm: 'semantic',
      get cursor() {
        return semanticCursorName(provider as 'postgres', embedder.model);
      },
    });
  }
  return arms;
}

/** How far one arm's index trails the ledger, summed over the workspaces that are behind. */
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

/**
 * Read the lag of one cursor once: one statement over workspace heads, index state and the first
 * unindexed commit. The semantic arm is expected to trail (an embedder makes ~35 vectors a
 * second on one core, writes come faster), so it is stalled only when its cursor has also not
 * moved for `stallSeconds`: slow is not stalled, stopped is.
 */
export async function readIndexLag(
  ledger: Ledger,
  cursor: string,
  stallSeconds: number,
  now: number = nowSeconds(),
  arm: IndexArm['arm'] = 'lexical',
): Promise<IndexLagSummary> {
  const behind = await ledger.stores.indexState.lag(cursor, true);
  let commits = 0;
  let oldest = now;
  const stalled: IndexLag[] = [];
  for (const workspace of behind) {
    commits += workspace.headSequence - workspace.indexedSequence;
    const since = workspace.oldestUnindexedAt ?? now;
    oldest = Math.min(oldest, since);
    const idle = arm === 'lexical' || workspace.updatedAt === null || now - workspace.updatedAt >= stallSeconds;
    if (now - since >= stallSeconds && idle) stalled.push(workspace);
  }
  return { workspacesBehind: behind.length, commits, oldestSeconds: Math.max(0, now - oldest), stalled };
}

/**
 * The index lag on a Prometheus registry, one series per arm (`arm="lexical"|"semantic"`),
 * read from the ledger at scrape time, so the gateway shows it whether the indexer runs inside
 * it or as its own service. `arms` may be a provider name (the lexical arm alone).
 */
export function indexLagMetrics(
  registry: Registry,
  ledger: Ledger,
  arms: readonly IndexArm[] | string,
  stallSeconds: number,
): void {
  const list = typeof arms === 'string' ? indexArms(arms) : arms;
  // One read per arm serves the three gauges of a scrape.
  const pending = new Map<string, Promise<IndexLagSummary | null>>();
  const read = (arm: IndexArm) => {
    let reading = pending.get(arm.arm);
    if (!reading) {
      reading = Promise.resolve()
        .then(() => readIndexLag(ledger, arm.cursor, stallSeconds, nowSeconds(), arm.arm))
        .catch(() => null)
        .finally(() => setTimeout(() => pending.delete(arm.arm), 0).unref());
      pending.set(arm.arm, reading);
    }
    return reading;
  };
  const gauge = (name: string, help: string, value: (summary: IndexLagSummary | null) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['arm'],
      registers: [registry],
      async collect() {
        for (const arm of list) this.set({ arm: arm.arm }, value(await read(arm)));
      },
    });
  gauge(
    'tms_indexer_lag_commits',
    'Commits recorded in the ledger but not yet indexed by the arm, summed over workspaces',
    (s) => s?.commits ?? 0,
  );
  gauge(
    'tms_indexer_lag_seconds',
    'Age of the oldest commit the arm has not indexed yet, over all workspaces (0 when caught up)',
    (s) => s?.oldestSeconds ?? 0,
  );
  gauge(
    'tms_indexer_stalled_workspaces',
    `Workspaces with a commit the arm has not advanced past for ${stallSeconds} s or more`,
    (s) => s?.stalled.length ?? 0,
  );
}

export interface IndexLagWatchOptions {
  /** A commit unindexed for this long means no indexer is advancing its workspace (decisions §9: 30 s). */
  stallSeconds: number;
  /** How often the ledger is asked. */
  intervalMs: number;
  /** While stalled, the warning is repeated this often (not on every check). */
  repeatMs: number;
  onStalled(summary: IndexLagSummary, arm: IndexArm): void;
  onRecovered(arm: IndexArm): void;
}

/**
 * Watches for workspaces whose commits no indexer advanced (a stopped external indexer, a
 * provider or an embedder that keeps failing) and reports it per arm, so `pending` recalls and
 * a semantic arm that lags never go unexplained.
 */
export class IndexLagWatch {
  private timer: NodeJS.Timeout | null = null;
  private readonly arms: readonly IndexArm[];
  private readonly state = new Map<string, { stalledSince: number | null; lastWarning: number }>();

  constructor(
    private readonly ledger: Ledger,
    arms: readonly IndexArm[] | string,
    private readonly options: IndexLagWatchOptions,
  ) {
    this.arms = typeof arms === 'string' ? indexArms(arms) : arms;
    for (const arm of this.arms) this.state.set(arm.arm, { stalledSince: null, lastWarning: 0 });
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check().catch(() => undefined), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One check of every arm; a lost database is the readiness probe's business, not this watch's. */
  async check(now: number = Date.now()): Promise<IndexLagSummary> {
    let first: IndexLagSummary | null = null;
    for (const arm of this.arms) {
      const summary = await readIndexLag(this.ledger, arm.cursor, this.options.stallSeconds, now / 1000, arm.arm);
      first ??= summary;
      const state = this.state.get(arm.arm) as { stalledSince: number | null; lastWarning: number };
      if (summary.stalled.length > 0) {
        if (state.stalledSince === null || now - state.lastWarning >= this.options.repeatMs) {
          state.stalledSince ??= now;
          state.lastWarning = now;
          this.options.onStalled(summary, arm);
        }
      } else if (state.stalledSince !== null) {
        state.stalledSince = null;
        this.options.onRecovered(arm);
      }
    }
    return first ?? { workspacesBehind: 0, commits: 0, oldestSeconds: 0, stalled: [] };
  }
}
