import type { RecallStatus } from '@tms/domain';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import type { Executor } from './graphql/compiled-queries';

/**
 * Per-app Prometheus registry: request counts and latency by operation and outcome code, recall
 * outcomes by status, GraphQL answers by path and executions by executor, plus prom-client's process and Node.js metrics
 * (CPU, memory, event-loop lag, GC, handles).
 */
export class GatewayMetrics {
  readonly registry = new Registry();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  private readonly requests = new Counter({
    name: 'tms_requests_total',
    help: 'Requests by operation and outcome code',
    labelNames: ['operation', 'code'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'tms_request_duration_seconds',
    help: 'Request latency by operation and outcome code',
    labelNames: ['operation', 'code'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly recalls = new Counter({
    name: 'tms_recall_total',
    help: 'Recall answers by status (complete, partial, pending, degraded), whichever transport asked',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  private readonly graphqlAnswers = new Counter({
    name: 'tms_graphql_answers_total',
    help: "GraphQL answers by path through Yoga's plugin chain: known (a query text already run on compiled code, answered on onParams by that code) or pipeline (parsed, validated and executed)",
    labelNames: ['path'] as const,
    registers: [this.registry],
  });

  graphqlAnswered(path: 'known' | 'pipeline'): void {
    this.graphqlAnswers.inc({ path });
  }

  private readonly graphqlExecutions = new Counter({
    name: 'tms_graphql_executions_total',
    help: "GraphQL operations executed, by executor: compiled (a query compiled for its document) or standard (graphql-js's)",
    labelNames: ['executor'] as const,
    registers: [this.registry],
  });

  graphqlExecuted(executor: Executor): void {
    this.graphqlExecutions.inc({ executor });
  }

  /** The domain's observer: told each recall's outcome. */
  readonly observer = { recall: (status: RecallStatus) => this.recalls.inc({ status }) };

  observe(operation: string, code: string, seconds: number): void {
    this.requests.inc({ operation, code });
    this.latency.observe({ operation, code }, seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
