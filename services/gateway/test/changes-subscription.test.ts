// biome-ignore-all lint/suspicious/noExplicitAny: events are walked as plain JSON.
import { createClient, type ExecutionResult } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildScenario, memoryIn, ok, type Scenario } from './changes-scenario';
import { type Harness, startHarness } from './harness';

/**
 * The GraphQL subscription `changes` over server-sent events, read with the graphql-sse client
 * (distinct connections mode, Yoga's SSE transport).
 */

const SUBSCRIPTION = `subscription($after: SafeInt, $ns: ID) {
  changes(after: $after, namespaceId: $ns) {
    nextAfter headSequence changes { sequence operation subjects { type id namespaceId } }
  }
}`;

/** One open stream: every event it has received, whether it has ended, and a way to wait for either. */
class Stream {
  readonly events: ExecutionResult<any>[] = [];
  ended = false;
  private waiters: (() => void)[] = [];
  private readonly iterator: AsyncIterableIterator<ExecutionResult<any>>;
  readonly done: Promise<void>;

  constructor(url: string, token: string, workspaceId: string, variables: Record<string, unknown>) {
    const client = createClient({
      url: `${url}/graphql`,
      headers: { authorization: `Bearer ${token}`, 'x-service-workspace': workspaceId },
      retryAttempts: 0,
    });
    const iterator = client.iterate<any, Record<string, unknown>>({ query: SUBSCRIPTION, variables });
    this.iterator = iterator;
    this.done = (async () => {
      try {
        for await (const event of iterator) {
          this.events.push(event);
          this.wake();
        }
      } finally {
        this.ended = true;
        this.wake();
        client.dispose();
      }
    })();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Every change received so far, in arrival order. */
  get changes(): any[] {
    return this.events.flatMap((e) => e.data?.changes?.changes ?? []);
  }

  /** Resolve once `predicate` holds (checked on every event and at the end). */
  async until(predicate: () => boolean): Promise<void> {
    while (!predicate()) {
      if (this.ended && !predicate()) throw new Error(`stream ended first: ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
    await this.done.catch(() => {});
  }
}

describe('changes subscription over SSE (postgres)', () => {
  let h: Harness;
  let s: Scenario;
  const open: Stream[] = [];
  const stream = async (token: string, variables: Record<string, unknown>) => {
    const created = new Stream(h.url, token, s.workspaceId, variables);
    open.push(created);
    return created;
  };

  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres', env: { GRAPHQL_MAX_STREAMS: '3' } });
    s = await buildScenario(h);
  });
  afterAll(async () => {
    await Promise.all(open.map((o) => o.close()));
    await h?.close();
  });

  it('replays from `after`, then delivers each new change as it commits, in order', async () => {
    const head = (await ok(s.admin.get('/v1/changes', { query: { limit: 1 } }))).body.head_sequence;
    const admin = await stream(await s.owner.token(), { after: 0 });
    await admin.until(() => admin.changes.some((c) => c.sequence === head));
    const created = (await memoryIn(s.admin, s.ns.a, 'streamed')).body;
    // Arrival is asserted, not its timing: the notification wakes the stream at once.
    await admin.until(() => admin.changes.some((c) => c.sequence === created.commit.sequence));
    const sequences = admin.changes.map((c) => c.sequence);
    expect(sequences).toEqual(Array.from({ length: created.commit.sequence }, (_, i) => i + 1));
    expect(admin.changes.at(-1)).toEqual({
      sequence: created.commit.sequence,
      operation: 'memories.create',
      subjects: [
        { type: 'memory', id: created.memory.id, namespaceId: s.ns.a },
        { type: 'revision', id: created.revision.id, namespaceId: s.ns.a },
      ],
    });
    expect(admin.events.every((e) => e.errors === undefined)).toBe(true);
    await admin.close();
  });

  it('shows a reader only what it may read, and ends the stream when its grant is revoked', async () => {
    const reader = await stream(await s.reader.token(), { ns: s.ns.a });
    const inA = (await memoryIn(s.admin, s.ns.a, 'for the reader')).body;
    const inB = (await memoryIn(s.admin, s.ns.b, 'not for the reader')).body;
    const afterB = (await memoryIn(s.admin, s.ns.a1, 'for the reader, below A')).body;
    await reader.until(() => reader.changes.some((c) => c.sequence === afterB.commit.sequence));
    const seen = reader.changes.map((c) => c.sequence);
    expect(seen).toContain(inA.commit.sequence);
    expect(seen).not.toContain(inB.commit.sequence);
    expect(reader.changes.flatMap((c) => c.subjects).every((x: any) => [s.ns.a, s.ns.a1].includes(x.namespaceId))).toBe(
      true,
    );

    await ok(s.admin.put(`/v1/namespaces/${s.ns.a}/grants`, { grants: [] }));
    await reader.done;
    const last = reader.events.at(-1);
    expect(last?.errors?.[0]?.extensions).toMatchObject({ code: 'not_found' });
    expect(last?.data?.changes ?? null).toBeNull();
    // Nothing written after the revocation reached it.
    const later = (await memoryIn(s.admin, s.ns.a, 'after the revocation')).body;
    expect(reader.changes.map((c) => c.sequence)).not.toContain(later.commit.sequence);
    await ok(
      s.admin.put(`/v1/namespaces/${s.ns.a}/grants`, {
        grants: [{ target: { kind: 'actor', actor_id: s.reader.actorId }, capabilities: ['read'], inherit: true }],
      }),
    );
  });

  it('ends the stream of a member removed from the workspace', async () => {
    const reader = await stream(await s.reader.token(), {});
    const inA = (await memoryIn(s.admin, s.ns.a, 'before the removal')).body;
    await reader.until(() => reader.changes.some((c) => c.sequence === inA.commit.sequence));
    await ok(
      s.admin.put(`/v1/workspaces/${s.workspaceId}/members`, {
        members: [{ actor_id: s.owner.actorId, role: 'admin' }],
      }),
    );
    await reader.done;
    expect(reader.events.at(-1)?.errors?.[0]?.extensions).toMatchObject({ code: 'not_found' });
    await ok(
      s.admin.put(`/v1/workspaces/${s.workspaceId}/members`, {
        members: [
          { actor_id: s.owner.actorId, role: 'admin' },
          { actor_id: s.reader.actorId, role: 'member' },
        ],
      }),
    );
  });

  it('ends the stream of a revoked service key', async () => {
    const key = (
      await ok(
        s.admin.post('/v1/credentials', {
          kind: 'service_key',
          name: 'feed',
          capabilities: ['read'],
          namespace_ids: null,
          expires_at: null,
        }),
      )
    ).body;
    await ok(
      s.admin.put(`/v1/namespaces/${s.ns.b}/grants`, {
        grants: [
          { target: { kind: 'credential', credential_id: key.credential.id }, capabilities: ['read'], inherit: true },
        ],
      }),
    );
    const keyed = await stream(key.secret, {});
    const inB = (await memoryIn(s.admin, s.ns.b, 'for the key')).body;
    await keyed.until(() => keyed.changes.some((c) => c.sequence === inB.commit.sequence));
    await ok(s.admin.post(`/v1/credentials/${key.credential.id}/revoke`, {}));
    await keyed.done;
    expect(keyed.events.at(-1)?.errors?.[0]?.extensions).toMatchObject({ code: 'unauthenticated' });
  });

  it('keeps authentication, the strict request parser and bad-input errors', async () => {
    const body = JSON.stringify({ query: SUBSCRIPTION, variables: { after: 0 } });
    const headers = { 'content-type': 'application/json', accept: 'text/event-stream' };
    const anonymous = await fetch(`${h.url}/graphql`, { method: 'POST', headers, body });
    expect(anonymous.status).toBe(401);
    expect((await anonymous.json()).error.code).toBe('unauthenticated');

    const authorized = {
      ...headers,
      authorization: `Bearer ${await s.owner.token()}`,
      'x-service-workspace': s.workspaceId,
    };
    const duplicate = await fetch(`${h.url}/graphql`, {
      method: 'POST',
      headers: authorized,
      body: `{"query":${JSON.stringify(SUBSCRIPTION)},"query":"subscription { changes { nextAfter } }"}`,
    });
    const duplicateText = await duplicate.text();
    expect(duplicateText).toContain('invalid_input');
    expect(duplicateText).not.toContain('"changes":{');

    const negative = new Stream(h.url, await s.owner.token(), s.workspaceId, { after: -1 });
    await negative.done;
    expect(negative.events.at(-1)?.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_input' });
  });
  it('bounds the open streams per process: past the bound a subscription is refused with unavailable', async () => {
    const token = await s.owner.token();
    const head = (await ok(s.admin.get('/v1/changes', { query: { limit: 1 } }))).body.head_sequence;
    const streams = [await stream(token, { after: head }), await stream(token, { after: head })];
    streams.push(await stream(token, { after: head }));
    // Three are open (GRAPHQL_MAX_STREAMS=3) once each has delivered the next change.
    const next = (await memoryIn(s.admin, s.ns.a, 'fills the slots')).body;
    for (const open of streams) await open.until(() => open.changes.some((c) => c.sequence === next.commit.sequence));
    const refused = await stream(token, { after: head });
    await refused.done;
    expect(refused.events).toHaveLength(1);
    expect(refused.events[0]?.errors?.[0]?.extensions).toMatchObject({ code: 'unavailable', retryable: true });
    // A client that goes away frees its slot (once the server has seen the connection close).
    await streams[0]?.close();
    let again: Stream | null = null;
    for (let attempt = 0; attempt < 100 && again === null; attempt += 1) {
      const candidate = await stream(token, { after: head });
      await candidate.until(() => candidate.ended || candidate.events.length > 0);
      if (candidate.changes.some((c) => c.sequence === next.commit.sequence)) again = candidate;
      else expect(candidate.events[0]?.errors?.[0]?.extensions).toMatchObject({ code: 'unavailable' });
    }
    expect(again).not.toBeNull();
    for (const open of [...streams, again as Stream]) await open.close();
  });

  it('frees the slot of a client that leaves at once, whatever it accepted, however early', async () => {
    const token = await s.owner.token();
    const head = (await ok(s.admin.get('/v1/changes', { query: { limit: 1 } }))).body.head_sequence;
    // Eight clients that leave before, while and just after their stream starts (`*/*` gets a
    // stream too, though the request names none; with the slots still taken by the ones before,
    // some are refused instead).
    for (const accept of ['*/*', 'text/event-stream']) {
      for (const leaveAfterMs of [0, 5, 25, 100]) {
        const leave = new AbortController();
        setTimeout(() => leave.abort(), leaveAfterMs);
        await fetch(`${h.url}/graphql`, {
          method: 'POST',
          signal: leave.signal,
          headers: {
            authorization: `Bearer ${token}`,
            'x-service-workspace': s.workspaceId,
            'content-type': 'application/json',
            accept,
          },
          body: JSON.stringify({ query: SUBSCRIPTION, variables: { after: head } }),
        }).then(
          async (response) => {
            await new Promise((resolve) => setTimeout(resolve, leaveAfterMs + 10));
            await response.body?.cancel().catch(() => {});
          },
          () => {}, // left before the answer began
        );
      }
    }
    // All three slots (GRAPHQL_MAX_STREAMS=3) come free once the server has seen them go.
    const next = (await memoryIn(s.admin, s.ns.a, 'after the churn')).body;
    let held: Stream[] = [];
    for (let attempt = 0; attempt < 100; attempt += 1) {
      held = [
        await stream(token, { after: head }),
        await stream(token, { after: head }),
        await stream(token, { after: head }),
      ];
      for (const one of held) await one.until(() => one.ended || one.events.length > 0);
      if (held.every((one) => one.changes.some((c) => c.sequence === next.commit.sequence))) break;
      for (const one of held) await one.close();
      held = [];
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(held).toHaveLength(3);
    for (const one of held) await one.close();
  });
});
