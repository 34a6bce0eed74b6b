import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Ledger } from '@tms/ledger';
import {
  BuiltinEmbedder,
  type Embedder,
  EmbedderUnavailableError,
  Indexer,
  NoEmbedder,
  OpenAiEmbedder,
  PostgresSearchProvider,
  readIndexLag,
  type SemanticBatchReport,
  type SemanticQuery,
  semanticCursorName,
} from '@tms/search';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';

/** Poll until `check` holds (the indexer works in the background). */
async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * An OpenAI-compatible embeddings server on loopback whose vectors come from the builtin model
 * with its components reversed: a vector space of its own, so mixing it with the builtin's
 * would rank nonsense. `stop()` and `start()` take it down and bring it back on the same port.
 */
class LoopbackEmbeddings {
  private server: http.Server | null = null;
  port = 0;
  constructor(private readonly source: Embedder) {}

  async start(): Promise<void> {
    const server = http.createServer((request, response) => {
      let text = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => {
        text += chunk;
      });
      request.on('end', async () => {
        try {
          const body = JSON.parse(text) as { input: string[]; model: string };
          const vectors = await this.source.embed(body.input, 'document');
          const data = vectors.map((v, index) => ({ object: 'embedding', index, embedding: Array.from(v).reverse() }));
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ object: 'list', data, model: body.model }));
        } catch (error) {
          response.writeHead(503, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: { message: (error as Error).message } }));
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  embedder(): OpenAiEmbedder {
    return new OpenAiEmbedder({
      url: `http://127.0.0.1:${this.port}/v1`,
      model: 'reversed-use-lite',
      dimensions: 512,
      attempts: 1,
      // The builtin model behind it is slow on a loaded machine; a stopped server fails at once.
      timeoutMs: 60_000,
    });
  }
}

async function cursorNames(ledger: Ledger): Promise<string[]> {
  const result = await ledger.handle.db.execute(sql`select distinct provider from index_state order by provider`);
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { provider: string }[];
  return rows.map((r) => r.provider);
}

const builtin = new BuiltinEmbedder();
afterAll(() => builtin.close());

