import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { fieldDescription, OPERATIONS } from '@tms/catalog';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type Human, startHarness } from './harness';

/*
 * MCP_TOOLS: the default `memory` set lists what an agent needs to remember and recall, small
 * enough for its context; `all` lists every catalog operation. Every tool and every property of
 * its input schema says in one sentence what it is, taken from the catalog.
 */

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SLOW = { timeout: 300_000 };
/** The default `tools/list` answer stays under this many bytes (an agent's context is small). */
const DEFAULT_LIST_BUDGET = 30_000;

const MEMORY_OPERATIONS = OPERATIONS.filter(
  (op) =>
    op.name.startsWith('memories.') ||
    op.name.startsWith('evidence.') ||
    ['recall', 'changes.list', 'me.get', 'namespaces.list'].includes(op.name),
);
const sorted = (names: Iterable<string>) => [...names].sort();
/** One sentence: one line that ends with a full stop. */
const ONE_SENTENCE = /^[A-Za-z0-9`"(][^\n]*[.)]$/;

let h: Harness;
let owner: Human;
let ws: string;
const clients: Client[] = [];

beforeAll(async () => {
  // No MCP_TOOLS: the gateway's default.
  h = await startHarness({ driver: 'postgres' });
  const workspace = await h.workspace();
  owner = workspace.owner;
  ws = workspace.id;
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await h?.close();
});

async function overHttp(): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', h.url), {
    requestInit: { headers: { authorization: `Bearer ${await owner.token()}`, 'x-service-workspace': ws } },
  });
  const client = new Client({ name: 'tool-sets-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

function expectDescribed(tools: Tool[]) {
  for (const tool of tools) {
    const operation = OPERATIONS.find((op) => op.tool === tool.name);
    expect(operation, tool.name).toBeDefined();
    expect(tool.description).toBe(operation?.summary);
    expect(tool.description, tool.name).toMatch(ONE_SENTENCE);
    for (const [name, property] of Object.entries(tool.inputSchema.properties ?? {})) {
      const description = (property as { description?: string }).description;
      expect(description, `${tool.name}.${name}`).toMatch(ONE_SENTENCE);
      // From the catalog's table, not restated by the transport (the two header-like arguments aside).
      if (name !== 'workspace_id' && name !== 'idempotency_key' && operation) {
        expect(description).toBe(fieldDescription(operation, name));
      }
    }
  }
}

describe('MCP_TOOLS (over HTTP, the default memory set)', () => {
  it('lists the memory tools only: memories, evidence, recall, the change feed, namespaces.list and me.get', async () => {
    const { tools } = await (await overHttp()).listTools();
    expect(sorted(tools.map((t) => t.name))).toEqual(sorted(MEMORY_OPERATIONS.map((op) => op.tool)));
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['svc_recall', 'svc_memories_create', 'svc_evidence_create', 'svc_changes_list']),
    );
    expect(tools.map((t) => t.name)).not.toContain('svc_namespaces_grants_put');
    expectDescribed(tools);
  });

  it(`answers tools/list in under ${DEFAULT_LIST_BUDGET} bytes`, async () => {
    const res = await fetch(new URL('/mcp', h.url), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await owner.token()}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(JSON.parse(body).result.tools).toHaveLength(MEMORY_OPERATIONS.length);
    expect(Buffer.byteLength(body)).toBeLessThan(DEFAULT_LIST_BUDGET);
  });

  it('refuses a tool outside the set as unknown, before running anything', async () => {
    const client = await overHttp();
    const refused = await client
      .callTool({ name: 'svc_workspaces_create', arguments: { name: 'nope', idempotency_key: 'k-1' } })
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(ErrorCode.InvalidParams);
    expect(String((refused as McpError).message)).toContain('Unknown tool: svc_workspaces_create');
    const listed = await (await owner.api()).get('/v1/workspaces');
    expect(listed.body.workspaces.map((w: { name: string }) => w.name)).not.toContain('nope');
  });
});

describe('MCP_TOOLS=all (svc mcp over stdio)', SLOW, () => {
  it('lists one tool per catalog operation, each described from the catalog', async () => {
    if (!h.database) throw new Error('needs the Postgres harness');
    const transport = new StdioClientTransport({
      command: 'npx',
      args: ['tsx', 'services/cli/src/main.ts', 'mcp'],
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        DATABASE_URL: h.database.url,
        ...h.issuer.env(),
        TMS_TOKEN: await owner.token(),
        TMS_WORKSPACE: ws,
        // A separate process: its own indexer would only add load here.
        INDEXER: 'external',
        MCP_TOOLS: 'all',
        LOG_LEVEL: 'warn',
      },
      stderr: 'ignore',
    });
    const client = new Client({ name: 'tool-sets-test', version: '1.0.0' });
    await client.connect(transport, SLOW);
    clients.push(client);
    const { tools } = await client.listTools();
    expect(sorted(tools.map((t) => t.name))).toEqual(sorted(OPERATIONS.map((op) => op.tool)));
    expectDescribed(tools);
  });
});
