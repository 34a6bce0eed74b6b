import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../../services/gateway/test/harness';
import { createClient, type OperationError, type RetryEvent, type TmsClient, TmsError, TmsNetworkError } from '../src';
import { type CuttingProxy, headerOf, startCuttingProxy } from './cutting-proxy';

/*
 * The client against a real gateway on loopback (embedded ledger and indexer), through a TCP proxy
 * that records what was sent and can cut a connection after the gateway has answered.
 */

let h: Harness;
let proxy: CuttingProxy;
let token: string;
let workspace: string;
let client: TmsClient;
const retries: RetryEvent[] = [];

beforeAll(async () => {
  h = await startHarness({
    driver: 'pglite',
    env: { INDEXER: 'embedded', RATE_LIMITS: '*=1000/60,me.get=1/1' },
  });
  proxy = await startCuttingProxy(h.url);
  const created = await h.workspace();
  token = await created.owner.token();
  workspace = created.id;
  client = createClient({
    baseUrl: proxy.url,
    token,
    workspace,
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
    onRetry: (event) => retries.push(event),
  });
});
afterAll(async () => {
  await proxy?.close();
  await h?.close();
});

function headsMatching(pattern: RegExp): string[] {
  return proxy.heads().filter((head) => pattern.test(head));
}

async function namespace(name: string, parent_id: string | null = null): Promise<string> {
  return (await client.namespaces.create({ parent_id, name })).namespace.id;
}

