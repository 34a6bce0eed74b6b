// biome-ignore-all lint/suspicious/noExplicitAny: answers are walked as plain JSON in tests.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { planExport } from '@tms/domain';
import { type Ledger, verifyExportLines, verifyWorkspaceChain } from '@tms/ledger';
import { type ApiClient, type CallResult, freshKey, sha256Hex } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, TmsError, verifyProof } from '../../../packages/client/src';
import { FRAGMENTS, GraphqlClient, gql } from './graphql-client';
import { DRIVERS, type Harness, startHarness } from './harness';
import { expectError, expectShape } from './shapes';

/*
 * External keys on memories (decisions §12): a caller's own name for a memory, unique among a
 * namespace's current memories, freed by a retraction or a purge, kept by corrections, covered
 * by the hash chain and erased by a purge; on every transport and both ledgers.
 */

const heldBy = (memoryId: string) => `body.key: held by memory ${memoryId}`;

function createBody(namespaceId: string, key: string | undefined, text = 'Ana prefers tea.') {
  return { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0, ...(key === undefined ? {} : { key }) };
}

describe.each(DRIVERS)('memory keys (%s)', (driver) => {
  let h: Harness;
  let ledger: Ledger;
  let ws: string;
  let api: ApiClient;
  let gw: GraphqlClient;
  let mcp: Client;
  let gwToken: () => Promise<string>;

  beforeAll(async () => {
    // The embedded indexer (lexical only), so that recall finds what is written.
    h = await startHarness({ driver, env: { MCP_TOOLS: 'all', INDEXER: 'embedded' } });
    ledger = h.gateway.ledger;
    const workspace = await h.workspace();
    ws = workspace.id;
    api = workspace.api;
    const token = await workspace.owner.token();
    gwToken = workspace.owner.token;
    gw = new GraphqlClient(h.url, token, ws);
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', h.url), {
      requestInit: { headers: { authorization: `Bearer ${token}`, 'x-service-workspace': ws } },
    });
    mcp = new Client({ name: 'memory-keys-test', version: '1.0.0' });
    await mcp.connect(transport);
  });
  afterAll(async () => {
    await mcp?.close().catch(() => {});
    await h?.close();
  });

  async function namespace(name = 'facts'): Promise<string> {
    const res = expectShape(
      await api.post('/v1/namespaces', { parent_id: null, name: freshKey(name) }),
      'namespaces.create',
    );
    return res.namespace.id;
  }

  async function create(namespaceId: string, key?: string, text?: string) {
    return expectShape(await api.post('/v1/memories', createBody(namespaceId, key, text)), 'memories.create');
  }

  function listByKey(namespaceId: string, key: string, clocks: { known_at?: number; as_of?: number } = {}) {
    return api.get('/v1/memories', { query: { namespace_id: namespaceId, key, ...clocks } });
  }

  async function heldIds(namespaceId: string, key: string, clocks: { known_at?: number; as_of?: number } = {}) {
    const listed = expectShape(await listByKey(namespaceId, key, clocks), 'memories.list');
    return listed.items.map((item: any) => item.memory.id);
  }

  const forget = (memoryId: string, mode: 'retract' | 'purge', expectedGeneration = 1) =>
    api.post(`/v1/memories/${memoryId}/forget`, { mode, expected_generation: expectedGeneration });

  async function callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return (await mcp.callTool({ name, arguments: args })) as CallToolResult;
  }

  it('a create with a key shows it on every read and transport; a memory without one shows null', async () => {
    const ns = await namespace();
    const made = await create(ns, 'crm:contact/42 – Ana ✓ 😀');
    expect(made.memory.key).toBe('crm:contact/42 – Ana ✓ 😀');
    const plain = await create(ns, undefined, 'no key here');
    expect(plain.memory.key).toBeNull();

    const got = expectShape(await api.get(`/v1/memories/${made.memory.id}`), 'memories.get');
    expect(got.view.memory.key).toBe('crm:contact/42 – Ana ✓ 😀');
    const listed = expectShape(await api.get('/v1/memories', { query: { namespace_id: ns } }), 'memories.list');
    expect(Object.fromEntries(listed.items.map((i: any) => [i.memory.id, i.memory.key]))).toEqual({
      [made.memory.id]: 'crm:contact/42 – Ana ✓ 😀',
      [plain.memory.id]: null,
    });

    const graphql = await gw.data(
      gql(`query($id: ID!, $ns: ID!) {
        memory(id: $id) { view { memory { ...M } } }
        namespace(id: $ns) { memories { edges { node { memory { id key } } } } }
      }`),
      { id: made.memory.id, ns },
    );
    expect(graphql.memory.view.memory).toEqual({
      id: made.memory.id,
      namespaceId: ns,
      kind: 'claim',
      generation: 1,
      key: 'crm:contact/42 – Ana ✓ 😀',
    });
    expect(graphql.namespace.memories.edges.map((e: any) => e.node.memory.key).sort()).toEqual([
      'crm:contact/42 – Ana ✓ 😀',
      null,
    ]);

    const viaTool = await callTool('svc_memories_get', { id: made.memory.id });
    expect(viaTool.isError).toBeFalsy();
    expect((viaTool.structuredContent as any).view.memory.key).toBe('crm:contact/42 – Ana ✓ 😀');
    expect(FRAGMENTS.M).toContain('key');

    // Recall shows it too, once the index has the write.
    const recalled = expectShape(
      await api.post('/v1/recall', {
        namespace_ids: [ns],
        query: 'tea',
        min_sequence: plain.commit.sequence,
        wait_ms: 10_000,
      }),
      'recall',
    );
    expect(recalled.status).toBe('complete');
    expect(recalled.items.map((item: any) => [item.memory.id, item.memory.key])).toEqual([
      [made.memory.id, 'crm:contact/42 – Ana ✓ 😀'],
    ]);
  });

  it('a held key is a conflict naming its holder, on REST, GraphQL and MCP; keys are per namespace and exact', async () => {
    const ns = await namespace();
    const holder = await create(ns, 'user:7');

    const again = await api.post('/v1/memories', createBody(ns, 'user:7', 'another text'));
    expectError(again, 'conflict', { detail: heldBy(holder.memory.id) });

    const mutation = gql(`mutation($input: CreateMemoryInput!, $key: String!) {
      createMemory(input: $input, idempotencyKey: $key) { memory { ...M } }
    }`);
    const graphql = await gw.request(mutation, {
      input: { namespaceId: ns, kind: 'claim', text: 'another text', validFrom: 0, key: 'user:7' },
      key: freshKey('gql'),
    });
    expect(graphql.body.errors?.[0]?.extensions?.code).toBe('conflict');
    expect(graphql.body.errors?.[0]?.message).toBe(heldBy(holder.memory.id));
    expect(graphql.headers.get('x-error-detail')).toBe(heldBy(holder.memory.id));

    const tool = await callTool('svc_memories_create', {
      ...createBody(ns, 'user:7', 'another text'),
      idempotency_key: freshKey('mcp'),
    });
    expect(tool.isError).toBe(true);
    expect((tool.structuredContent as any).error.code).toBe('conflict');
    expect(tool.content).toEqual([
      { type: 'text', text: JSON.stringify(tool.structuredContent) },
      { type: 'text', text: `conflict: ${heldBy(holder.memory.id)}` },
    ]);

    // @tms/client: the generated input takes the key, and its error carries the detail.
    const client = createClient({ baseUrl: h.url, token: await gwToken(), workspace: ws });
    const refused = await client.memories
      .create({ namespace_id: ns, kind: 'claim', text: 'via the client', valid_from: 0, key: 'user:7' })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(TmsError);
    expect(refused).toMatchObject({ code: 'conflict', status: 409, detail: heldBy(holder.memory.id) });
    const found = await client.memories.list({ namespace_id: ns, key: 'user:7' });
    expect(found.items.map((item) => item.memory.key)).toEqual(['user:7']);

    // Another namespace has keys of its own; keys compare exactly (no case folding, no normalisation).
    const other = await namespace('other');
    expect((await create(other, 'user:7')).memory.key).toBe('user:7');
    const nfc = await create(ns, 'Caf\u00e9');
    const nfd = await create(ns, 'Cafe\u0301');
    const upper = await create(ns, 'USER:7');
    expect(new Set([nfc.memory.id, nfd.memory.id, upper.memory.id]).size).toBe(3);
    expect(await heldIds(ns, 'Caf\u00e9')).toEqual([nfc.memory.id]);
    expect(await heldIds(ns, 'Cafe\u0301')).toEqual([nfd.memory.id]);
    expect(await heldIds(ns, 'user:7')).toEqual([holder.memory.id]);
    expect(await heldIds(ns, 'nobody')).toEqual([]);
    // The key is the last rule a create meets: an absent citation is answered first.
    expectError(
      await api.post('/v1/memories', { ...createBody(ns, 'user:7'), evidence_ids: ['ev_absent'] }),
      'not_found',
    );
  });

  it('a correction keeps the key; the key never moves to another memory', async () => {
    const ns = await namespace();
    const made = await create(ns, 'pref:tea');
    const corrected = expectShape(
      await api.post(`/v1/memories/${made.memory.id}/corrections`, {
        expected_generation: 1,
        text: 'Ana prefers coffee.',
      }),
      'memories.correct',
    );
    expect(corrected.memory).toEqual({ ...made.memory, generation: 2 });
    const listed = expectShape(await listByKey(ns, 'pref:tea'), 'memories.list');
    expect(listed.items).toHaveLength(1);
    expect(listed.items[0].memory).toEqual({ ...made.memory, generation: 2 });
    expect(listed.items[0].revision.text).toBe('Ana prefers coffee.');
    // As known before the correction: the same memory, its first revision, its key.
    const before = expectShape(await listByKey(ns, 'pref:tea', { known_at: made.commit.recorded_at }), 'memories.list');
    expect(before.items.map((i: any) => [i.memory.key, i.revision.text])).toEqual([['pref:tea', 'Ana prefers tea.']]);
    // A correction has no key field: a key is fixed at creation.
    expectError(
      await api.post(`/v1/memories/${made.memory.id}/corrections`, { expected_generation: 2, key: 'pref:coffee' }),
      'invalid_input',
      { detail: /^body: unknown field "key"/ },
    );
    expectError(await api.post('/v1/memories', createBody(ns, 'pref:tea')), 'conflict', {
      detail: heldBy(made.memory.id),
    });
  });

  it('a retraction frees the key; listing by key at an earlier known_at shows the older holder', async () => {
    const ns = await namespace();
    const first = await create(ns, 'order:1001', 'first holder');
    const retracted = expectShape(await forget(first.memory.id, 'retract'), 'memories.forget');
    expect(retracted.memory.key).toBe('order:1001');
    const second = await create(ns, 'order:1001', 'second holder');
    expect(second.memory.key).toBe('order:1001');

    expect(await heldIds(ns, 'order:1001')).toEqual([second.memory.id]);
    expect(await heldIds(ns, 'order:1001', { known_at: first.commit.recorded_at })).toEqual([first.memory.id]);
    // From the retraction on, the first holder is no longer current.
    const atRetraction = await heldIds(ns, 'order:1001', { known_at: retracted.commit.recorded_at });
    expect(atRetraction).not.toContain(first.memory.id);
    // The retracted memory keeps its key where it is still seen: reads as known before the retraction.
    const old = expectShape(
      await api.get(`/v1/memories/${first.memory.id}`, { query: { known_at: first.commit.recorded_at } }),
      'memories.get',
    );
    expect(old.view.memory.key).toBe('order:1001');
    // The new holder is the one a conflict names now.
    expectError(await api.post('/v1/memories', createBody(ns, 'order:1001')), 'conflict', {
      detail: heldBy(second.memory.id),
    });
    // Listing by key respects as_of too: before validity starts, nothing holds it.
    expect(await heldIds(ns, 'order:1001', { as_of: -1 })).toEqual([]);
    // A cursor of the listing without the key is not one of the listing by key.
    await create(ns, undefined, 'a second current memory');
    const paged = expectShape(
      await api.get('/v1/memories', { query: { namespace_id: ns, limit: 1 } }),
      'memories.list',
    );
    expect(paged.next_cursor).toEqual(expect.any(String));
    expectError(
      await api.get('/v1/memories', { query: { namespace_id: ns, key: 'order:1001', cursor: paged.next_cursor } }),
      'invalid_input',
      { detail: 'query.cursor: issued for another listing' },
    );
  });

  it('a purge frees the key and erases it from every read at every known_at; the receipt has its SHA-256', async () => {
    const ns = await namespace();
    const key = `secret-key-${freshKey('p')}`;
    const made = await create(ns, key, 'to be purged');
    const corrected = expectShape(
      await api.post(`/v1/memories/${made.memory.id}/corrections`, { expected_generation: 1, text: 'purge me' }),
      'memories.correct',
    );
    const dry = expectShape(
      await api.post(`/v1/memories/${made.memory.id}/forget`, { mode: 'purge', expected_generation: 2, dry_run: true }),
      'memories.forget',
    );
    expect(dry.receipt.erased_key_sha256).toBe(sha256Hex(key));
    const purged = expectShape(await forget(made.memory.id, 'purge', 2), 'memories.forget');
    expect(purged.receipt.erased_key_sha256).toBe(sha256Hex(key));
    expect(Object.keys(purged.receipt)).toEqual([
      'id',
      'memory_id',
      'namespace_id',
      'mode',
      'revision_ids',
      'erased_text_sha256',
      'erased_key_sha256',
      'recorder_actor_id',
      'recorded_at',
    ]);

    for (const knownAt of [made.commit.recorded_at, corrected.commit.recorded_at, purged.commit.recorded_at]) {
      expect(await heldIds(ns, key, { known_at: knownAt })).toEqual([]);
      const listed = expectShape(
        await api.get('/v1/memories', { query: { namespace_id: ns, known_at: knownAt } }),
        'memories.list',
      );
      expect(listed.items).toEqual([]);
      expectError(await api.get(`/v1/memories/${made.memory.id}`, { query: { known_at: knownAt } }), 'not_found');
    }
    // Nowhere in the ledger's tables, in any form but its hash.
    expect(await h.findInDatabase(key)).toEqual([]);
    // Free again, for a new memory.
    const next = await create(ns, key, 'a new holder');
    expect(await heldIds(ns, key)).toEqual([next.memory.id]);

    // A keyless memory's receipt has no key field at all (its shape is as before keys).
    const plain = await create(ns, undefined, 'keyless');
    const plainPurge = expectShape(await forget(plain.memory.id, 'purge'), 'memories.forget');
    expect('erased_key_sha256' in plainPurge.receipt).toBe(false);

    const graphql = await gw.data(
      gql(`mutation($input: ForgetMemoryInput!, $key: String!) {
        forgetMemory(input: $input, idempotencyKey: $key) { receipt { ...MR } }
      }`),
      { input: { id: next.memory.id, mode: 'purge', expectedGeneration: 1 }, key: freshKey('gql-purge') },
    );
    expect(graphql.forgetMemory.receipt.erasedKeySha256).toBe(sha256Hex(key));
  });

  it('bad keys get the invalid_input of the spec on REST, GraphQL and MCP', async () => {
    const ns = await namespace();
    const cases: [string, string, RegExp][] = [
      ['empty', '', /^body\.key: length must be 1-256 characters$/],
      ['257 code points', '😀'.repeat(257), /^body\.key: length must be 1-256 characters$/],
      ['U+0000', 'a\u0000b', /^body\.key: must not contain control characters$/],
      ['a line feed', 'a\nb', /^body\.key: must not contain control characters$/],
      ['DEL', 'a\u007f', /^body\.key: must not contain control characters$/],
      ['a C1 control', '\u009fa', /^body\.key: must not contain control characters$/],
      ['a lone surrogate', 'a\ud800b', /^body(\.key)?: unpaired surrogate( at body\.key)?$/],
    ];
    for (const [what, key, detail] of cases) {
      const rest = await api.post('/v1/memories', createBody(ns, key));
      expectError(rest, 'invalid_input', { detail });

      const graphql = await gw.request(
        gql(`mutation($input: CreateMemoryInput!, $key: String!) {
          createMemory(input: $input, idempotencyKey: $key) { memory { id } }
        }`),
        { input: { namespaceId: ns, kind: 'claim', text: 't', validFrom: 0, key }, key: freshKey('gql') },
      );
      expect(graphql.body.errors?.[0]?.extensions?.code, what).toBe('invalid_input');
      expect(graphql.body.errors?.[0]?.message, what).toMatch(/key/);

      const toolArgs = { ...createBody(ns, key), idempotency_key: freshKey('mcp') };
      if (!key.isWellFormed()) {
        // MCP reads the whole JSON-RPC message strictly first: a parse error, before any tool runs.
        await expect(callTool('svc_memories_create', toolArgs), what).rejects.toThrow(/unpaired surrogate/);
        continue;
      }
      const tool = await callTool('svc_memories_create', toolArgs);
      expect(tool.isError, what).toBe(true);
      expect((tool.structuredContent as any).error.code, what).toBe('invalid_input');
      expect((tool.content[1] as { text: string }).text, what).toMatch(/^invalid_input: .*key/);
    }
    // The list filter takes the same keys: a bad one is refused there too.
    expectError(await listByKey(ns, ''), 'invalid_input', { detail: /^query\.key: / });
    expectError(await listByKey(ns, 'a\u0001'), 'invalid_input', {
      detail: 'query.key: must not contain control characters',
    });
    // null is no key: leave the field out.
    expectError(await api.post('/v1/memories', { ...createBody(ns, undefined), key: null }), 'invalid_input', {
      detail: 'body.key: expected string, got null',
    });
    // 256 astral code points (512 UTF-16 units) are a key; so is one with an invisible non-control character.
    expect((await create(ns, '😀'.repeat(256))).memory.key).toBe('😀'.repeat(256));
    expect((await create(ns, 'zero\u200bwidth')).memory.key).toBe('zero\u200bwidth');
    // Nothing was written by the refused ones.
    const listed = expectShape(await api.get('/v1/memories', { query: { namespace_id: ns } }), 'memories.list');
    expect(listed.items).toHaveLength(2);
  });

  it('a create retried with the same Idempotency-Key replays, with or without a key', async () => {
    const ns = await namespace();
    for (const key of ['idem:1', undefined]) {
      const idem = freshKey('replay');
      const first = await api.post('/v1/memories', createBody(ns, key), { idem });
      expect(first.status, first.text).toBe(200);
      const replay = await api.post('/v1/memories', createBody(ns, key), { idem });
      expect(replay.status).toBe(200);
      expect(replay.text).toBe(first.text);
      // The same key with another key field is another request.
      expectError(await api.post('/v1/memories', createBody(ns, 'idem:other'), { idem }), 'idempotency_conflict');
    }
    // A fresh Idempotency-Key for the same keyed body is a new create: the key is held.
    const held = (await heldIds(ns, 'idem:1'))[0] as string;
    expectError(await api.post('/v1/memories', createBody(ns, 'idem:1')), 'conflict', { detail: heldBy(held) });
  });

  it('concurrent creates with one key: exactly one wins, every other is a conflict naming it', async () => {
    const ns = await namespace();
    const answers: CallResult[] = await Promise.all(
      Array.from({ length: 12 }, (_, i) => api.post('/v1/memories', createBody(ns, 'race:1', `attempt ${i}`))),
    );
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    const winner = won[0]?.body.memory.id as string;
    for (const answer of answers.filter((a) => a.status !== 200)) {
      expectError(answer, 'conflict', { detail: heldBy(winner) });
    }
    expect(await heldIds(ns, 'race:1')).toEqual([winner]);
    // Creates of other keys in the same burst are not held back.
    const mixed = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.post('/v1/memories', createBody(ns, `mix:${i % 2 === 0 ? 'x' : i}`))),
    );
    expect(mixed.filter((a) => a.status === 200)).toHaveLength(5);
    expect(mixed.filter((a) => a.status === 409)).toHaveLength(3);
  });

  it('the chain covers keys: verify and export pass, proofs verify, and a key changed by SQL breaks its commit', async () => {
    const { id: chainWs, api: chainApi } = await h.workspace();
    const ns = expectShape(
      await chainApi.post('/v1/namespaces', { parent_id: null, name: 'chain' }),
      'namespaces.create',
    ).namespace.id;
    const keyed = expectShape(await chainApi.post('/v1/memories', createBody(ns, 'chain:key')), 'memories.create');
    const plain = expectShape(await chainApi.post('/v1/memories', createBody(ns, undefined)), 'memories.create');
    const doomed = expectShape(await chainApi.post('/v1/memories', createBody(ns, 'chain:doomed')), 'memories.create');
    expectShape(
      await chainApi.post(`/v1/memories/${doomed.memory.id}/forget`, { mode: 'purge', expected_generation: 1 }),
      'memories.forget',
    );
    const verify = () => ledger.snapshot((stores) => verifyWorkspaceChain(stores, chainWs));
    const head = await ledger.stores.chain.head(chainWs);
    expect(await verify()).toEqual({ intact: true, sequence: head?.sequence, chainHash: head?.chainHash });

    // The create's proof: its digest input holds the memory's record with the key's hash.
    const proof = expectShape(await chainApi.get(`/v1/ledger/proofs/${keyed.revision.id}`), 'ledger.proof');
    const verdict = await verifyProof(proof);
    expect(verdict.valid).toBe(true);
    const records = JSON.parse(proof.digest_input).records as Record<string, unknown>[];
    expect(records.find((r) => r.id === keyed.memory.id)?.key_sha256).toBe(sha256Hex('chain:key'));
    const plainProof = expectShape(await chainApi.get(`/v1/ledger/proofs/${plain.revision.id}`), 'ledger.proof');
    const plainRecord = (JSON.parse(plainProof.digest_input).records as Record<string, unknown>[]).find(
      (r) => r.id === plain.memory.id,
    );
    expect(Object.keys(plainRecord ?? {}).sort()).toEqual(['created_at', 'id', 'kind', 'memory_kind', 'namespace_id']);

    // An export of the workspace verifies offline, keys included (the purged one is absent).
    const lines = await ledger.snapshot(async (stores) => {
      const plan = await planExport(stores, chainWs, null);
      return (await plan.page(0, 1000)).lines;
    });
    const memoryLines = lines.filter((l) => l.type === 'memory');
    expect(memoryLines.map((l) => [l.id, l.key])).toEqual([
      [keyed.memory.id, 'chain:key'],
      [plain.memory.id, null],
    ]);
    const parsed = lines.map((line) => JSON.parse(JSON.stringify(line)) as Record<string, unknown>);
    expect(verifyExportLines(parsed)).toMatchObject({ intact: true, sequence: head?.sequence });
    // A key altered in the file no longer hashes to what its commit recorded.
    const alteredFile = parsed.map((l) => (l.id === keyed.memory.id ? { ...l, key: 'chain:other' } : l));
    expect(verifyExportLines(alteredFile)).toMatchObject({ intact: false, sequence: keyed.commit.sequence });

    // A key changed behind the service's back breaks the chain at the commit that wrote it.
    const row = sql`workspace_id = ${chainWs} and id = ${keyed.memory.id}`;
    await ledger.handle.db.execute(sql`update memories set key = convert_to('chain:other', 'UTF8') where ${row}`);
    expect(await verify()).toMatchObject({ intact: false, sequence: keyed.commit.sequence });
    // Its stored hash changed along with it does not help: the record's hash differs from the chained one.
    await ledger.handle.db.execute(sql`update memories set key_sha256 = ${sha256Hex('chain:other')} where ${row}`);
    expect(await verify()).toMatchObject({ intact: false, sequence: keyed.commit.sequence });
    // A key given to a keyless memory breaks its commit too.
    const plainRow = sql`workspace_id = ${chainWs} and id = ${plain.memory.id}`;
    await ledger.handle.db.execute(
      sql`update memories set key = convert_to('chain:key', 'UTF8'), key_sha256 = ${sha256Hex('chain:key')} where ${row}`,
    );
    expect(await verify()).toMatchObject({ intact: true });
    await ledger.handle.db.execute(sql`update memories set key = convert_to('sneaky', 'UTF8') where ${plainRow}`);
    expect(await verify()).toMatchObject({ intact: false, sequence: plain.commit.sequence });
    await ledger.handle.db.execute(sql`update memories set key = null where ${plainRow}`);
    expect(await verify()).toMatchObject({ intact: true });
  });
});
