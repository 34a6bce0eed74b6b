import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EmbedderUnavailableError } from '../src/embedders/embedder';
import { EmbedderProbeError, OpenAiEmbedder, type OpenAiEmbedderOptions } from '../src/embedders/openai-embedder';

interface EmbeddingsRequest {
  model: string;
  input: string[];
  dimensions?: number;
}

interface Seen {
  url: string;
  authorization: string | undefined;
  body: EmbeddingsRequest;
}

type Reply = (request: Seen, response: http.ServerResponse) => void;

/** A deterministic, not unit-length vector for a text (so the embedder's normalising shows). */
function vectorOf(text: string, dimensions: number): number[] {
  let seed = 7;
  for (const char of text) seed = (seed * 31 + (char.codePointAt(0) as number)) % 1_000_003;
  return Array.from({ length: dimensions }, (_, i) => 3 * Math.sin(seed + i * 0.7) + 0.5);
}

/** `actual` is `values` scaled to unit length (up to float32 rounding). */
function expectUnitOf(actual: Float32Array | undefined, values: number[]): void {
  const norm = Math.hypot(...values);
  expect(actual?.length).toBe(values.length);
  const worst = Math.max(...values.map((x, i) => Math.abs((actual?.[i] as number) - x / norm)));
  expect(worst).toBeLessThan(1e-6);
}

function answer(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** The OpenAI embeddings API as a server speaks it: `data` in reverse order, to prove `index` is honoured. */
const speakOpenAi =
  (dimensions?: number): Reply =>
  (request, response) => {
    const size = request.body.dimensions ?? dimensions ?? 384;
    const data = request.body.input.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: vectorOf(text, size),
    }));
    answer(response, 200, { object: 'list', data: data.reverse(), model: request.body.model });
  };

