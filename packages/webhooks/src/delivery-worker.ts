import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { COMMIT_CHANNEL, type FailureOutcome, type Ledger, type WebhookRow } from '@tms/ledger';
import { SIGNATURE_HEADER, signatureHeader } from './signature';
import { resolveTarget, TargetRefusedError } from './target-policy';

export interface DeliveryWorkerOptions {
  /** WEBHOOKS_ALLOW_PRIVATE=1: loopback and private targets, and `http` to them, are allowed. */
  allowPrivateTargets?: boolean;
  /** Retries stop and the webhook is disabled this long after its first failure (default 24 h). */
  retryWindowSeconds?: number;
  /** The first retry's delay; it doubles per failed attempt (with jitter), up to `backoffMaxMs`. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** A delivery with no complete answer by then is a failure (default 10 s). */
  timeoutMs?: number;
  /** Changes per delivery (default 50). */
  batchSize?: number;
  /** Webhooks with a batch in flight at once, over all workspaces (default 8). */
  concurrency?: number;
  /** Polling interval when no commit notification arrives (default 1 s). */
  pollMs?: number;
  onDelivered?: (event: DeliveryReport) => void;
  onFailed?: (event: DeliveryReport & { error: string; disabled: boolean }) => void;
  /** A database error in the worker itself (the work is retried on the next wake-up). */
  onError?: (error: unknown) => void;
}

export interface DeliveryReport {
  workspaceId: string;
  webhookId: string;
  /** Changes in the batch (0 when every change in range was outside the webhook's namespace). */
  changes: number;
  /** The cursor after the attempt. */
  deliveredSequence: number;
}

/** A change as deliveries carry it (decisions §10): ids, never text. */
interface ChangeJson {
  sequence: number;
  recorded_at: number;
  operation: string;
  actor_id: string;
  subjects: { type: string; id: string; namespace_id: string | null }[];
}

/** How much longer than the request timeout a lease lasts: a crashed holder blocks no longer than this. */
const LEASE_MARGIN_MS = 5_000;
/** Error texts kept in the ledger are cut to this many characters. */
const MAX_ERROR_LENGTH = 500;

const nowSeconds = () => Date.now() / 1000;

/**
 * Delivers each webhook's changes to its endpoint (decisions §10). Per webhook, one batch is in
 * flight at a time, across processes too: a batch is sent under a lease taken with a conditional
 * update, and the cursor (`delivered_sequence`) advances only after a 2xx, from exactly the
 * sequence the batch started at. A crash or restart therefore resends the unacknowledged batch
 * (at least once) and never skips or reorders one. Woken by the commit notification, polling as
 * the fallback; failed attempts back off exponentially, with jitter, until the retry window
 * closes and the webhook is disabled with the reason.
 */
export class WebhookDeliveryWorker {
  private readonly allowPrivate: boolean;
  private readonly retryWindowSeconds: number;
  private readonly backoffBaseMs: number;
  private readonly backoffMaxMs: number;
  private readonly timeoutMs: number;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly inFlight = new Map<string, Promise<void>>();
  private stopped = false;
  private wake: (() => void) | null = null;
  private wakeRequested = false;

  constructor(
    private readonly ledger: Ledger,
    private readonly options: DeliveryWorkerOptions = {},
  ) {
    this.allowPrivate = options.allowPrivateTargets ?? false;
    this.retryWindowSeconds = options.retryWindowSeconds ?? 86_400;
    this.backoffBaseMs = options.backoffBaseMs ?? 5_000;
    this.backoffMaxMs = options.backoffMaxMs ?? 3_600_000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.batchSize = options.batchSize ?? 50;
    this.concurrency = options.concurrency ?? 8;
    this.pollMs = options.pollMs ?? 1_000;
  }

