import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type Human, startHarness } from './harness';

/*
 * `svc mcp` over stdio (from the sources, as `pnpm svc mcp` runs it) with a person's token and no
 * connection workspace: memory URIs that name their workspace, refusals of malformed ones, and
 * the strict JSON decoder on every stdin line (decisions §7: duplicate keys are invalid_input on
 * every transport, MCP arguments included).
 */

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SLOW = { timeout: 300_000 };

let h: Harness;
let owner: Human;
let wsA: string;
let wsB: string;
let memoryA: { id: string; recordedAt: number };
const clients: Client[] = [];
const children: ChildProcessWithoutNullStreams[] = [];

function svcMcpEnv(token: string): Record<string, string> {
  if (!h.database) throw new Error('needs the Postgres harness');
  // No TMS_WORKSPACE: the connection has no workspace.
  return { DATABASE_URL: h.database.url, ...h.issuer.env(), TMS_TOKEN: token, LOG_LEVEL: 'warn' };
}

beforeAll(async () => {
  h = await startHarness({ driver: 'postgres' });
  const a = await h.workspace();
  owner = a.owner;
  wsA = a.id;
  const second = await (await owner.api()).post('/v1/workspaces', { name: 'second' });
  wsB = second.body.workspace.id;
  const ns = (await a.api.post('/v1/namespaces', { parent_id: null, name: 'uris' })).body.namespace;
  const created = (
    await a.api.post('/v1/memories', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'Named by workspace.',
      valid_from: 100,
    })
  ).body;
  memoryA = { id: created.memory.id, recordedAt: created.commit.recorded_at };
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  for (const child of children) child.kill('SIGKILL');
  await h?.close();
});

