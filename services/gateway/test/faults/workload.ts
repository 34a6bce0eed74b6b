import crypto from 'node:crypto';
import { Ledger } from '@tms/ledger';
import { PostgresSearchProvider } from '@tms/search';
import type { TestIssuer } from '@tms/testkit';
import { connectSql, PrivatePostgres, type Sql } from '@tms/testkit/postgres-server';
import { delay, type ServiceProcess } from '@tms/testkit/processes';
import { verifyProof } from '../../../../packages/client/src';

// Clients of the fault tests: writers that create memories under an Idempotency-Key and retry
// the same request until it is acknowledged, and readers of what was acknowledged. Every answer
// is tallied; anything but 200 or the spec's retryable `unavailable` is an anomaly.

export const UNAVAILABLE_MESSAGE = 'The service is temporarily unavailable.';
/**
 * The gateway's environment in the fault tests, besides the database and the issuer: the load
 * comes from one principal, far past the default rate limit, which is not what is under test.
 */
export const FAULT_GATEWAY_ENV = { RATE_LIMITS: 'off' };
/** How long a writer keeps retrying one key before it reports it unresolved. */
const GIVE_UP_MS = 90_000;
const REQUEST_TIMEOUT_MS = 30_000;

export interface Answer {
  status: number;
  text: string;
  body: any;
}

/** Why `answer` is not the spec's 503 `unavailable` body (exact fields), or null when it is. */
export function notUnavailable(answer: Answer): string | null {
  if (answer.status !== 503) return `status ${answer.status}`;
  const error = answer.body?.error;
  if (!answer.body || Object.keys(answer.body).join() !== 'error') return 'body is not {error}';
  const keys = Object.keys(error ?? {}).sort();
  if (keys.join() !== 'code,message,request_id,retry_after_seconds,retryable,status') return `fields ${keys.join()}`;
  if (error.code !== 'unavailable') return `code ${error.code}`;
  if (error.message !== UNAVAILABLE_MESSAGE) return `message ${error.message}`;
  if (error.status !== 503 || error.retryable !== true) return 'status/retryable';
  if (typeof error.request_id !== 'string' || error.request_id.length === 0) return 'request_id';
  const after = error.retry_after_seconds;
  if (!(after === null || (typeof after === 'number' && after >= 0 && after <= 3600))) return 'retry_after_seconds';
  return null;
}

/**
 * What a process wrote at error level or above, or outside its JSON log (a stack trace printed on
 * the way down, a warning about an unhandled rejection). A lost connection is logged at warn.
 */
export function seriousOutput(service: ServiceProcess): string[] {
  const errors = service.logs.filter((entry) => Number(entry.level) >= 50).map((entry) => JSON.stringify(entry));
  const raw = service.output.filter((line) => line.trim() !== '' && !line.startsWith('{'));
  return [...errors, ...raw].map((line) => `${service.name}: ${line.slice(0, 500)}`);
}

export interface Target {
  token: string;
  workspaceId: string;
  namespaceId: string;
}

export interface Acknowledged {
  key: string;
  text: string;
  workspaceId: string;
  memoryId: string;
  sequence: number;
  /** The first acknowledged answer's exact bytes. */
  answer: string;
  request: { token: string; workspaceId: string; body: unknown };
}

export interface WorkloadOptions {
  /** The gateway's current base URL (it changes when a test restarts the gateway). */
  url: () => string;
  targets: Target[];
  writersPerTarget: number;
  readers: number;
  /** Connection refused/reset counts as an anomaly unless the test kills or stops the gateway. */
  networkErrorsExpected: boolean;
}

