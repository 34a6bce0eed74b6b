import type { Ledger } from '@tms/ledger';
import { Counter, Gauge, type Registry } from 'prom-client';

/** Indexer throughput and lag, for the indexer's /metrics and the embedded gateway's. */
export function indexerMetrics(registry: Registry, ledger: Ledger, provider: string) {
  const commits = new Counter({
    name: 'tms_indexer_commits_total',
    help: 'Commits indexed',
    registers: [registry],
  });
  const documents = new Counter({
    name: 'tms_indexer_documents_total',
    help: 'Search documents written or deleted',
    registers: [registry],
  });
  const errors = new Counter({
    name: 'tms_indexer_errors_total',
    help: 'Failed indexing attempts',
    registers: [registry],
  });
  new Gauge({
    name: 'tms_indexer_lag_commits',
    help: 'Commits recorded in the ledger but not yet indexed, summed over workspaces',
    registers: [registry],
    async collect() {
      const lag = await ledger.stores.indexState.lag(provider, true).catch(() => []);
      this.set(lag.reduce((sum, w) => sum + (w.headSequence - w.indexedSequence), 0));
    },
  });
  return {
    onBatch: (event: { commits: number; documents: number }) => {
      commits.inc(event.commits);
      documents.inc(event.documents);
    },
    onError: () => errors.inc(),
  };
}
