// biome-ignore-all lint/suspicious/noExplicitAny: recall answers are walked as plain JSON in tests.
import { type ApiClient, freePort } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONCEPT_DIMENSIONS, EmbeddingServer } from './embedding-server';
import { DRIVERS, type Harness, startHarness } from './harness';

/**
 * Recall when one arm fails (decisions §11): the failing arm is `unavailable`, the answer
 * `degraded`, the other arm's items kept, and `indexed_sequence` never counts a commit an enabled
 * arm cannot find. Real faults: an embeddings server that is not up yet, a vector table gone, and
 * a burst of recalls that give up on the builtin model.
 */

async function writeClaim(api: ApiClient, namespaceId: string, text: string) {
  const res = await api.post('/v1/memories', { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0 });
  expect(res.status, res.text).toBe(200);
  return res.body as { memory: { id: string }; commit: { sequence: number } };
}

async function until<T>(what: string, attempt: () => Promise<T | null>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await attempt();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.each(DRIVERS)('an embeddings server down at boot, its model not known yet (%s)', (driver) => {
  let h: Harness;
  let embeddings: EmbeddingServer | null = null;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    // No EMBEDDINGS_DIMENSIONS: the model's name (its dimension count) comes from the server's first answer.
    h = await startHarness({
      driver,
      env: {
        INDEXER: 'embedded',
        EMBEDDER: 'openai',
        EMBEDDINGS_URL: `http://127.0.0.1:${port}/v1`,
        EMBEDDINGS_MODEL: 'concepts',
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    await embeddings?.stop();
  });

  it('answers degraded with an indexed_sequence the semantic arm can honour, then complete once it is up and caught up', async () => {
    const { api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'garage' })).body.namespace.id;
    const written = await writeClaim(api, ns, 'car park by the tea shop');
    const sequence = written.commit.sequence;

    // The lexical arm alone catches up and says so.
    const lexical = (
      await api.post('/v1/recall', {
        namespace_ids: [ns],
        query: 'car',
        mode: 'lexical',
        min_sequence: sequence,
        wait_ms: 10_000,
      })
    ).body;
    expect(lexical.status).toBe('complete');
    expect(lexical.indexed_sequence).toBeGreaterThanOrEqual(sequence);

    // Hybrid: the semantic arm cannot find the write, so indexed_sequence does not cover it; the wait
    // does not hold for an arm that is down, and the lexical items are kept.
    const started = Date.now();
    const hybrid = (
      await api.post('/v1/recall', { namespace_ids: [ns], query: 'car', min_sequence: sequence, wait_ms: 5_000 })
    ).body;
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(hybrid.status).toBe('degraded');
    expect(hybrid.retrieval).toEqual({ mode: 'hybrid', lexical: 'ok', semantic: 'unavailable' });
    expect(hybrid.indexed_sequence).toBeLessThan(sequence);
    expect(hybrid.items.map((i: any) => i.memory.id)).toEqual([written.memory.id]);

    // The server comes up on the configured address: the model is learned, the arm embeds, and
    // recall answers complete, finding by meaning what shares no word with the query.
    embeddings = await EmbeddingServer.start(port);
    const complete = await until('a complete hybrid recall', async () => {
      const answer = (
        await api.post('/v1/recall', {
          namespace_ids: [ns],
          query: 'automobile',
          min_sequence: sequence,
          wait_ms: 2_000,
        })
      ).body;
      return answer.status === 'complete' ? answer : null;
    });
    expect(complete.retrieval).toEqual({ mode: 'hybrid', lexical: 'ok', semantic: 'ok' });
    expect(complete.indexed_sequence).toBeGreaterThanOrEqual(sequence);
    expect(complete.items[0]).toMatchObject({
      memory: { id: written.memory.id },
      ranks: { lexical: null, semantic: 1 },
    });
    expect(embeddings.requests.some((inputs) => inputs.includes('car park by the tea shop'))).toBe(true);
  });
});

