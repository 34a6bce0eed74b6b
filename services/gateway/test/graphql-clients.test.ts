import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { freshKey } from '@tms/testkit';
import { Client, fetchExchange } from '@urql/core';
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';

/*
 * The GraphQL clients a frontend picks, each in its default configuration, against a live
 * gateway on loopback: urql (queries over GET, mutations over POST), Apollo Client (everything
 * over POST) and graphql-sse (the `changes` subscription over server-sent events). Each only
 * adds the bearer token and the workspace header. Transport only: Postgres.
 */

const CREATE = `mutation Remember($ns: ID!, $text: String!, $key: String!) {
  createMemory(input: { namespaceId: $ns, kind: claim, text: $text, validFrom: 1700000000 }, idempotencyKey: $key) {
    memory { id generation }
    revision { text status }
  }
}`;

const READ = `query Read($id: ID!) {
  memory(id: $id) { view { memory { id kind generation } revision { text } stale } }
}`;

const CHANGES = `subscription Changes($after: SafeInt) {
  changes(after: $after) { nextAfter changes { sequence operation subjects { type id } } }
}`;

interface Created {
  createMemory: { memory: { id: string; generation: number }; revision: { text: string; status: string } };
}
interface Read {
  memory: { view: { memory: { id: string; kind: string; generation: number }; revision: { text: string } } };
}

describe('GraphQL clients in their default configuration (postgres)', () => {
  let h: Harness;
  let headers: Record<string, string>;
  let namespaceId: string;
  const url = () => `${h.url}/graphql`;

  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
    const workspace = await h.workspace();
    headers = { authorization: `Bearer ${await workspace.owner.token()}`, 'x-service-workspace': workspace.id };
    namespaceId = (await workspace.api.post('/v1/namespaces', { parent_id: null, name: 'clients' })).body.namespace.id;
  });
  afterAll(() => h?.close());

  it('urql queries (over GET, as it does by default) and mutates', async () => {
    // Only records which method urql chose; the request goes out as urql built it.
    const methods: string[] = [];
    const urql = new Client({
      url: url(),
      exchanges: [fetchExchange],
      fetchOptions: { headers },
      fetch: (input, init) => {
        methods.push(init?.method ?? 'GET');
        return fetch(input, init);
      },
    });
    const created = await urql
      .mutation<Created>(CREATE, { ns: namespaceId, text: 'Ana prefers tea.', key: freshKey() })
      .toPromise();
    expect(created.error).toBeUndefined();
    const memory = created.data?.createMemory.memory;
    expect(memory?.generation).toBe(1);
    const read = await urql.query<Read>(READ, { id: memory?.id }, { requestPolicy: 'network-only' }).toPromise();
    expect(read.error).toBeUndefined();
    expect(read.data?.memory.view.revision.text).toBe('Ana prefers tea.');
    expect(read.data?.memory.view.memory).toEqual({ id: memory?.id, kind: 'claim', generation: 1 });
    expect(methods).toEqual(['POST', 'GET']);
  });

  it('Apollo Client queries and mutates (over POST)', async () => {
    const apollo = new ApolloClient({ link: new HttpLink({ uri: url(), headers }), cache: new InMemoryCache() });
    try {
      const created = await apollo.mutate<Created>({
        mutation: gql(CREATE),
        variables: { ns: namespaceId, text: 'Ben prefers coffee.', key: freshKey() },
      });
      expect(created.error).toBeUndefined();
      const memory = created.data?.createMemory.memory;
      expect(created.data?.createMemory.revision.text).toBe('Ben prefers coffee.');
      const read = await apollo.query<Read>({ query: gql(READ), variables: { id: memory?.id } });
      expect(read.error).toBeUndefined();
      expect(read.data?.memory.view.revision.text).toBe('Ben prefers coffee.');
      expect(read.data?.memory.view.memory).toMatchObject({ id: memory?.id, kind: 'claim', generation: 1 });
    } finally {
      apollo.stop();
    }
  });

  it('graphql-sse subscribes to the changes and sees a commit made meanwhile', async () => {
    const client = createClient({ url: url(), headers });
    const events = client.iterate<{
      changes: { nextAfter: number; changes: { operation: string; subjects: { id: string }[] }[] };
    }>({
      query: CHANGES,
      variables: { after: 0 },
    });
    try {
      // The replay of the workspace's past commits comes first.
      const first = await events.next();
      expect(first.done).toBe(false);
      const urql = new Client({ url: url(), exchanges: [fetchExchange], fetchOptions: { headers } });
      const created = await urql
        .mutation<Created>(CREATE, { ns: namespaceId, text: 'Cleo prefers water.', key: freshKey() })
        .toPromise();
      const id = created.data?.createMemory.memory.id as string;
      expect(id).toMatch(/^mem_/);
      const seen = (event: typeof first) =>
        !event.done &&
        (event.value.data?.changes.changes ?? []).some((change) =>
          change.subjects.some((subject) => subject.id === id),
        );
      let event = first;
      while (!seen(event)) {
        event = await events.next();
        expect(event.done, 'the stream ended before the commit').toBe(false);
        expect(event.value?.errors).toBeUndefined();
      }
    } finally {
      await events.return?.();
      client.dispose();
    }
  });
});
