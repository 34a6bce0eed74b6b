import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { WebhookDeliveryWorker } from '@tms/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../gateway/test/harness';
import { until } from './webhook-receiver';

/* The webhook receiver of docs/api.md, examples/webhook-receiver.mjs, run as its readers would run it. */

const EXAMPLE = path.resolve(import.meta.dirname, '../../../examples/webhook-receiver.mjs');

describe('the documented webhook receiver example', () => {
  let h: Harness;
  let child: ChildProcess | null = null;
  const lines: string[] = [];

  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite', env: { WEBHOOKS_ALLOW_PRIVATE: '1' } });
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await h?.close();
  });

  it('verifies real deliveries, refuses forged ones and handles a redelivered batch once', async () => {
    // The webhook needs the receiver's URL and the receiver the webhook's secret: take a free port first.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
    const { port } = probe.address() as net.AddressInfo;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    const { api: admin } = await h.workspace();
    const { webhook, secret } = (await admin.post('/v1/webhooks', { url: `http://127.0.0.1:${port}/` })).body;
    child = spawn(process.execPath, [EXAMPLE], {
      env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    await until(() => lines.includes(`listening on http://127.0.0.1:${port}`), 'the example listening');

    const namespace = (await admin.post('/v1/namespaces', { parent_id: null, name: 'notes' })).body;
    const memory = (
      await admin.post('/v1/memories', {
        namespace_id: namespace.namespace.id,
        kind: 'claim',
        text: 'Ana prefers tea.',
        valid_from: 0,
      })
    ).body;
    const worker = new WebhookDeliveryWorker(h.gateway.ledger, { allowPrivateTargets: true });
    expect(await worker.drain()).toBe(1);
    await until(() => lines.length >= 3, 'two changes printed');
    expect(lines.slice(1)).toEqual([
      `${webhook.id} change ${namespace.commit.sequence} namespaces.create namespace:${namespace.namespace.id}`,
      `${webhook.id} change ${memory.commit.sequence} memories.create memory:${memory.memory.id} revision:${memory.revision.id}`,
    ]);
    const row = await h.gateway.ledger.stores.webhooks.get(webhook.workspace_id, webhook.id);
    expect(row?.deliveredSequence).toBe(memory.commit.sequence);

    // A forged or unsigned delivery is refused; a redelivery of a handled batch prints nothing.
    const body = JSON.stringify({ webhook_id: webhook.id, changes: [] });
    const t = Math.floor(Date.now() / 1000);
    const forged = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: { 'tms-signature': `t=${t},v1=${'ab'.repeat(32)}` },
      body,
    });
    expect(forged.status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body })).status).toBe(401);

    const { signatureHeader } = await import('@tms/webhooks');
    const again = JSON.stringify({
      webhook_id: webhook.id,
      changes: [
        { sequence: memory.commit.sequence, recorded_at: 0, operation: 'memories.create', actor_id: 'a', subjects: [] },
      ],
    });
    const redelivered = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: { 'tms-signature': signatureHeader(secret, again, t) },
      body: again,
    });
    expect(redelivered.status).toBe(204);
    const stale = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: { 'tms-signature': signatureHeader(secret, again, t - 301) },
      body: again,
    });
    expect(stale.status).toBe(401);
    expect(lines).toHaveLength(3);
  });
});