describe.each(DRIVERS)('semantic indexing on %s (decisions §11)', (driver) => {
  let h: Harness;
  let provider: PostgresSearchProvider;
  beforeAll(async () => {
    h = await startHarness({ driver });
    provider = new PostgresSearchProvider(h.gateway.ledger.handle.db);
    await provider.prepare();
  });
  afterAll(() => h?.close());

  async function setup() {
    const { id: workspaceId, api } = await h.workspace();
    const make = async (name: string) =>
      (await api.post('/v1/namespaces', { parent_id: null, name })).body.namespace.id as string;
    const home = await make('home');
    const other = await make('other');
    const remember = async (namespace: string, text: string) => {
      const created = await api.post('/v1/memories', { namespace_id: namespace, kind: 'claim', text, valid_from: 0 });
      expect(created.status).toBe(200);
      return created.body as { memory: { id: string }; revision: { id: string; recorded_at: number } };
    };
    return { workspaceId, api, home, other, remember };
  }

  const query = async (
    embedder: Embedder,
    workspaceId: string,
    namespaceIds: string[],
    text: string,
    knownAt = Date.now() / 1000 + 60,
  ): Promise<SemanticQuery> => ({
    workspaceId,
    namespaceIds,
    asOf: Date.now() / 1000,
    knownAt,
    limit: 5,
    offset: 0,
    model: (await embedder.ready()).model,
    vector: (await embedder.embed([text], 'query'))[0] as Float32Array,
  });

  it('finds a revision by meaning, within scope, at its known_at, and never once purged', async () => {
    const { workspaceId, api, home, other, remember } = await setup();
    const tea = await remember(home, 'Ana prefers green tea in the morning');
    await remember(home, 'The train to Lyon leaves from platform four at noon');
    const elsewhere = await remember(other, 'Ana drinks tea all day long');
    const reports: SemanticBatchReport[] = [];
    const indexer = new Indexer(h.gateway.ledger, provider, {
      embedder: builtin,
      semantic: { onBatch: (report) => reports.push(report) },
    });
    await indexer.catchUp();

    const drink = await query(builtin, workspaceId, [home], 'what does Ana like to drink');
    const hits = await provider.searchSemantic(drink);
    expect(hits[0]?.revisionId).toBe(tea.revision.id);
    expect(hits.map((hit) => hit.memoryId)).not.toContain(elsewhere.memory.id);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? 1);

    // A correction: the new text is embedded, the old revision's vector only gets recorded_until.
    reports.length = 0;
    const corrected = await api.post(`/v1/memories/${tea.memory.id}/corrections`, {
      expected_generation: 1,
      text: 'Ana switched to strong black coffee',
    });
    expect(corrected.status).toBe(200);
    await indexer.catchUp();
    expect(reports.reduce((n, r) => n + r.embedded, 0)).toBe(1);
    expect(reports.reduce((n, r) => n + r.updated, 0)).toBeGreaterThanOrEqual(1);
    const before = await provider.searchSemantic(
      await query(builtin, workspaceId, [home], 'what does Ana like to drink', tea.revision.recorded_at),
    );
    expect(before[0]?.revisionId).toBe(tea.revision.id);
    const now = await provider.searchSemantic(await query(builtin, workspaceId, [home], 'coffee for Ana'));
    expect(now[0]?.revisionId).toBe(corrected.body.revision.id);
    expect(now.map((hit) => hit.revisionId)).not.toContain(tea.revision.id);

    // A purge: no vector of either revision is kept, at any known_at.
    const purged = await api.post(`/v1/memories/${tea.memory.id}/forget`, { mode: 'purge', expected_generation: 2 });
    expect(purged.status).toBe(200);
    await indexer.catchUp();
    for (const knownAt of [tea.revision.recorded_at, Date.now() / 1000 + 60]) {
      const found = await provider.searchSemantic(
        await query(builtin, workspaceId, [home], 'what does Ana like to drink', knownAt),
      );
      expect(found.map((hit) => hit.memoryId)).not.toContain(tea.memory.id);
    }
    expect(
      await provider.vectorRevisionIds(workspaceId, builtin.model, [tea.revision.id, corrected.body.revision.id]),
    ).toEqual([]);
  });

  it('a model change re-embeds on a fresh cursor and never mixes the models', async () => {
    const { workspaceId, home, remember } = await setup();
    const tea = await remember(home, 'Ana prefers green tea in the morning');
    await remember(home, 'The train to Lyon leaves from platform four at noon');
    await new Indexer(h.gateway.ledger, provider, { embedder: builtin }).catchUp();
    const server = new LoopbackEmbeddings(builtin);
    await server.start();
    try {
      const reversed = server.embedder();
      const reversedModel = (await reversed.ready()).model;
      expect(reversedModel).not.toBe(builtin.model);
      const head = (await h.gateway.ledger.stores.indexState.lag('postgres', false)).find(
        (w) => w.workspaceId === workspaceId,
      )?.headSequence;
      const cursor = semanticCursorName('postgres', reversedModel);
      expect(await h.gateway.ledger.stores.indexState.indexedSequence(workspaceId, cursor)).toBe(0);
      await new Indexer(h.gateway.ledger, provider, { embedder: reversed }).catchUp();
      expect(await h.gateway.ledger.stores.indexState.indexedSequence(workspaceId, cursor)).toBe(head);
      const both = await provider.vectorRevisionIds(workspaceId, builtin.model);
      expect(await provider.vectorRevisionIds(workspaceId, reversedModel)).toEqual(both);
      // Each model's query finds the tea memory in its own space.
      for (const embedder of [builtin, reversed]) {
        const hits = await provider.searchSemantic(await query(embedder, workspaceId, [home], 'what does Ana drink'));
        expect(hits[0]?.revisionId).toBe(tea.revision.id);
      }
      // A query vector of one model is never compared with the other's vectors.
      const mixed = await query(builtin, workspaceId, [home], 'what does Ana drink');
      expect(await provider.searchSemantic({ ...mixed, model: 'openai:unknown@512' })).toEqual([]);
      // Rebuild keeps only the configured model's vectors.
      await provider.clearVectors(workspaceId, { keepModel: reversedModel });
      expect(await provider.vectorRevisionIds(workspaceId, builtin.model)).toEqual([]);
      expect(await provider.vectorRevisionIds(workspaceId, reversedModel)).toEqual(both);
    } finally {
      await server.stop();
    }
  });

  it('an embedder that is down pauses only the semantic arm, which catches up when it returns', async () => {
    const { workspaceId, home, remember } = await setup();
    const server = new LoopbackEmbeddings(builtin);
    await server.start();
    const embedder = server.embedder();
    await server.stop();
    const errors: { error: unknown; arm: string }[] = [];
    const indexer = new Indexer(h.gateway.ledger, provider, {
      embedder,
      pollMs: 50,
      onError: (error, _attempt, arm) => errors.push({ error, arm }),
    });
    const running = indexer.run();
    const stores = h.gateway.ledger.stores;
    const cursor = semanticCursorName('postgres', embedder.model);
    try {
      // Writes go on while the embedder is down.
      const tea = await remember(home, 'Ana prefers green tea in the morning');
      const head = async () =>
        (await stores.indexState.lag('postgres', false)).find((w) => w.workspaceId === workspaceId)
          ?.headSequence as number;
      await until(
        async () => (await stores.indexState.indexedSequence(workspaceId, 'postgres')) === (await head()),
        'the lexical arm',
      );
      await until(() => errors.some((e) => e.arm === 'semantic'), 'a semantic failure');
      expect(errors.every((e) => e.arm === 'semantic' && e.error instanceof EmbedderUnavailableError)).toBe(true);
      expect(await stores.indexState.indexedSequence(workspaceId, cursor)).toBeLessThan(await head());
      expect(
        (
          await provider.search({
            workspaceId,
            text: 'green tea',
            namespaceIds: [home],
            asOf: Date.now() / 1000,
            knownAt: Date.now() / 1000 + 60,
            limit: 5,
            offset: 0,
          })
        ).map((hit) => hit.revisionId),
      ).toEqual([tea.revision.id]);

      await server.start();
      await until(
        async () => (await stores.indexState.indexedSequence(workspaceId, cursor)) === (await head()),
        'the semantic arm',
        90_000,
      );
      expect(await provider.vectorRevisionIds(workspaceId, String(embedder.model))).toEqual([tea.revision.id]);
    } finally {
      indexer.stop();
      await running;
      await server.stop();
    }
  });

  it('the semantic arm counts as stalled only when its cursor stops, not while it trails', async () => {
    const { workspaceId, home, remember } = await setup();
    for (const text of ['Ana prefers green tea', 'The train leaves at noon', 'Rain is expected on Monday']) {
      await remember(home, text);
    }
    const cursor = semanticCursorName('postgres', builtin.model);
    const ledger = h.gateway.ledger;
    const lagOf = async () =>
      (await ledger.stores.indexState.lag(cursor, true)).find((w) => w.workspaceId === workspaceId);
    // Never advanced and older than the threshold: stalled.
    const never = await lagOf();
    const neverAt = (never?.oldestUnindexedAt as number) + 10;
    const stalledNow = await readIndexLag(ledger, cursor, 5, neverAt, 'semantic');
    expect(stalledNow.stalled.map((w) => w.workspaceId)).toContain(workspaceId);
    // One batch of one commit: the cursor moved after the next unindexed commit was recorded.
    const indexer = new Indexer(ledger, provider, { embedder: builtin, semantic: { batchSize: 1 } });
    expect(await indexer.semantic?.indexBatch(workspaceId)).toBe(1);
    const trailing = await lagOf();
    const since = trailing?.oldestUnindexedAt as number;
    const moved = trailing?.updatedAt as number;
    expect(moved).toBeGreaterThan(since);
    const stall = (moved - since) / 2;
    const at = moved + stall / 2;
    const semantic = await readIndexLag(ledger, cursor, stall, at, 'semantic');
    expect(semantic.stalled.map((w) => w.workspaceId)).not.toContain(workspaceId);
    expect(semantic.commits).toBeGreaterThan(0);
    // The lexical rule (age of the oldest unindexed commit alone) would call it stalled.
    const lexicalRule = await readIndexLag(ledger, cursor, stall, at, 'lexical');
    expect(lexicalRule.stalled.map((w) => w.workspaceId)).toContain(workspaceId);
  });

  it('holds no transaction while the model embeds, and drops a batch another indexer stored meanwhile', async () => {
    const { workspaceId, home, remember } = await setup();
    for (const text of ['Ana prefers green tea', 'The train leaves at noon']) await remember(home, text);
    const ledger = h.gateway.ledger;
    const openTransactions = async () => {
      if (ledger.driver !== 'postgres') return 0;
      const result = await ledger.handle.db.execute(sql`
        select count(*)::int as open from pg_stat_activity
         where datname = current_database() and state like 'idle in transaction%'`);
      const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as { open: number }[];
      return rows[0]?.open ?? -1;
    };
    // The first indexer's embedding waits while a second indexer does the same batch to the end.
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let seenOpen = -1;
    let entered: () => void = () => {};
    const embedding = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const slow: Embedder = {
      kind: 'builtin',
      model: builtin.model,
      dimensions: builtin.dimensions,
      ready: () => builtin.ready(),
      embed: async (texts, purpose) => {
        seenOpen = await openTransactions();
        entered();
        await held;
        return builtin.embed(texts, purpose);
      },
      close: async () => {},
    };
    const first = new Indexer(ledger, provider, { embedder: slow });
    const second = new Indexer(ledger, provider, { embedder: builtin });
    const firstBatch = first.semantic?.indexBatch(workspaceId);
    await embedding;
    expect(seenOpen).toBe(0);
    expect(await second.semantic?.indexBatch(workspaceId)).toBeGreaterThan(0);
    release();
    // The cursor moved under it: it stores nothing and reports no commits.
    expect(await firstBatch).toBe(0);
    const cursor = semanticCursorName('postgres', builtin.model);
    const head = (await ledger.stores.indexState.lag(cursor, false)).find((w) => w.workspaceId === workspaceId);
    expect(head?.indexedSequence).toBe(head?.headSequence);
  });

  it('with EMBEDDER=none there is no semantic cursor at all', async () => {
    const { remember, home } = await setup();
    await remember(home, 'Nothing here is embedded');
    const indexer = new Indexer(h.gateway.ledger, provider, { embedder: new NoEmbedder() });
    expect(indexer.semantic).toBeNull();
    const before = await cursorNames(h.gateway.ledger);
    await indexer.catchUp();
    const after = await cursorNames(h.gateway.ledger);
    expect(after).toContain('postgres');
    expect(after.filter((name) => !before.includes(name) && name.includes('semantic'))).toEqual([]);
    expect(after.filter((name) => name.startsWith('postgres+semantic:none'))).toEqual([]);
  });
});
