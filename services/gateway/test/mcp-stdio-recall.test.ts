import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { freshKey, runSvc } from '@tms/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';

/*
 * Recall for a stdio agent: `svc mcp` (from the sources, as `pnpm -s svc mcp` runs it) indexes
 * what its agent writes, so a recall that waits for the write's sequence answers `complete` with
 * the memory. On the embedded ledger nothing else can index while it holds the ledger; on
 * Postgres the gateway beside it runs INDEXER=external here, so the index is svc mcp's own.
 */

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SLOW = { timeout: 600_000 };
/** PGlite's start (WebAssembly compile, first migration) takes minutes on a loaded 2-core machine. */
const PATIENT = { timeout: 300_000 };

async function connect(env: Record<string, string>, stderr: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: 'npx',
    args: ['tsx', 'services/cli/src/main.ts', 'mcp'],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
  const client = new Client({ name: 'stdio-recall-test', version: '1.0.0' });
  await client.connect(transport, PATIENT);
  return client;
}

async function callOk(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args }, undefined, PATIENT)) as CallToolResult;
  expect(result.isError, `${name}: ${JSON.stringify(result.structuredContent)}`).toBeFalsy();
  // biome-ignore lint/suspicious/noExplicitAny: test access to JSON answers.
  return result.structuredContent as any;
}

/** Write a memory, then recall it with the write's sequence as `min_sequence`. */
async function writeThenRecall(client: Client, namespaceId: string, workspace: Record<string, string> = {}) {
  const text = `The stdio agent remembers ${freshKey('fact')}.`;
  const created = await callOk(client, 'svc_memories_create', {
    ...workspace,
    namespace_id: namespaceId,
    kind: 'claim',
    text,
    valid_from: 0,
    idempotency_key: freshKey('mem'),
  });
  const ask = {
    ...workspace,
    namespace_ids: [namespaceId],
    query: 'stdio agent remembers',
    budget: { max_context_chars: 10_000 },
    min_sequence: created.commit.sequence,
    wait_ms: 10_000,
  };
  // Each call waits up to 10 s for the index; a few rounds cover a slow, busy machine, where the
  // model may also not embed the query in time (`degraded` for that call).
  let recalled = await callOk(client, 'svc_recall', ask);
  for (let round = 0; round < 5 && (recalled.status === 'pending' || recalled.status === 'degraded'); round += 1) {
    recalled = await callOk(client, 'svc_recall', ask);
  }
  expect(recalled.status).toBe('complete');
  expect(recalled.indexed_sequence).toBeGreaterThanOrEqual(created.commit.sequence);
  expect(recalled.items.map((item: { memory: { id: string } }) => item.memory.id)).toContain(created.memory.id);
}

describe('svc mcp answers recall complete for what its agent wrote', SLOW, () => {
  const clients: Client[] = [];
  const stderr: string[] = [];
  let h: Harness | undefined;
  let dataDir: string | undefined;

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await h?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('on the embedded PGlite ledger (DATA_DIR, DEV_AUTH=1 and the token of svc token)', async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-stdio-recall-'));
    const env = { DATA_DIR: dataDir, DEV_AUTH: '1' };
    const token = await runSvc(['token'], env);
    expect(token.code, token.stderr).toBe(0);
    const client = await connect({ ...env, TMS_TOKEN: token.stdout.trim(), MCP_TOOLS: 'all' }, stderr);
    clients.push(client);
    const { workspace } = await callOk(client, 'svc_workspaces_create', { name: 'stdio', idempotency_key: freshKey() });
    const scope = { workspace_id: workspace.id as string };
    const { namespace } = await callOk(client, 'svc_namespaces_create', {
      ...scope,
      parent_id: null,
      name: 'notes',
      idempotency_key: freshKey(),
    });
    await writeThenRecall(client, namespace.id, scope);
  });

  it('on Postgres beside a gateway that leaves indexing to others (INDEXER=external)', async () => {
    h = await startHarness({ driver: 'postgres' });
    if (!h.database) throw new Error('needs Postgres');
    const { id: ws, owner, api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'notes' })).body.namespace;
    const client = await connect(
      { DATABASE_URL: h.database.url, ...h.issuer.env(), TMS_TOKEN: await owner.token(), TMS_WORKSPACE: ws },
      stderr,
    );
    clients.push(client);
    await writeThenRecall(client, ns.id);
  });

  it('wrote no error to stderr', () => {
    expect(stderr.join('')).not.toMatch(/"level":(50|60)\b|Error:/);
  });
});