describe('@tms/client against the gateway', () => {
  it('sends the bound workspace to operations that take one, and only to them', async () => {
    const id = await namespace('bound');
    const me = await client.me.get();
    expect(me.actor.id).toMatch(/\S/);

    const [create] = headsMatching(/^POST \/v1\/namespaces /);
    expect(create && headerOf(create, 'x-service-workspace')).toBe(workspace);
    const [meHead] = headsMatching(/^GET \/v1\/me /);
    expect(meHead && headerOf(meHead, 'x-service-workspace')).toBeNull();

    // Bound to another workspace of the same person, the namespace is not there.
    const other = await client.workspaces.create({ name: 'elsewhere' });
    const elsewhere = client.withWorkspace(other.workspace.id);
    expect(elsewhere.workspace).toBe(other.workspace.id);
    const names = [];
    for await (const ns of elsewhere.paginate('namespaces.list')) names.push(ns.id);
    expect(names).not.toContain(id);
    await expect(elsewhere.namespaces.get({ id })).rejects.toMatchObject({ code: 'not_found', status: 404 });
    expect((await client.namespaces.get({ id })).namespace.id).toBe(id);
  });

  it('retries a write whose answer was cut with the same Idempotency-Key, and it commits once', async () => {
    const ns = await namespace('cut');
    const before = retries.length;
    proxy.cut(/^POST \/v1\/memories /, 1);
    const created = await client.memories.create({
      namespace_id: ns,
      kind: 'claim',
      text: 'Ana prefers tea.',
      valid_from: 1700000000,
    });
    expect(proxy.cuts).toBe(1);
    expect(retries.slice(before).map((event) => [event.operation, event.failure.kind])).toEqual([
      ['memories.create', 'network'],
    ]);

    const posts = headsMatching(/^POST \/v1\/memories /);
    expect(posts).toHaveLength(2);
    const keys = posts.map((head) => headerOf(head, 'idempotency-key'));
    expect(keys[0]).toMatch(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/);
    expect(keys[1]).toBe(keys[0]);

    const listed = [];
    for await (const item of client.paginate('memories.list', { namespace_id: ns })) listed.push(item.memory.id);
    expect(listed).toEqual([created.memory.id]);
    const history = await client.memories.history({ id: created.memory.id });
    expect(history.revisions.map((revision) => revision.generation)).toEqual([1]);
  });

  it('retries a read whose answer was cut', async () => {
    const id = await namespace('read-cut');
    proxy.cut(/^GET \/v1\/namespaces\/ns_/, 1);
    const cutsBefore = proxy.cuts;
    expect((await client.namespaces.get({ id })).namespace.name).toBe('read-cut');
    expect(proxy.cuts).toBe(cutsBefore + 1);
  });

  it('gives up on a cut connection when retries are off, with a TmsNetworkError', async () => {
    const single = createClient({ baseUrl: proxy.url, token, workspace, retry: false });
    proxy.cut(/^GET \/v1\/namespaces[ ?]/, 1);
    const failure = await single.namespaces.list().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TmsNetworkError);
    expect(failure).toMatchObject({ operation: 'namespaces.list', attempts: 1 });
  });

  it('follows the cursor through every page of a listing', async () => {
    const parent = await namespace('paged');
    const children: string[] = [];
    for (let i = 0; i < 5; i += 1) children.push(await namespace(`child-${i}`, parent));
    const pagesBefore = headsMatching(/^GET \/v1\/namespaces\?/).length;

    const seen: string[] = [];
    for await (const ns of client.paginate('namespaces.list', { parent_id: parent, limit: 2 })) seen.push(ns.id);
    expect([...seen].sort()).toEqual([...children].sort());

    const pages = headsMatching(/^GET \/v1\/namespaces\?/).slice(pagesBefore);
    expect(pages).toHaveLength(3);
    expect(pages.filter((head) => head.includes('cursor=')).length).toBe(2);
  });

  it('waits out rate_limited, honouring retry_after_seconds', async () => {
    const limited = createClient({ baseUrl: proxy.url, token: await (await h.human()).token(), retry: false });
    const events: RetryEvent[] = [];
    const human = await h.human();
    const waiting = createClient({
      baseUrl: proxy.url,
      getToken: () => human.token(),
      onRetry: (event) => events.push(event),
    });
    expect(waiting.workspace).toBeNull();
    for (let i = 0; i < 3; i += 1) expect((await waiting.me.get()).actor.id).toBe(human.actorId);
    const limitedRetries = events.filter((e) => e.failure.kind === 'answer' && e.failure.error.code === 'rate_limited');
    expect(limitedRetries.length).toBeGreaterThan(0);
    for (const event of limitedRetries) {
      const seconds = event.failure.kind === 'answer' ? event.failure.error.retry_after_seconds : null;
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(event.delayMs).toBeGreaterThanOrEqual((seconds ?? 0) * 1000);
    }

    // Without retries the refusal surfaces as a typed error with the spec's fields.
    await limited.me.get().catch(() => undefined);
    const refused = await limited.me.get().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TmsError);
    expect(refused).toMatchObject({ code: 'rate_limited', status: 429, retryable: true, operation: 'me.get' });
    expect((refused as TmsError).retry_after_seconds).toBeGreaterThanOrEqual(1);
    expect((refused as TmsError).request_id).toMatch(/\S/);
  });

  it('retries projection_pending after its retry_after_seconds, then gives up after maxAttempts', async () => {
    const ns = await namespace('pending');
    const events: RetryEvent[] = [];
    const bounded = createClient({
      baseUrl: proxy.url,
      token,
      workspace,
      retry: { maxAttempts: 2 },
      onRetry: (event) => events.push(event),
    });
    const input = {
      namespace_ids: [ns],
      query: 'tea',
      budget: { max_context_chars: 100 },
      min_sequence: 1_000_000_000,
      on_pending: 'error' as const,
    };
    const refused = await bounded.recall(input).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TmsError);
    expect(refused).toMatchObject({ code: 'projection_pending', status: 409, retryable: true });
    const seconds = (refused as TmsError).retry_after_seconds;
    expect(seconds).toBeGreaterThan(0);
    expect(events.map((event) => [event.operation, event.attempt])).toEqual([['recall', 1]]);
    expect(events[0]?.delayMs).toBeGreaterThanOrEqual((seconds ?? 0) * 1000);
  });

  it('raises TmsError with the body fields, the request id and X-Error-Detail', async () => {
    const missing = await client.memories
      .get({ id: 'mem_nope' }, { requestId: 'req-client-test-1' })
      .catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(TmsError);
    const code: OperationError<'memories.get'>['code'] = (missing as OperationError<'memories.get'>).code;
    expect(code).toBe('not_found');
    expect(missing).toMatchObject({
      code: 'not_found',
      status: 404,
      retryable: false,
      request_id: 'req-client-test-1',
      retry_after_seconds: null,
      detail: null,
      message: 'The resource was not found.',
    });

    const invalid = await client.namespaces
      .create({ parent_id: null, name: 'x'.repeat(10_000) }, { requestId: 'req-client-test-2' })
      .catch((error: unknown) => error);
    expect(invalid).toMatchObject({ code: 'invalid_input', status: 400, retryable: false });
    // `detail` is the answer's X-Error-Detail header as the gateway sent it (null when absent).
    const answer = proxy.responseHeads().find((head) => headerOf(head, 'x-request-id') === 'req-client-test-2');
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((invalid as TmsError).detail).toBe(headerOf(answer ?? '', 'x-error-detail'));

    const anonymous = createClient({ baseUrl: proxy.url, workspace });
    await expect(anonymous.namespaces.list()).rejects.toMatchObject({ code: 'unauthenticated', status: 401 });

    // A non-retryable error is not retried.
    const before = retries.length;
    await expect(client.memories.get({ id: 'mem_nope' })).rejects.toBeInstanceOf(TmsError);
    expect(retries.length).toBe(before);
  });

  it('recalls once the index has caught up with a commit', async () => {
    const ns = await namespace('recall');
    const { commit, memory } = await client.memories.create({
      namespace_id: ns,
      kind: 'episode',
      text: 'Ana ordered mint tea at the cafe.',
      valid_from: 1700000000,
    });
    const answer = await client.recallWhenIndexed(
      { namespace_ids: [ns], query: 'mint tea', budget: { max_context_chars: 2000 } },
      commit,
    );
    expect(answer.status).toBe('complete');
    expect(answer.indexed_sequence).toBeGreaterThanOrEqual(commit.sequence);
    expect(answer.items.map((item) => item.memory.id)).toEqual([memory.id]);
  });
});
