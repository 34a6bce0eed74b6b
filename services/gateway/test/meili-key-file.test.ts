import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { meiliApiKeyOf } from '@tms/composition';
import { afterAll, describe, expect, it } from 'vitest';
import { parseEnv as parseCliEnv } from '../../cli/src/env';
import { parseEnv as parseIndexerEnv } from '../../indexer/src/env';
import { parseEnv as parseGatewayEnv } from '../src/env';
import { startHarness } from './harness';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-meili-key-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function keyFile(name: string, content: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
}

const MEILI = { SEARCH_PROVIDER: 'meilisearch', MEILI_URL: 'http://meilisearch:7700' };
const PARSERS = [
  ['gateway', parseGatewayEnv],
  ['indexer', (env: Record<string, string>) => parseIndexerEnv({ DATABASE_URL: 'postgres://db/tms', ...env })],
  ['svc', parseCliEnv],
] as const;

describe.each(PARSERS)('MEILI_API_KEY_FILE in the %s env module', (_, parse) => {
  it('is read once at parse, without its trailing newline', () => {
    const file = keyFile('key', 'scoped-search-key\n');
    const env = parse({ ...MEILI, MEILI_API_KEY_FILE: file });
    fs.writeFileSync(file, 'changed-after-boot');
    expect(meiliApiKeyOf(env)).toBe('scoped-search-key');
    expect(meiliApiKeyOf(parse({ ...MEILI, MEILI_API_KEY: 'direct-key' }))).toBe('direct-key');
  });

  it('stops at boot when the file is missing or empty', () => {
    const missing = path.join(dir, 'absent');
    expect(() => parse({ ...MEILI, MEILI_API_KEY_FILE: missing })).toThrow(
      `MEILI_API_KEY_FILE: cannot read ${missing} (ENOENT)`,
    );
    const empty = keyFile('empty', ' \n');
    expect(() => parse({ ...MEILI, MEILI_API_KEY_FILE: empty })).toThrow(`MEILI_API_KEY_FILE: ${empty} is empty`);
  });

  it('refuses MEILI_API_KEY and MEILI_API_KEY_FILE together', () => {
    const file = keyFile('both', 'k');
    expect(() => parse({ ...MEILI, MEILI_API_KEY: 'k', MEILI_API_KEY_FILE: file })).toThrow(
      'MEILI_API_KEY_FILE: set MEILI_API_KEY or MEILI_API_KEY_FILE, not both',
    );
  });
});

describe('the gateway with MEILI_API_KEY_FILE', () => {
  it('lists a missing key file with the other problems and exits 1 before listening', async () => {
    const missing = path.join(dir, 'never-written');
    const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['services/gateway/src/main.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, ...MEILI, MEILI_API_KEY_FILE: missing, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain(`MEILI_API_KEY_FILE: cannot read ${missing} (ENOENT)`);
    expect(stderr).toMatch(/^ {2}PORT: /m);
  });

  // No Meilisearch runs where this project is developed: a loopback server stands in for it and
  // records what the gateway asks, so the scoped key's rights (search, on one index) are shown to
  // cover everything the gateway does. `svc search create-key`'s own test checks the rights
  // against a real server when MEILI_URL is set.
  it('asks Meilisearch only to search tms_memories, with the key from the file', async () => {
    const requests: string[] = [];
    const meili = http.createServer((req, res) => {
      requests.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({ hits: [], query: '', processingTimeMs: 0, limit: 20, offset: 0, estimatedTotalHits: 0 }),
      );
    });
    await new Promise<void>((resolve) => meili.listen(0, '127.0.0.1', resolve));
    const { port } = meili.address() as { port: number };
    const h = await startHarness({
      driver: 'postgres',
      env: {
        SEARCH_PROVIDER: 'meilisearch',
        MEILI_URL: `http://127.0.0.1:${port}`,
        MEILI_API_KEY_FILE: keyFile('gateway-key', 'key-from-the-file\n'),
      },
    });
    try {
      const { api } = await h.workspace();
      const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'n' })).body.namespace;
      await api.post('/v1/memories', { namespace_id: ns.id, kind: 'claim', text: 'the sky is blue', valid_from: 0 });
      const recall = await api.post('/v1/recall', {
        namespace_ids: [ns.id],
        query: 'sky',
        budget: { max_context_chars: 1000 },
      });
      expect(recall.status).toBe(200);
      expect(requests.length).toBeGreaterThan(0);
      expect(new Set(requests)).toEqual(new Set(['POST /indexes/tms_memories/search Bearer key-from-the-file']));
    } finally {
      await h.close();
      await new Promise<void>((resolve) => meili.close(() => resolve()));
    }
  });
});
