import { Counter, type Registry } from 'prom-client';

/** Indexer throughput, for the indexer's /metrics and the embedded gateway's (the lag is in ./lag.ts). */
export function indexerMetrics(registry: Registry) {
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
  return {
    onBatch: (event: { commits: number; documents: number }) => {
      commits.inc(event.commits);
      documents.inc(event.documents);
    },
    onError: () => errors.inc(),
  };
}