describe.each(DRIVERS)('a semantic search that fails with an SQL error (%s)', (driver) => {
  let h: Harness;
  let embeddings: EmbeddingServer;
  beforeAll(async () => {
    embeddings = await EmbeddingServer.start();
    h = await startHarness({
      driver,
      env: {
        INDEXER: 'embedded',
        EMBEDDER: 'openai',
        EMBEDDINGS_URL: embeddings.url,
        EMBEDDINGS_MODEL: 'concepts',
        EMBEDDINGS_DIMENSIONS: String(CONCEPT_DIMENSIONS),
      },
    });
  });
  afterAll(async () => {
    await h?.close();
    await embeddings?.stop();
  });

  it('makes the semantic arm unavailable and keeps the lexical items, on every mode, never a 500', async () => {
    const { api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'depot' })).body.namespace.id;
    const car = await writeClaim(api, ns, 'car park by the tea shop');
    const note = await writeClaim(api, ns, 'automobile note');
    const ready = (
      await api.post('/v1/recall', {
        namespace_ids: [ns],
        query: 'car',
        min_sequence: note.commit.sequence,
        wait_ms: 10_000,
      })
    ).body;
    expect(ready.status).toBe('complete');
    expect(ready.items.map((i: any) => i.memory.id)).toContain(note.memory.id);

    // The vector table is gone (a fault no embedder or provider error covers): every semantic query fails in SQL.
    await h.gateway.ledger.handle.db.execute(sql`drop table search.vectors`);
    const hybrid = await api.post('/v1/recall', { namespace_ids: [ns], query: 'car' });
    expect(hybrid.status, hybrid.text).toBe(200);
    expect(hybrid.body.status).toBe('degraded');
    expect(hybrid.body.retrieval).toEqual({ mode: 'hybrid', lexical: 'ok', semantic: 'unavailable' });
    expect(hybrid.body.items.map((i: any) => [i.memory.id, i.ranks])).toEqual([
      [car.memory.id, { lexical: 1, semantic: null }],
    ]);
    // Semantic alone: no asked arm answers, the ledger's own scan does.
    const semantic = await api.post('/v1/recall', { namespace_ids: [ns], query: 'car', mode: 'semantic' });
    expect(semantic.status, semantic.text).toBe(200);
    expect(semantic.body.status).toBe('degraded');
    expect(semantic.body.retrieval).toEqual({ mode: 'semantic', lexical: 'off', semantic: 'unavailable' });
    expect(semantic.body.items.map((i: any) => i.memory.id)).toEqual([car.memory.id]);
    // The failure is logged with its cause, for the operator.
    expect(h.logs.some((line) => line.includes("recall's semantic arm failed") && line.includes('vectors'))).toBe(true);
  });
});

/** The builtin model's queue as /metrics shows it. */
async function embedderQueue(h: Harness): Promise<{ query: number; document: number }> {
  const text = await (await fetch(`${h.url}/metrics`)).text();
  const read = (purpose: string) =>
    Number(
      new RegExp(`^tms_embedder_queued_texts\\{purpose="${purpose}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN,
    );
  return { query: read('query'), document: read('document') };
}

describe.each(DRIVERS)('a burst of recalls that give up on the builtin model (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    // Operations get 1 s: a recall gives up its query's embedding 0.75 s before that.
    h = await startHarness({ driver, timeoutMs: 1_000, env: { INDEXER: 'embedded', EMBEDDER: 'builtin' } });
  });
  afterAll(() => h?.close());

  it('leaves nothing queued for the model once the recalls have answered', async () => {
    const { api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'burst' })).body.namespace.id;
    const written = await writeClaim(api, ns, 'Ana drinks green tea every morning');
    // Both arms caught up, so no document waits for the model either.
    await until('both arms', async () => {
      const answer = (
        await api.post('/v1/recall', { namespace_ids: [ns], query: 'tea', min_sequence: written.commit.sequence })
      ).body;
      return answer.status === 'complete' ? answer : null;
    });

    // 200 recalls at once, each with a text of its own (no shared or cached embedding).
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, n) =>
        api.post('/v1/recall', { namespace_ids: [ns], query: `what does Ana drink on morning ${n} of the trip` }),
      ),
    );
    const ended = Date.now();
    for (const answer of answers) {
      // Answered (degraded when the model could not embed in time) or out of time (unavailable, retryable); never a 500.
      expect([200, 503], answer.text).toContain(answer.status);
      if (answer.status === 200) expect(answer.body.retrieval.lexical).toBe('ok');
      else expect(answer.body.error.code).toBe('unavailable');
    }
    expect(answers.filter((a) => a.status === 200 && a.body.status === 'degraded').length).toBeGreaterThan(0);

    const empty = await until('an empty queue', async () => {
      const queue = await embedderQueue(h);
      return queue.query === 0 && queue.document === 0 ? Date.now() : null;
    });
    expect(empty - ended).toBeLessThan(1_000);
  });
});