describe('the openai embedder against an OpenAI-compatible server on loopback', () => {
  let server: http.Server;
  let base: string;
  let seen: Seen[] = [];
  let replies: Reply[] = [];
  /** Requests the server holds unanswered (the timeout test), ended after each test. */
  const held: http.ServerResponse[] = [];

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      let text = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => {
        text += chunk;
      });
      request.on('end', () => {
        if (request.url !== '/v1/embeddings' || request.method !== 'POST') {
          answer(response, 404, { error: { message: `Unknown request URL: ${request.method} ${request.url}` } });
          return;
        }
        const one: Seen = {
          url: request.url,
          authorization: request.headers.authorization,
          body: JSON.parse(text) as EmbeddingsRequest,
        };
        seen.push(one);
        const reply = replies.length > 1 ? (replies.shift() as Reply) : replies[0];
        if (!reply) throw new Error('no reply set');
        reply(one, response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  beforeEach(() => {
    seen = [];
    replies = [speakOpenAi()];
    for (const response of held.splice(0)) response.destroy();
  });
  afterAll(async () => {
    for (const response of held.splice(0)) response.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const embedderWith = (options: Partial<OpenAiEmbedderOptions> = {}) =>
    new OpenAiEmbedder({ url: base, model: 'test-embed', dimensions: 384, retryDelayMs: 1, ...options });

  it('sends many inputs in batches and keeps their order, each vector unit length', async () => {
    const embedder = embedderWith({ batchSize: 64 });
    const texts = Array.from({ length: 150 }, (_, i) => `text number ${i}`);
    const vectors = await embedder.embed(texts, 'document');
    expect(seen.map((request) => request.body.input.length)).toEqual([64, 64, 22]);
    expect(seen.flatMap((request) => request.body.input)).toEqual(texts);
    expect(seen[0]?.body).toMatchObject({ model: 'test-embed', dimensions: 384 });
    expect(vectors).toHaveLength(150);
    for (const [i, vector] of vectors.entries()) {
      expectUnitOf(vector, vectorOf(texts[i] as string, 384));
    }
    expect(embedder.model).toBe('openai:test-embed@384');
    expect(embedder.dimensions).toBe(384);
  });

  it('sends the API key as a bearer token when one is set, and none otherwise', async () => {
    await embedderWith({ apiKey: 'sk-test-123' }).embed(['a'], 'query');
    await embedderWith().embed(['b'], 'query');
    expect(seen.map((request) => request.authorization)).toEqual(['Bearer sk-test-123', undefined]);
  });

  it('retries a 500 and a 429, then succeeds', async () => {
    replies = [
      (_, response) => answer(response, 500, { error: { message: 'upstream hiccup' } }),
      (_, response) => answer(response, 429, { error: { message: 'slow down' } }, { 'retry-after': '0' }),
      speakOpenAi(),
    ];
    const vectors = await embedderWith().embed(['retry me'], 'document');
    expect(seen).toHaveLength(3);
    expectUnitOf(vectors[0], vectorOf('retry me', 384));
  });

  it('gives up after its tries on a lasting 503, with EmbedderUnavailableError', async () => {
    replies = [(_, response) => answer(response, 503, { error: { message: 'overloaded' } })];
    const error = await embedderWith({ attempts: 3 })
      .embed(['x'], 'document')
      .catch((e: Error) => e);
    expect(error).toBeInstanceOf(EmbedderUnavailableError);
    expect((error as Error).message).toMatch(/answered 503 Service Unavailable: overloaded \(after 3 tries\)/);
    expect(seen).toHaveLength(3);
  });

  it('times a request out and retries it, then reports the timeout', async () => {
    replies = [(_, response) => held.push(response)];
    const error = await embedderWith({ timeoutMs: 150, attempts: 2 })
      .embed(['slow'], 'query')
      .catch((e: Error) => e);
    expect(error).toBeInstanceOf(EmbedderUnavailableError);
    expect((error as Error).message).toMatch(/did not answer within 150 ms \(after 2 tries\)/);
    expect(seen).toHaveLength(2);
  });

  it('refuses an answer with the wrong dimension count, without retrying', async () => {
    // A server that ignores `dimensions`: answers 383 wherever 384 were asked for.
    replies = [
      (request, response) => {
        request.body.dimensions = 383;
        speakOpenAi()(request, response);
      },
    ];
    const error = await embedderWith()
      .embed(['a', 'b'], 'document')
      .catch((e: Error) => e);
    expect(error).toBeInstanceOf(EmbedderUnavailableError);
    expect((error as Error).message).toMatch(/383 dimensions where 384 were expected/);
    expect(seen).toHaveLength(1);
  });

  it('refuses a short batch and a repeated index', async () => {
    replies = [
      (request, response) => {
        const data = request.body.input.slice(1).map((text, i) => ({ index: i, embedding: vectorOf(text, 384) }));
        answer(response, 200, { data });
      },
    ];
    const short = await embedderWith()
      .embed(['a', 'b', 'c'], 'document')
      .catch((e: Error) => e);
    expect(short).toBeInstanceOf(EmbedderUnavailableError);
    expect((short as Error).message).toMatch(/2 embeddings for 3 inputs/);

    replies = [
      (request, response) => {
        const data = request.body.input.map((text) => ({ index: 0, embedding: vectorOf(text, 384) }));
        answer(response, 200, { data });
      },
    ];
    const repeated = await embedderWith()
      .embed(['a', 'b'], 'document')
      .catch((e: Error) => e);
    expect((repeated as Error).message).toMatch(/index 0 twice/);
  });

  it('fails every call once closed', async () => {
    const embedder = embedderWith();
    await embedder.close();
    await expect(embedder.embed(['a'], 'query')).rejects.toBeInstanceOf(EmbedderUnavailableError);
    expect(seen).toHaveLength(0);
  });

  describe('probe (the boot check)', () => {
    const probeError = (embedder: OpenAiEmbedder) =>
      embedder.probe().then(
        () => new Error('probe passed'),
        (e: Error) => e,
      );

    it('passes a good endpoint, and learns the dimension count when none is configured', async () => {
      expect(await embedderWith().probe()).toBe(384);
      const learning = embedderWith({ dimensions: undefined });
      expect(learning.model).toBeNull();
      expect(learning.dimensions).toBeNull();
      replies = [speakOpenAi(768)];
      // The first embedding learns the size from the endpoint, then embeds.
      expect((await learning.embed(['a'], 'query'))[0]).toHaveLength(768);
      expect(learning.model).toBe('openai:test-embed@768');
      expect(await learning.ready()).toEqual({ model: 'openai:test-embed@768', dimensions: 768 });
      expect(await learning.probe()).toBe(768);
      expect(seen.at(-1)?.body.dimensions).toBeUndefined();
    });

    it('learns its model once the endpoint answers, asking at most once a second while it fails', async () => {
      const learning = embedderWith({ dimensions: undefined });
      replies = [(_, response) => answer(response, 503, { error: { message: 'warming up' } })];
      await expect(learning.ready()).rejects.toBeInstanceOf(EmbedderUnavailableError);
      const asked = seen.length;
      // Within the second after a failure the failure is answered again, without a request.
      await expect(learning.embed(['a'], 'query')).rejects.toThrow(/warming up/);
      expect(seen.length).toBe(asked);
      expect(learning.model).toBeNull();
      replies = [speakOpenAi(640)];
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(await learning.ready()).toEqual({ model: 'openai:test-embed@640', dimensions: 640 });
      expect(seen.length).toBe(asked + 1);
    });

    it('names a wrong URL (not the API base)', async () => {
      const error = await probeError(embedderWith({ url: base.replace(/\/v1$/, '') }));
      expect(error).toBeInstanceOf(EmbedderProbeError);
      expect(error.message).toMatch(/embeddings answered 404 Not Found: is EMBEDDINGS_URL the API's base URL/);
      expect(error.message).not.toContain('\n');
    });

    it('names an unreachable endpoint', async () => {
      const closed = http.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const error = await probeError(embedderWith({ url: `http://127.0.0.1:${port}/v1` }));
      expect(error).toBeInstanceOf(EmbedderProbeError);
      expect(error.message).toBe(
        `embeddings endpoint http://127.0.0.1:${port}/v1/embeddings is unreachable (ECONNREFUSED)`,
      );
    });

    it('names a dimension count other than the configured one', async () => {
      replies = [
        (request, response) => {
          request.body.dimensions = undefined;
          speakOpenAi(1536)(request, response);
        },
      ];
      const error = await probeError(embedderWith({ dimensions: 512 }));
      expect(error).toBeInstanceOf(EmbedderProbeError);
      expect(error.message).toMatch(/1536 dimensions where 512 were expected \(EMBEDDINGS_DIMENSIONS\)/);
    });

    it('names a refused key', async () => {
      replies = [(_, response) => answer(response, 401, { error: { message: 'Incorrect API key provided' } })];
      const error = await probeError(embedderWith({ apiKey: 'wrong' }));
      expect(error.message).toMatch(
        /refused the key \(401 Unauthorized; check EMBEDDINGS_API_KEY\): Incorrect API key/,
      );
      expect(seen).toHaveLength(1);
    });
  });
});
