import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkEmbedder, embedderFor } from '@tms/composition';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnv as parseCliEnv } from '../../cli/src/env';
import { parseEnv as parseIndexerEnv } from '../../indexer/src/env';
import { parseEnv as parseGatewayEnv } from '../src/env';

const PARSERS = [
  ['gateway', parseGatewayEnv],
  ['indexer', (env: Record<string, string>) => parseIndexerEnv({ DATABASE_URL: 'postgres://db/tms', ...env })],
  ['svc', parseCliEnv],
] as const;

/** The problems an env module lists (a line each in the services', `; `-separated in the CLI's one line). */
function problemsOf(parse: (env: Record<string, string>) => unknown, env: Record<string, string>): string[] {
  try {
    parse(env);
  } catch (error) {
    const listed = (error as Error).message.replace(/^invalid configuration:\s*/, '');
    return listed.split(/\n|; /).map((line) => line.trim());
  }
  return [];
}

describe.each(PARSERS)('EMBEDDER and EMBEDDINGS_* in the %s env module', (_, parse) => {
  it('defaults to the builtin embedder', () => {
    const env = parse({});
    expect(env.EMBEDDER).toBe('builtin');
    expect(embedderFor(env)).toMatchObject({ kind: 'builtin', model: 'builtin:use-lite@512', dimensions: 512 });
    expect(embedderFor(parse({ EMBEDDER: 'none' }))).toMatchObject({ kind: 'none' });
  });

  it('reads an openai configuration, the dimension count as a number', () => {
    const env = parse({
      EMBEDDER: 'openai',
      EMBEDDINGS_URL: 'https://api.openai.com/v1',
      EMBEDDINGS_MODEL: 'text-embedding-3-small',
      EMBEDDINGS_API_KEY: 'sk-test',
      EMBEDDINGS_DIMENSIONS: '1536',
    });
    expect(env).toMatchObject({ EMBEDDER: 'openai', EMBEDDINGS_DIMENSIONS: 1536 });
    expect(embedderFor(env)).toMatchObject({ kind: 'openai', model: 'openai:text-embedding-3-small@1536' });
  });

  it('lists every problem of an openai configuration at once', () => {
    expect(problemsOf(parse, { EMBEDDER: 'openai', EMBEDDINGS_DIMENSIONS: '0' })).toEqual([
      'EMBEDDINGS_DIMENSIONS: Too small: expected number to be >=1',
      'EMBEDDINGS_URL: required when EMBEDDER=openai',
      'EMBEDDINGS_MODEL: required when EMBEDDER=openai',
    ]);
    expect(
      problemsOf(parse, {
        EMBEDDER: 'openai',
        EMBEDDINGS_URL: 'ftp://models.example/v1',
        EMBEDDINGS_MODEL: 'm',
        EMBEDDINGS_DIMENSIONS: 'many',
      }),
    ).toEqual([
      'EMBEDDINGS_URL: must be an http:// or https:// URL',
      'EMBEDDINGS_DIMENSIONS: Invalid input: expected number, received NaN',
    ]);
    expect(
      problemsOf(parse, {
        EMBEDDER: 'openai',
        EMBEDDINGS_URL: 'http://127.0.0.1:8000/v1/embeddings',
        EMBEDDINGS_MODEL: 'm',
      }),
    ).toEqual(['EMBEDDINGS_URL: give the base URL (e.g. https://api.openai.com/v1): /embeddings is added to it']);
  });

  it('refuses an unknown kind, and EMBEDDINGS_* set for another kind', () => {
    expect(problemsOf(parse, { EMBEDDER: 'ollama' })).toEqual([
      'EMBEDDER: Invalid option: expected one of "builtin"|"openai"|"none"',
    ]);
    expect(problemsOf(parse, { EMBEDDINGS_URL: 'http://127.0.0.1:8000/v1', EMBEDDINGS_MODEL: 'm' })).toEqual([
      'EMBEDDINGS_URL: only read when EMBEDDER=openai (EMBEDDER is builtin)',
      'EMBEDDINGS_MODEL: only read when EMBEDDER=openai (EMBEDDER is builtin)',
    ]);
    expect(problemsOf(parse, { EMBEDDER: 'none', EMBEDDINGS_API_KEY: 'k' })).toEqual([
      'EMBEDDINGS_API_KEY: only read when EMBEDDER=openai (EMBEDDER is none)',
    ]);
  });
});

describe('the boot check of an openai embedder (checkEmbedder)', () => {
  let server: http.Server;
  let url: string;
  beforeAll(async () => {
    // An OpenAI-compatible endpoint whose model gives 768 dimensions whatever is asked.
    server = http.createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      request.on('end', () => {
        const { input } = JSON.parse(text) as { input: string[] };
        const data = input.map((_, index) => ({ index, embedding: Array.from({ length: 768 }, (_, i) => i + 1) }));
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('learns the dimension count when none is configured', async () => {
    const embedder = embedderFor(
      parseGatewayEnv({ EMBEDDER: 'openai', EMBEDDINGS_URL: url, EMBEDDINGS_MODEL: 'local-768' }),
    );
    await checkEmbedder(embedder);
    expect(embedder.model).toBe('openai:local-768@768');
  });

  it('stops boot with one line when the dimension count differs from EMBEDDINGS_DIMENSIONS', async () => {
    const embedder = embedderFor(
      parseGatewayEnv({
        EMBEDDER: 'openai',
        EMBEDDINGS_URL: url,
        EMBEDDINGS_MODEL: 'local-768',
        EMBEDDINGS_DIMENSIONS: '1024',
      }),
    );
    const error = await checkEmbedder(embedder).then(
      () => new Error('passed'),
      (e: Error) => e,
    );
    expect(error.message).toBe(
      `EMBEDDER=openai: embeddings endpoint ${url}/embeddings gave an unusable answer: 768 dimensions where 1024 were expected (EMBEDDINGS_DIMENSIONS)`,
    );
  });
});
