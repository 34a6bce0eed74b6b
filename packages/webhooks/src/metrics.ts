import type { Ledger } from '@tms/ledger';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DeliveryReport } from './delivery-worker';

/** Delivery counts and lag on the registry of the process that runs the worker. */
export function webhookMetrics(registry: Registry, ledger: Ledger) {
  const deliveries = new Counter({
    name: 'tms_webhook_deliveries_total',
    help: 'Webhook batches acknowledged with a 2xx',
    registers: [registry],
  });
  const failures = new Counter({
    name: 'tms_webhook_failures_total',
    help: 'Failed webhook delivery attempts (a non-2xx, a timeout, a connection error or a refused target)',
    registers: [registry],
  });
  const disabled = new Counter({
    name: 'tms_webhook_disabled_total',
    help: 'Webhooks disabled after their retry window closed',
    registers: [registry],
  });
  new Gauge({
    name: 'tms_webhook_lag_commits',
    help: 'Commits not yet acknowledged by active webhooks, summed over webhooks',
    registers: [registry],
    async collect() {
      this.set(await ledger.stores.webhooks.lag().catch(() => 0));
    },
  });
  return {
    onDelivered: (_event: DeliveryReport) => deliveries.inc(),
    onFailed: (event: { disabled: boolean }) => {
      failures.inc();
      if (event.disabled) disabled.inc();
    },
  };
}
