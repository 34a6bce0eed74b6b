import { Counter, Gauge, type Registry } from 'prom-client';
import type { BuiltinEmbedder } from './embedders/builtin-embedder';
import type { SemanticBatchReport } from './semantic-indexer';

/**
 * Indexer throughput, for the indexer's /metrics and the embedded gateway's (the lag of both
 * arms is in ./lag.ts). The lexical arm's counters keep their names; the semantic arm has its own.
 */
export function indexerMetrics(registry: Registry) {
  const commits = new Counter({
    name: 'tms_indexer_commits_total',
    help: 'Commits indexed by the lexical arm',
    registers: [registry],
  });
  const documents = new Counter({
    name: 'tms_indexer_documents_total',
    help: 'Search documents written or deleted',
    registers: [registry],
  });
  const errors = new Counter({
    name: 'tms_indexer_errors_total',
    help: 'Failed indexing attempts of the lexical arm',
    registers: [registry],
  });
  const semanticCommits = new Counter({
    name: 'tms_indexer_semantic_commits_total',
    help: 'Commits indexed by the semantic arm',
    registers: [registry],
  });
  const vectors = new Counter({
    name: 'tms_indexer_vectors_total',
    help: 'Vectors written by the semantic arm: embedded (new texts), updated (metadata only) or deleted (purges)',
    labelNames: ['change'],
    registers: [registry],
  });
  const semanticErrors = new Counter({
    name: 'tms_indexer_semantic_errors_total',
    help: 'Failed attempts of the semantic arm (embedder unavailable, provider or database failing)',
    registers: [registry],
  });
  return {
    onBatch: (event: { commits: number; documents: number }) => {
      commits.inc(event.commits);
      documents.inc(event.documents);
    },
    onSemanticBatch: (event: SemanticBatchReport) => {
      semanticCommits.inc(event.commits);
      vectors.inc({ change: 'embedded' }, event.embedded);
      vectors.inc({ change: 'updated' }, event.updated);
      vectors.inc({ change: 'deleted' }, event.deleted);
    },
    onError: (arm: 'lexical' | 'semantic' = 'lexical') => (arm === 'lexical' ? errors : semanticErrors).inc(),
  };
}

/**
 * Texts waiting for the builtin model, by purpose: queries (recalls waiting) and documents (the
 * semantic indexer). A recall that stops waiting takes its query out, so a queue of queries that
 * stays long says the model cannot keep up with recalls, not that abandoned work piles up.
 */
export function builtinEmbedderMetrics(registry: Registry, embedder: Pick<BuiltinEmbedder, 'queue'>): void {
  new Gauge({
    name: 'tms_embedder_queued_texts',
    help: 'Texts waiting for the builtin embedding model, by purpose (query: recalls; document: the semantic indexer)',
    labelNames: ['purpose'],
    registers: [registry],
    collect() {
      const { queries, documents } = embedder.queue;
      this.set({ purpose: 'query' }, queries);
      this.set({ purpose: 'document' }, documents);
    },
  });
}