async function rejection(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

type Connect = () => Promise<Client>;

const connectors: Record<'stdio' | 'http', Connect> = {
  async stdio() {
    const transport = new StdioClientTransport({
      command: 'npx',
      args: ['tsx', 'services/cli/src/main.ts', 'mcp'],
      cwd: ROOT,
      env: svcMcpEnv(await owner.token()),
      stderr: 'ignore',
    });
    const client = new Client({ name: 'uri-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  },
  async http() {
    // No X-Service-Workspace header.
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', h.url), {
      requestInit: { headers: { authorization: `Bearer ${await owner.token()}` } },
    });
    const client = new Client({ name: 'uri-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  },
};

describe.each(['stdio', 'http'] as const)(
  'memory URIs that name their workspace (%s, no connection workspace)',
  (mode) => {
    let client: Client;
    beforeAll(async () => {
      client = await connectors[mode]();
    }, 120_000);

    it('advertises both forms, the workspace-naming one first', async () => {
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
        'memory://{workspace_id}/{id}{?as_of,known_at}',
        'memory://{id}{?as_of,known_at}',
      ]);
    });

    it('reads memory://{workspace_id}/{id}, also pinned in time, as /v1 answers it', SLOW, async () => {
      const uri = `memory://${wsA}/${memoryA.id}`;
      const read = await client.readResource({ uri });
      expect(read.contents).toHaveLength(1);
      expect(read.contents[0]?.uri).toBe(uri);
      const text = (read.contents[0] as { text: string }).text;
      expect(JSON.parse(text).view.revision.text).toBe('Named by workspace.');

      const api = await owner.api(wsA);
      const query = { as_of: 150, known_at: memoryA.recordedAt };
      const rest = await api.get(`/v1/memories/${memoryA.id}`, { query });
      const pinned = await client.readResource({ uri: `${uri}?as_of=150&known_at=${memoryA.recordedAt}` });
      expect((pinned.contents[0] as { text: string }).text).toBe(rest.text);

      const before = await rejection(client.readResource({ uri: `${uri}?as_of=50` }));
      expect(before.code).toBe(-32002);
    });

    it('answers a memory under another workspace than its own as not found', async () => {
      const error = await rejection(client.readResource({ uri: `memory://${wsB}/${memoryA.id}` }));
      expect(error.code).toBe(-32002);
      expect((error.data as { error: { code: string } }).error.code).toBe('not_found');
    });

    it('cannot read the short form without a connection workspace', async () => {
      const error = await rejection(client.readResource({ uri: `memory://${memoryA.id}` }));
      // As memories.get without X-Service-Workspace: invalid_input.
      expect(error.code).toBe(ErrorCode.InvalidParams);
      expect((error.data as { error: { code: string } }).error.code).toBe('invalid_input');
    });

    it.each([
      ['memory://ws_x/mem_a/extra', '3 path segments'],
      ['memory:///mem_a', 'the workspace id is empty'],
      ['memory://ws_x/', 'the memory id is empty'],
      ['memory://ns_x/mem_a', 'the workspace id is not a workspace id (ws_...)'],
      ['memory://ws_x/mem%ZZ', 'the memory id is not percent-encoded correctly'],
      ['memory://ws_x/mem_a#top', 'a fragment is not allowed'],
      ['memory://ws_x/mem_a?as_of=1&as_of=2', 'repeated query parameter "as_of"'],
    ])('refuses %s with -32602 saying why', async (uri, reason) => {
      const error = await rejection(client.readResource({ uri }));
      expect(error.code).toBe(ErrorCode.InvalidParams);
      expect(error.message).toContain(
        `Invalid memory URI: ${reason}; expected memory://{workspace_id}/{id} or memory://{id}`,
      );
      expect((error.data as { error: { code: string } }).error.code).toBe('invalid_input');
    });
  },
);

describe('svc mcp reads stdin with the strict JSON decoder', SLOW, () => {
  let child: ChildProcessWithoutNullStreams;
  const answers: Record<string, unknown>[] = [];

  /** The next answer on stdout (every stdout line must be a JSON-RPC message). */
  async function answer(): Promise<Record<string, unknown>> {
    for (let waited = 0; answers.length === 0; waited += 50) {
      if (waited > 120_000) throw new Error('no answer from svc mcp');
      if (child.exitCode !== null) throw new Error(`svc mcp exited with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return answers.shift() as Record<string, unknown>;
  }
  const send = (line: string) => child.stdin.write(`${line}\n`);

  beforeAll(async () => {
    child = spawn('npx', ['tsx', 'services/cli/src/main.ts', 'mcp'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...svcMcpEnv(await owner.token()) },
    });
    children.push(child);
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        answers.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
      }
    });
    send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      }),
    );
    expect((await answer()).id).toBe(1);
    send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  }, 120_000);

  it('refuses a duplicate key in tool arguments with -32700, to the request that sent it', async () => {
    send(
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"svc_me_get","arguments":{"workspace_id":"${wsA}","workspace_id":"${wsB}"}}}`,
    );
    expect(await answer()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32700,
        message: 'Parse error: message: duplicate key "workspace_id" at message.params.arguments',
      },
    });
  });

  it('answers id null when no id can be read, and for a line that is not JSON-RPC', async () => {
    send('{"jsonrpc":"2.0","method":"notifications/initialized","params":{},"params":{}}');
    expect(await answer()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error: message: duplicate key "params" at message' },
    });
    send('{"id": 8');
    expect(await answer()).toMatchObject({
      id: null,
      error: { code: -32700, message: 'Parse error: message: not JSON' },
    });
    send('{"id": 9, "hello": "world"}');
    expect(await answer()).toMatchObject({
      id: 9,
      error: { code: -32700, message: 'Parse error: message: not a JSON-RPC 2.0 message' },
    });
  });

  it('goes on serving after a refusal: the same call without the duplicate answers', async () => {
    send(
      `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"svc_me_get","arguments":{"workspace_id":"${wsA}"}}}`,
    );
    const ok = await answer();
    expect(ok.id).toBe(10);
    const result = ok.result as { isError?: boolean; structuredContent: { workspace_id: string } };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.workspace_id).toBe(wsA);
  });
});
