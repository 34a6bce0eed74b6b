import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MeilisearchProvider, SearchUnavailableError } from '@tms/search';
import { cliLines, runSvc } from '@tms/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { parseEnv } from '../src/env';
import { runInProcess } from './in-process';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-search-key-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The CLI in this process over the given environment, output captured. */
const svc = (argv: string[], env: Record<string, string>) => runInProcess(argv, async () => parseEnv(env));

/** A loopback port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('svc search create-key, without a Meilisearch server', () => {
  it('reports an unreachable server in one line, exits 1 and writes no file', async () => {
    const port = await closedPort();
    const output = path.join(dir, 'unreachable');
    const run = await runSvc(['search', 'create-key', '--output', output], {
      MEILI_URL: `http://127.0.0.1:${port}`,
      MEILI_API_KEY: 'master-key-of-at-least-16-bytes',
    });
    expect(run.code).toBe(1);
    expect(cliLines(run.stderr)).toEqual([`svc: cannot reach Meilisearch at http://127.0.0.1:${port} (ECONNREFUSED)`]);
    expect(run.stdout).toBe('');
    expect(fs.existsSync(output)).toBe(false);
  });

  it('needs MEILI_URL', async () => {
    const run = await svc(['search', 'create-key', '--output', path.join(dir, 'no-url')], {});
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('svc: svc search create-key needs MEILI_URL (the Meilisearch server)\n');
  });

  it('refuses a uid that is not a UUID, and a missing --output, as usage errors', async () => {
    const env = { MEILI_URL: 'http://127.0.0.1:7700' };
    const badUid = await svc(['search', 'create-key', '--output', path.join(dir, 'x'), '--uid', 'gateway'], env);
    expect(badUid.code).toBe(2);
    expect(badUid.stderr).toContain("option '--uid <uuid>' argument 'gateway' is invalid");
    const noOutput = await svc(['search', 'create-key'], env);
    expect(noOutput.code).toBe(2);
    expect(noOutput.stderr).toContain("required option '--output <file>' not specified");
  });
});

// Against a real server only when MEILI_URL points at one (with its master key in MEILI_API_KEY),
// like the provider contract tests; none runs where this project is developed.
const meiliUrl = process.env.MEILI_URL;
const masterKey = process.env.MEILI_API_KEY;
describe.skipIf(!meiliUrl)('svc search create-key, against Meilisearch at MEILI_URL', () => {
  const url = meiliUrl as string;
  const uid = crypto.randomUUID();
  const index = `tms_keytest_${crypto.randomBytes(4).toString('hex')}`;
  const env = { MEILI_URL: url, ...(masterKey ? { MEILI_API_KEY: masterKey } : {}) };
  afterAll(async () => {
    await fetch(`${url}/keys/${uid}`, { method: 'DELETE', headers: { authorization: `Bearer ${masterKey}` } });
    await fetch(`${url}/indexes/${index}`, { method: 'DELETE', headers: { authorization: `Bearer ${masterKey}` } });
  });

  it('creates a key that may search the index and nothing else, and finds it again', async () => {
    const output = path.join(dir, 'search-key');
    const first = await svc(['search', 'create-key', '--output', output, '--uid', uid, '--index', index], env);
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe(`search key ${uid} created (search on ${index}), written to ${output}\n`);
    const key = fs.readFileSync(output, 'utf8').trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(first.stdout).not.toContain(key);
    expect(fs.statSync(output).mode & 0o777).toBe(0o600);

    const again = await svc(['search', 'create-key', '--output', output, '--uid', uid, '--index', index], env);
    expect(again.stdout).toContain(`search key ${uid} found`);
    expect(fs.readFileSync(output, 'utf8').trim()).toBe(key);

    const admin = new MeilisearchProvider(url, masterKey, index);
    await admin.prepare();
    const gateway = new MeilisearchProvider(url, key, index);
    const query = {
      workspaceId: 'ws_a',
      text: 'sky',
      namespaceIds: ['ns_1'],
      asOf: 1,
      knownAt: 1,
      limit: 10,
      offset: 0,
    };
    expect(await gateway.search(query)).toEqual([]);
    await expect(gateway.apply('ws_a', { upserts: [], deletes: ['rev_1'] })).rejects.toThrow(SearchUnavailableError);
    await expect(gateway.prepare()).rejects.toThrow(SearchUnavailableError);
    await expect(new MeilisearchProvider(url, key, `${index}_other`).search(query)).rejects.toThrow(
      SearchUnavailableError,
    );
  });

  it('replaces a key of that uid with other rights, keeping its value', async () => {
    const output = path.join(dir, 'replaced-key');
    await svc(['search', 'create-key', '--output', output, '--uid', uid, '--index', `${index}_other`], env);
    const before = fs.readFileSync(output, 'utf8');
    const run = await svc(['search', 'create-key', '--output', output, '--uid', uid, '--index', index], env);
    expect(run.stdout).toContain(`search key ${uid} replaced (search on ${index})`);
    expect(fs.readFileSync(output, 'utf8')).toBe(before);
  });
});