export async function send(
  url: string,
  method: string,
  path: string,
  options: { token: string; workspaceId: string; key?: string; body?: unknown },
): Promise<Answer> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${options.token}`,
    'x-service-workspace': options.workspaceId,
  };
  if (options.key) headers['idempotency-key'] = options.key;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${url}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, text, body };
}

export class Workload {
  readonly acknowledged: Acknowledged[] = [];
  readonly unresolved: string[] = [];
  readonly anomalies: string[] = [];
  readonly tally = { ok: 0, unavailable: 0, networkErrors: 0 };
  private stopping = false;
  private readonly running: Promise<void>[] = [];

  constructor(private readonly options: WorkloadOptions) {}

  start(): this {
    for (const target of this.options.targets) {
      for (let w = 0; w < this.options.writersPerTarget; w += 1) this.running.push(this.writer(target));
    }
    for (let r = 0; r < this.options.readers; r += 1) this.running.push(this.reader());
    return this;
  }

  /** Stop taking new keys; every key in flight is retried until acknowledged (or given up). */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.running);
  }

  /** Tally one answer; false for a network error or an anomaly. */
  private record(what: string, answer: Answer | Error): 'ok' | 'unavailable' | 'failed' {
    if (answer instanceof Error) {
      this.tally.networkErrors += 1;
      if (!this.options.networkErrorsExpected) this.anomalies.push(`${what}: ${answer.message}`);
      return 'failed';
    }
    if (answer.status === 200) {
      this.tally.ok += 1;
      return 'ok';
    }
    const why = notUnavailable(answer);
    if (why === null) {
      this.tally.unavailable += 1;
      return 'unavailable';
    }
    this.anomalies.push(`${what}: ${why}: ${answer.text.slice(0, 300)}`);
    return 'failed';
  }

  private async writer(target: Target): Promise<void> {
    while (!this.stopping) {
      const key = `fault-${crypto.randomBytes(8).toString('hex')}`;
      const text = `fault memory ${key}`;
      const body = { namespace_id: target.namespaceId, kind: 'claim', text, valid_from: 1700000000 };
      const request = { token: target.token, workspaceId: target.workspaceId, body };
      const giveUp = Date.now() + GIVE_UP_MS;
      for (;;) {
        if (Date.now() > giveUp) {
          this.unresolved.push(key);
          break;
        }
        const answer = await send(this.options.url(), 'POST', '/v1/memories', { ...request, key }).catch(
          (error: Error) => error,
        );
        const outcome = this.record(`POST /v1/memories ${key}`, answer);
        if (outcome === 'ok' && !(answer instanceof Error)) {
          this.acknowledged.push({
            key,
            text,
            workspaceId: target.workspaceId,
            memoryId: answer.body.memory.id,
            sequence: answer.body.commit.sequence,
            answer: answer.text,
            request,
          });
          break;
        }
        // A refusal other than `unavailable` will not change on a retry.
        if (outcome === 'failed' && !(answer instanceof Error)) break;
        await delay(50 + Math.random() * 100);
      }
    }
  }

  private async reader(): Promise<void> {
    while (!this.stopping) {
      const acknowledged = this.acknowledged[Math.floor(Math.random() * this.acknowledged.length)];
      if (!acknowledged) {
        await delay(50);
        continue;
      }
      const { token, workspaceId } = acknowledged.request;
      const path =
        Math.random() < 0.7 ? `/v1/memories/${acknowledged.memoryId}` : `/v1/memories/${acknowledged.memoryId}/history`;
      const answer = await send(this.options.url(), 'GET', path, { token, workspaceId }).catch((error: Error) => error);
      const outcome = this.record(`GET ${path}`, answer);
      if (outcome === 'ok' && !(answer instanceof Error) && path.endsWith(acknowledged.memoryId)) {
        if (answer.body?.view?.revision?.text !== acknowledged.text) {
          this.anomalies.push(`GET ${path}: acknowledged text not read back: ${answer.text.slice(0, 300)}`);
        }
      }
      if (outcome !== 'ok') await delay(50);
    }
  }
}

/**
 * What the ledger must show after the faults, checked on the database and through the gateway:
 * every acknowledged write readable (0 lost), one memory per key (0 duplicated), gap-free commit
 * sequences per workspace, and a replay of every key answering the first acknowledged bytes.
 */
export async function verifyLedger(sql: Sql, url: string, workload: Workload): Promise<string[]> {
  const problems: string[] = [];
  const byWorkspace = new Map<string, Acknowledged[]>();
  for (const ack of workload.acknowledged) {
    byWorkspace.set(ack.workspaceId, [...(byWorkspace.get(ack.workspaceId) ?? []), ack]);
  }
  for (const [workspaceId, acks] of byWorkspace) {
    const sequences = (
      await sql<{ sequence: string }[]>`
        select sequence from commits where workspace_id = ${workspaceId} order by sequence`
    ).map((row) => Number(row.sequence));
    sequences.forEach((sequence, i) => {
      if (sequence !== i + 1) problems.push(`${workspaceId}: commit ${i + 1} is sequence ${sequence}`);
    });
    const acknowledgedSequences = new Set(acks.map((ack) => ack.sequence));
    if (acknowledgedSequences.size !== acks.length) problems.push(`${workspaceId}: two acks share a sequence`);
    for (const sequence of acknowledgedSequences) {
      if (!sequences.includes(sequence)) problems.push(`${workspaceId}: acknowledged sequence ${sequence} missing`);
    }
    // One memory per key, and no memory for a key the clients did not see acknowledged.
    const texts = await sql<{ text: string; memories: string }[]>`
      select convert_from(text, 'UTF8') as text, count(distinct memory_id) as memories
      from revisions where workspace_id = ${workspaceId} group by 1`;
    const memoriesByText = new Map(texts.map((row) => [row.text, Number(row.memories)]));
    for (const ack of acks) {
      const count = memoriesByText.get(ack.text) ?? 0;
      if (count !== 1) problems.push(`${ack.key}: ${count} memories`);
    }
    const faultTexts = texts.filter((row) => row.text.startsWith('fault memory '));
    if (faultTexts.length !== acks.length) {
      problems.push(`${workspaceId}: ${faultTexts.length} memories for ${acks.length} acknowledged keys`);
    }
  }
  // Through the gateway: read back and replay, a few at a time.
  const queue = [...workload.acknowledged];
  await Promise.all(
    Array.from({ length: 6 }, async () => {
      for (let ack = queue.pop(); ack; ack = queue.pop()) {
        const { token, workspaceId, body } = ack.request;
        const read = await send(url, 'GET', `/v1/memories/${ack.memoryId}`, { token, workspaceId });
        if (read.status !== 200 || read.body.view.revision.text !== ack.text) {
          problems.push(`${ack.key}: read back ${read.status} ${read.text.slice(0, 200)}`);
        }
        const replay = await send(url, 'POST', '/v1/memories', { token, workspaceId, body, key: ack.key });
        if (replay.status !== 200 || replay.text !== ack.answer) {
          problems.push(`${ack.key}: replay differs: ${replay.status} ${replay.text.slice(0, 200)} vs ${ack.answer}`);
        }
      }
    }),
  );
  // The hash chain survived the faults: a proof of each workspace's first acknowledged revision,
  // recomputed from the rows up to the head, reaches the head's stored chain hash.
  for (const acks of byWorkspace.values()) {
    const first = [...acks].sort((a, b) => a.sequence - b.sequence)[0] as Acknowledged;
    const { token, workspaceId } = first.request;
    const revisionId = (JSON.parse(first.answer) as { revision: { id: string } }).revision.id;
    const proof = await send(url, 'GET', `/v1/ledger/proofs/${revisionId}`, { token, workspaceId });
    const verdict = proof.status === 200 ? await verifyProof(proof.body) : { valid: false, reason: proof.text };
    if (!verdict.valid) problems.push(`${workspaceId}: the chain does not hold: ${verdict.reason}`);
  }
  return problems;
}

/** A Postgres server of the test's own (one it may stop or crash) holding an empty database `tms`. */
export async function privateServer(): Promise<{ server: PrivatePostgres; databaseUrl: string }> {
  const server = await PrivatePostgres.create();
  const admin = connectSql(server.url(), 1);
  await admin`create database tms`;
  await admin.end({ timeout: 1 });
  return { server, databaseUrl: server.url('tms') };
}

/** Migrate the database and enroll an owner (in this process, as an operator would). */
export async function prepareLedger(databaseUrl: string, issuer: TestIssuer): Promise<string> {
  const ledger = await Ledger.open({ databaseUrl });
  try {
    await ledger.migrate();
    const subject = `fault-owner-${crypto.randomBytes(4).toString('hex')}`;
    await ledger.stores.directory.enroll(issuer.sessionIssuer, subject, Date.now() / 1000);
    return subject;
  } finally {
    await ledger.close();
  }
}

/** `count` workspaces, each with one namespace, created through the gateway by the owner. */
export async function createTargets(url: string, token: string, count: number): Promise<Target[]> {
  const targets: Target[] = [];
  for (let i = 0; i < count; i += 1) {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${url}/v1/workspaces`, {
      method: 'POST',
      headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ name: `fault ${i}` }),
    });
    const workspace = (await created.json()) as { workspace: { id: string } };
    if (created.status !== 200) throw new Error(`workspace: ${JSON.stringify(workspace)}`);
    const workspaceId = workspace.workspace.id;
    const namespace = await send(url, 'POST', '/v1/namespaces', {
      token,
      workspaceId,
      key: crypto.randomUUID(),
      body: { parent_id: null, name: 'faults' },
    });
    if (namespace.status !== 200) throw new Error(`namespace: ${namespace.text}`);
    targets.push({ token, workspaceId, namespaceId: namespace.body.namespace.id });
  }
  return targets;
}

