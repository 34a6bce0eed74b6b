import net from 'node:net';
import type { ApiClient } from '@tms/testkit';
import { type ServiceProcess, startIndexerProcess } from '@tms/testkit/processes';
import { WebhookDeliveryWorker } from '@tms/webhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../../packages/client/src/webhooks';
import { type Harness, startHarness } from '../../gateway/test/harness';
import { TestReceiver, until } from './webhook-receiver';

/*
 * Webhook deliveries (decisions §10) from real indexer processes and from the gateway's
 * embedded indexer, to real HTTP receivers on loopback, over real Postgres and PGlite.
 */

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function webhookRow(h: Harness, ws: string, id: string) {
  const row = await h.gateway.ledger.stores.webhooks.get(ws, id);
  if (!row) throw new Error(`webhook ${id} is gone`);
  return row;
}

async function headOf(h: Harness, ws: string): Promise<number> {
  return (await h.gateway.ledger.stores.commits.head(ws))?.sequence ?? 0;
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('webhook deliveries from two indexer processes (postgres)', () => {
  let h: Harness;
  const receiver = new TestReceiver();
  const indexers: ServiceProcess[] = [];

  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres', env: { WEBHOOKS_ALLOW_PRIVATE: '1' } });
    await receiver.start();
  });
  afterAll(async () => {
    await Promise.all(indexers.map((p) => p.stop()));
    await receiver.stop();
    await h?.close();
  });

  it('delivers every change once acknowledged, in order, signed, one batch at a time, through failures and a receiver restart', async () => {
    const { id: ws, api: admin } = await h.workspace();
    const ns = async (name: string) =>
      (await admin.post('/v1/namespaces', { parent_id: null, name })).body.namespace.id as string;
    const a = await ns('a');
    const b = await ns('b');
    const all = (await admin.post('/v1/webhooks', { url: receiver.url('/all') })).body;
    const scoped = (await admin.post('/v1/webhooks', { url: receiver.url('/scoped'), namespace_id: a })).body;
    const firstSequence = all.commit.sequence + 1;

    // Commits in namespace a, for the scoped webhook's expectation.
    const inA: number[] = [];
    const write = async (api: ApiClient, count: number) => {
      for (let i = 0; i < count; i += 1) {
        const namespaceId = i % 2 === 0 ? a : b;
        const res = await api.post('/v1/memories', {
          namespace_id: namespaceId,
          kind: 'claim',
          text: `fact ${i}`,
          valid_from: 0,
        });
        expect(res.status, res.text).toBe(200);
        if (namespaceId === a) inA.push(res.body.commit.sequence);
      }
    };
    const caughtUp = async (id: string) => (await webhookRow(h, ws, id)).deliveredSequence === (await headOf(h, ws));

    receiver.failNext = 3;
    const env = {
      DATABASE_URL: h.database?.url ?? '',
      SEARCH_PROVIDER: 'none',
      WEBHOOKS_ALLOW_PRIVATE: '1',
      WEBHOOK_BACKOFF_BASE_MS: '20',
      LOG_LEVEL: 'info',
    };
    indexers.push(await startIndexerProcess('one', env), await startIndexerProcess('two', env));

    await write(admin, 8);
    await until(() => caughtUp(all.webhook.id), 'the first changes delivered');

    // The receiver goes down: attempts fail until it is back, on the same port.
    await receiver.stop();
    const downSince = Date.now() / 1000;
    await write(admin, 8);
    await until(
      async () => ((await webhookRow(h, ws, all.webhook.id)).lastErrorAt ?? 0) >= downSince,
      'a failed attempt while the receiver is down',
    );
    await receiver.start();
    await write(admin, 8);
    await until(async () => (await caughtUp(all.webhook.id)) && (await caughtUp(scoped.webhook.id)), 'all delivered');

    const head = await headOf(h, ws);
    // Every change after the webhook's creation, each once, in sequence order.
    const delivered = receiver.acknowledged('/all').flatMap((d) => d.changes.map((c) => c.sequence));
    expect(delivered).toEqual(range(firstSequence, head));
    expect(receiver.received.filter((r) => r.status === 500)).toHaveLength(3);

    // A failed batch is sent again from where it started: each request begins right after the
    // last acknowledged sequence, so nothing is ever out of order.
    let acknowledgedUpTo = all.commit.sequence;
    for (const request of receiver.received.filter((r) => r.path === '/all')) {
      const { changes } = JSON.parse(request.body);
      expect(changes[0].sequence).toBe(acknowledgedUpTo + 1);
      if (request.status === 200) acknowledgedUpTo = changes.at(-1).sequence;
    }

    // Every request, failed or not, is signed with the webhook's secret.
    for (const request of receiver.received) {
      const secret = request.path === '/all' ? all.secret : scoped.secret;
      expect(await verifyWebhookSignature({ header: request.signature, body: request.body, secret })).toBe(true);
      expect(await verifyWebhookSignature({ header: request.signature, body: request.body, secret: 'other' })).toBe(
        false,
      );
      expect(JSON.parse(request.body).webhook_id).toBe(request.path === '/all' ? all.webhook.id : scoped.webhook.id);
    }

    // Two processes, yet never two batches of one webhook at once.
    expect(receiver.maxInFlight.get('/all')).toBe(1);
    expect(receiver.maxInFlight.get('/scoped')).toBe(1);

    // The scoped webhook gets exactly the changes in namespace a, with only their subjects there.
    const scopedChanges = receiver.acknowledged('/scoped').flatMap((d) => d.changes);
    expect(scopedChanges.map((c) => c.sequence)).toEqual(inA);
    for (const change of scopedChanges) {
      expect(change.subjects.length).toBeGreaterThan(0);
      for (const subject of change.subjects) expect(subject.namespace_id).toBe(a);
    }
    // The change shape of decisions §10.
    expect(receiver.acknowledged('/all')[0]?.changes[0]).toEqual({
      sequence: firstSequence,
      recorded_at: scoped.commit.recorded_at,
      operation: 'webhooks.create',
      actor_id: expect.stringMatching(/^act_/),
      subjects: [{ type: 'webhook', id: scoped.webhook.id, namespace_id: null }],
    });

    // webhooks.list shows the state: caught up, active, the last error kept, no longer failing.
    const listed = (await admin.get('/v1/webhooks')).body.webhooks;
    const shown = listed.find((w: { id: string }) => w.id === all.webhook.id);
    expect(shown).toMatchObject({
      state: 'active',
      delivered_sequence: head,
      failing_since: null,
      next_attempt_at: null,
      disabled_reason: null,
    });
    expect(shown.last_error).toMatch(/^(HTTP 500|request failed: .+)$/);
    expect(shown.last_delivered_at).toBeGreaterThan(shown.last_error_at);
  });
});