  /** Run until `stop()`; in-flight batches are finished before it returns. */
  async run(): Promise<void> {
    const unlisten = await this.ledger.handle.listen(COMMIT_CHANNEL, () => this.wakeUp()).catch(() => null);
    try {
      while (!this.stopped) {
        this.wakeRequested = false;
        try {
          await this.startDue();
        } catch (error) {
          this.options.onError?.(error);
        }
        if (this.stopped) break;
        if (this.wakeRequested) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.pollMs);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = null;
      }
    } finally {
      await Promise.allSettled([...this.inFlight.values()]);
      await unlisten?.().catch(() => {});
    }
  }

  stop(): void {
    this.stopped = true;
    this.wakeUp();
  }

  private wakeUp(): void {
    this.wakeRequested = true;
    this.wake?.();
  }

  /**
   * Deliver until nothing is due (tests and one-shot runs): every due webhook gets batches until
   * it is caught up, fails, or is held by another process.
   */
  async drain(): Promise<number> {
    let batches = 0;
    for (;;) {
      const due = await this.ledger.stores.webhooks.due(nowSeconds(), this.concurrency);
      if (due.length === 0) return batches;
      const delivered = await Promise.all(due.map((w) => this.deliverNext(w.workspaceId, w.id)));
      const progressed = delivered.filter(Boolean).length;
      batches += progressed;
      if (progressed === 0) return batches;
    }
  }

  /** Start a batch for every due webhook without one in flight, up to the concurrency. */
  private async startDue(): Promise<void> {
    if (this.inFlight.size >= this.concurrency) return;
    const due = await this.ledger.stores.webhooks.due(nowSeconds(), this.concurrency + this.inFlight.size);
    for (const { workspaceId, id } of due) {
      if (this.inFlight.size >= this.concurrency) break;
      const key = `${workspaceId}/${id}`;
      if (this.inFlight.has(key)) continue;
      const batch = this.deliverNext(workspaceId, id).then(
        (progressed) => {
          this.inFlight.delete(key);
          // A caught-up webhook is no longer due; one with more changes is picked up at once.
          if (progressed) this.wakeUp();
        },
        (error) => {
          this.inFlight.delete(key);
          this.options.onError?.(error);
        },
      );
      this.inFlight.set(key, batch);
    }
  }

  /**
   * Claim the webhook and deliver its next batch; false when there was nothing to do (not due,
   * held elsewhere, deleted, disabled, or caught up).
   */
  async deliverNext(workspaceId: string, webhookId: string): Promise<boolean> {
    const stores = this.ledger.stores;
    const now = nowSeconds();
    const webhook = await stores.webhooks.claim(
      workspaceId,
      webhookId,
      now,
      now + (this.timeoutMs + LEASE_MARGIN_MS) / 1000,
    );
    if (!webhook) return false;
    try {
      return await this.deliverClaimed(webhook);
    } catch (error) {
      await stores.webhooks.release(workspaceId, webhookId).catch(() => {});
      throw error;
    }
  }

  private async deliverClaimed(webhook: WebhookRow): Promise<boolean> {
    const { workspaceId, id } = webhook;
    const from = webhook.deliveredSequence;
    const page = await this.ledger.stores.changes.listAfter(workspaceId, {
      after: from,
      limit: this.batchSize,
      namespaceId: webhook.namespaceId ?? undefined,
      includeDescendants: true,
    });
    // A change whose subjects all lie outside the webhook's namespace is not sent, yet passed.
    const changes: ChangeJson[] = page.changes
      .filter((change) => change.subjects.length > 0)
      .map((change) => ({
        sequence: change.sequence,
        recorded_at: change.recordedAt,
        operation: change.operation,
        actor_id: change.actorId,
        subjects: change.subjects.map((s) => ({ type: s.type, id: s.id, namespace_id: s.namespaceId })),
      }));
    const to = page.changes.at(-1)?.sequence ?? from;
    if (to <= from) {
      await this.ledger.stores.webhooks.release(workspaceId, id);
      return false;
    }
    if (changes.length === 0) {
      // Every change in range lies outside the webhook's namespace: move past them unsent.
      await this.ledger.stores.webhooks.acknowledge(workspaceId, id, from, to, nowSeconds());
      return true;
    }
    const body = JSON.stringify({ webhook_id: id, changes });
    const problem = await this.post(webhook, body);
    const at = nowSeconds();
    if (problem === null) {
      await this.ledger.stores.webhooks.acknowledge(workspaceId, id, from, to, at);
      this.options.onDelivered?.({ workspaceId, webhookId: id, changes: changes.length, deliveredSequence: to });
      return true;
    }
    const failingSince = webhook.failingSince ?? at;
    const outcome = this.afterFailure(webhook.failedAttempts + 1, failingSince, at, problem);
    await this.ledger.stores.webhooks.recordFailure(workspaceId, id, {
      error: problem,
      at,
      failingSince,
      outcome,
    });
    this.options.onFailed?.({
      workspaceId,
      webhookId: id,
      changes: changes.length,
      deliveredSequence: from,
      error: problem,
      disabled: 'disabledReason' in outcome,
    });
    return true;
  }

  /**
   * The n-th consecutive failure: retry after base * 2^(n-1), jittered down by up to half and
   * capped, but never past the window's end (so the last attempt falls on it); at or past the
   * end, disable.
   */
  private afterFailure(attempt: number, failingSince: number, at: number, error: string): FailureOutcome {
    const windowEnd = failingSince + this.retryWindowSeconds;
    if (at >= windowEnd) {
      const since = new Date(failingSince * 1000).toISOString();
      return {
        disabledReason: `no delivery succeeded within ${this.retryWindowSeconds} s of the first failure (${since}); last error: ${error}`,
      };
    }
    const exponential = Math.min(this.backoffMaxMs, this.backoffBaseMs * 2 ** Math.min(attempt - 1, 40));
    const delayMs = exponential * (0.5 + Math.random() * 0.5);
    return { retryAt: Math.min(windowEnd, at + delayMs / 1000) };
  }

  /** POST the signed body; null on a 2xx, else what went wrong (a status, a timeout, a refusal). */
  private async post(webhook: WebhookRow, body: string): Promise<string | null> {
    let url: URL;
    try {
      url = new URL(webhook.url);
    } catch {
      return 'the URL no longer parses';
    }
    let target: Awaited<ReturnType<typeof resolveTarget>>;
    try {
      target = await resolveTarget(url, this.allowPrivate);
    } catch (error) {
      return cut(
        error instanceof TargetRefusedError ? error.message : `DNS lookup failed: ${(error as Error).message}`,
      );
    }
    // Connect to exactly the address that was checked (no second lookup to race with).
    const lookup: LookupFunction = (_host, options, callback) => {
      if (options.all) callback(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    const client = url.protocol === 'https:' ? https : http;
    const unixSeconds = Math.floor(Date.now() / 1000);
    return new Promise<string | null>((resolve) => {
      let settled = false;
      const finish = (problem: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(problem === null ? null : cut(problem));
      };
      const request = client.request(
        url,
        {
          method: 'POST',
          lookup,
          agent: false,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': 'tms-webhooks/1',
            [SIGNATURE_HEADER]: signatureHeader(webhook.secret, body, unixSeconds),
          },
        },
        (response) => {
          const status = response.statusCode ?? 0;
          // The answer's body is not used; it is read (and dropped) so the exchange completes.
          response.resume();
          response.on('end', () => finish(status >= 200 && status < 300 ? null : `HTTP ${status}`));
          response.on('error', (error) => finish(`response failed: ${error.message}`));
        },
      );
      const timer = setTimeout(() => {
        finish(`no answer within ${this.timeoutMs} ms`);
        request.destroy();
      }, this.timeoutMs);
      request.on('error', (error) => finish(`request failed: ${error.message}`));
      request.end(body);
    });
  }
}

const cut = (text: string) => (text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text);