/**
 * Wait until the index has caught up with every workspace's head, then compare: the Postgres
 * search index must hold exactly the unpurged revisions of each workspace. Answers the problems.
 */
export async function indexEqualsLedger(databaseUrl: string, workspaceIds: string[], timeoutMs = 60_000) {
  const ledger = await Ledger.open({ databaseUrl, maxConnections: 2 });
  const problems: string[] = [];
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const behind = await ledger.stores.indexState.lag('postgres', true);
      if (behind.length === 0) break;
      if (Date.now() > deadline) return [`index still behind: ${JSON.stringify(behind)}`];
      await delay(200);
    }
    const provider = new PostgresSearchProvider(ledger.handle.db);
    const sql = connectSql(databaseUrl, 1);
    try {
      for (const workspaceId of workspaceIds) {
        const expected = (
          await sql<{ id: string }[]>`
            select id from revisions where workspace_id = ${workspaceId} and purged_at is null order by id`
        ).map((row) => row.id);
        const indexed = await provider.indexedRevisionIds(workspaceId);
        if (expected.length === 0) problems.push(`${workspaceId}: no revisions at all`);
        if (JSON.stringify(indexed) !== JSON.stringify(expected)) {
          const missing = expected.filter((id) => !indexed.includes(id));
          const extra = indexed.filter((id) => !expected.includes(id));
          problems.push(`${workspaceId}: index differs, missing ${missing.join()}, extra ${extra.join()}`);
        }
      }
    } finally {
      await sql.end({ timeout: 1 });
    }
  } finally {
    await ledger.close();
  }
  return problems;
}