describe('webhook deliveries from the gateway embedded indexer (pglite)', () => {
  let h: Harness;
  const hanging = net.createServer((socket) => socket.on('data', () => {}));
  let hangingPort = 0;

  beforeAll(async () => {
    h = await startHarness({
      driver: 'pglite',
      env: {
        INDEXER: 'embedded',
        WEBHOOKS_ALLOW_PRIVATE: '1',
        WEBHOOK_RETRY_WINDOW_SECONDS: '1',
        WEBHOOK_BACKOFF_BASE_MS: '50',
        WEBHOOK_TIMEOUT_MS: '300',
      },
    });
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', () => resolve()));
    hangingPort = (hanging.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    await h?.close();
    await new Promise<void>((resolve) => {
      hanging.close(() => resolve());
    });
  });

  it('disables a webhook whose receiver stays down, or never answers, past the retry window, and says why', async () => {
    const { id: ws, api: admin } = await h.workspace();
    const down = (await admin.post('/v1/webhooks', { url: `http://127.0.0.1:${await closedPort()}/` })).body;
    const silent = (await admin.post('/v1/webhooks', { url: `http://127.0.0.1:${hangingPort}/` })).body;
    await admin.post('/v1/namespaces', { parent_id: null, name: 'wake' });

    const listed = async () => (await admin.get('/v1/webhooks')).body.webhooks as Record<string, unknown>[];
    await until(async () => (await listed()).every((w) => w.state === 'disabled'), 'both webhooks disabled');
    const [downShown, silentShown] = await listed();
    expect(downShown?.id).toBe(down.webhook.id);
    expect(silentShown?.id).toBe(silent.webhook.id);
    for (const shown of [downShown, silentShown]) {
      expect(shown).toMatchObject({ state: 'disabled', next_attempt_at: null });
      expect(shown?.state_since).toEqual(shown?.last_error_at);
      expect(shown?.failing_since).toBeLessThanOrEqual(shown?.state_since as number);
    }
    // Nothing was acknowledged.
    expect(downShown?.delivered_sequence).toBe(down.commit.sequence);
    expect(silentShown?.delivered_sequence).toBe(silent.commit.sequence);
    expect(downShown?.disabled_reason).toMatch(
      /^no delivery succeeded within 1 s of the first failure .*; last error: request failed: .*ECONNREFUSED/,
    );
    expect(silentShown?.disabled_reason).toMatch(/; last error: no answer within 300 ms$/);

    // A disabled webhook is never due again.
    const due = await h.gateway.ledger.stores.webhooks.due(Date.now() / 1000 + 86_400, 100);
    expect(due.filter((w) => w.workspaceId === ws)).toEqual([]);

    const metrics = await (await fetch(`${h.url}/metrics`)).text();
    expect(metrics).toMatch(/^tms_webhook_disabled_total 2$/m);
    const failures = Number(/^tms_webhook_failures_total (\d+)$/m.exec(metrics)?.[1]);
    expect(failures).toBeGreaterThanOrEqual(4);
  });
});

describe('webhook targets checked again at delivery (postgres)', () => {
  let h: Harness;
  const receiver = new TestReceiver();

  beforeAll(async () => {
    // The gateway admits private targets; the workers below decide for themselves.
    h = await startHarness({ driver: 'postgres', env: { WEBHOOKS_ALLOW_PRIVATE: '1' } });
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await h?.close();
  });

  it('refuses a host name that resolves to loopback unless private targets are allowed', async () => {
    const { id: ws, api: admin } = await h.workspace();
    const { webhook, secret } = (await admin.post('/v1/webhooks', { url: `http://localhost:${receiver.port}/named` }))
      .body;
    await admin.post('/v1/namespaces', { parent_id: null, name: 'n' });

    const strict = new WebhookDeliveryWorker(h.gateway.ledger, { allowPrivateTargets: false, backoffBaseMs: 1 });
    await strict.deliverNext(ws, webhook.id);
    const refused = await webhookRow(h, ws, webhook.id);
    expect(refused.lastError).toMatch(/^localhost resolves to a non-public address/);
    expect(refused.deliveredSequence).toBe(webhook.delivered_sequence);
    expect(receiver.received).toEqual([]);

    await until(async () => ((await webhookRow(h, ws, webhook.id)).nextAttemptAt ?? 0) <= Date.now() / 1000, 'due');
    const open = new WebhookDeliveryWorker(h.gateway.ledger, { allowPrivateTargets: true });
    expect(await open.drain()).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(await verifyWebhookSignature({ header: request?.signature, body: request?.body ?? '', secret })).toBe(true);
    expect((await webhookRow(h, ws, webhook.id)).deliveredSequence).toBe(await headOf(h, ws));
  });
});
