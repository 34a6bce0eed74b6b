import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../../scripts/generate-schema';
import { GraphqlClient } from './graphql-client';
import { type Harness, startHarness } from './harness';

/** The examples of docs/graphql.md work as written. */

const DOC = fs.readFileSync(path.join(ROOT, 'docs/graphql.md'), 'utf8');
const blocks = (lang: string) =>
  [...DOC.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] as string);

describe('docs/graphql.md examples (pglite)', () => {
  let h: Harness;
  let ws: string;
  let ns: string;
  let token: string;
  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite' });
    const workspace = await h.workspace();
    ws = workspace.id;
    token = await workspace.owner.token();
    ns = (await workspace.api.post('/v1/namespaces', { parent_id: null, name: 'people' })).body.namespace.id;
  });
  afterAll(() => h?.close());

  it('runs the mutation and the query as printed', async () => {
    const [mutation, query] = blocks('graphql');
    expect(mutation).toMatch(/^mutation Remember/);
    expect(query).toMatch(/^query Read/);
    const client = new GraphqlClient(h.url, token, ws);
    const created = await client.data(mutation as string, { ns, key: freshKey() });
    expect(created.createMemory.revision.status).toBe('candidate');
    const read = await client.data(query as string, { id: created.createMemory.memory.id });
    expect(read.memory.view.revision.text).toBe('Ana prefers tea.');
    expect(read.memory.view.memory.namespace.displayPath).toEqual(['people']);
  });

  it('runs the curl example as printed', async () => {
    const [script] = blocks('sh');
    // Asynchronously: the gateway answering it runs in this process.
    const run = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script as string], {
      env: { ...process.env, TMS_URL: h.url, TOKEN: token, WS: ws, NS: ns },
      encoding: 'utf8',
      timeout: 60_000,
    });
    const view = JSON.parse(run.stdout);
    expect(view.revision).toEqual({ text: 'Ana prefers tea.', status: 'candidate', validFrom: 1700000000 });
    expect(view.memory.id).toMatch(/^mem_/);
  });
});
