import http from 'node:http';
import type net from 'node:net';

/**
 * Four concepts, one dimension each: a text's vector marks which it mentions (the fourth: any
 * other word). Cosine similarity is then known by hand: "car" (1,0,0,0) against "automobile
 * note" (1,0,0,1) is 1/√2, against "car park by the tea shop" (1,1,0,1) is 1/√3.
 */
const CONCEPTS: Record<string, number> = {};
for (const word of ['car', 'cars', 'automobile', 'automobiles', 'vehicle', 'vehicles']) CONCEPTS[word] = 0;
for (const word of ['tea', 'coffee', 'drink', 'drinks', 'beverage']) CONCEPTS[word] = 1;
for (const word of ['basil', 'tomato', 'tomatoes', 'garden', 'seedlings']) CONCEPTS[word] = 2;
export const CONCEPT_DIMENSIONS = 4;

export function conceptVector(text: string): number[] {
  const vector = [0, 0, 0, 0];
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  for (const word of words) vector[CONCEPTS[word] ?? 3] = 1;
  if (words.length === 0) vector[3] = 1;
  return vector;
}

/**
 * An OpenAI-compatible embeddings API on loopback (`POST /v1/embeddings`), a real HTTP server the
 * gateway's `openai` embedder talks to. Inputs containing a held word wait until `release()`; `stop()`
 * closes the server and its connections, so the embedder meets a refused connection.
 */
export class EmbeddingServer {
  readonly requests: string[][] = [];
  private readonly held = new Set<string>();
  private waiting: (() => void)[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  /** On `port` (a service configured before the server is up), or on any free port. */
  static async start(port = 0): Promise<EmbeddingServer> {
    let self: EmbeddingServer | null = null;
    const server = http.createServer((req, res) => {
      void self?.answer(req, res);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const bound = (server.address() as net.AddressInfo).port;
    self = new EmbeddingServer(server, `http://127.0.0.1:${bound}/v1`);
    return self;
  }

  /** Hold every request that has an input containing `word` (as a word) until `release()`. */
  hold(word: string): void {
    this.held.add(word);
  }

  release(): void {
    this.held.clear();
    for (const wake of this.waiting.splice(0)) wake();
  }

  async stop(): Promise<void> {
    this.release();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async answer(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string | string[]; model: string };
    const inputs = typeof body.input === 'string' ? [body.input] : body.input;
    this.requests.push(inputs);
    const isHeld = () =>
      inputs.some((text) => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).some((w) => this.held.has(w)));
    while (isHeld()) await new Promise<void>((wake) => this.waiting.push(wake));
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        object: 'list',
        model: body.model,
        data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: conceptVector(text) })),
        usage: { prompt_tokens: 0, total_tokens: 0 },
      }),
    );
  }
}
