import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { inToolSet } from '@tms/agent-tools';
import { OPERATIONS } from '@tms/catalog';
import { freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';

/*
 * docs/agents.md, "Connecting over stdio", followed as written from a fresh clone: clone the
 * committed checkout (work not committed is not in it), install from the lockfile, build, take the
 * JSON block out of the markdown, replace only its documented placeholders, and start it with the
 * MCP SDK's stdio client. Clone, install and build take some 40 s on a busy 2-core machine.
 */

const ROOT = path.resolve(import.meta.dirname, '../../..');
const run = promisify(execFile);
const SLOW = { timeout: 900_000 };
const PATIENT = { timeout: 300_000 };

/** The placeholders the doc's table explains, and nothing else, are substituted. */
const PATH_PLACEHOLDER = '/absolute/path/to/temporal-memory-service';
const KEY_PLACEHOLDER = '<SERVICE_KEY>';
const DATABASE_PLACEHOLDER = '<DATABASE_URL>';

interface StdioServerConfig {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The JSON between `<!-- agent-config:stdio -->` and its closing marker. */
function documentedConfig(markdown: string): string {
  const block = /<!-- agent-config:stdio -->\s*```json\n([\s\S]*?)```\s*<!-- \/agent-config:stdio -->/.exec(markdown);
  if (!block?.[1]) throw new Error('docs/agents.md has no agent-config:stdio JSON block');
  return block[1];
}

function substitute(json: string, values: Record<string, string>): StdioServerConfig {
  let text = json;
  for (const [placeholder, value] of Object.entries(values)) {
    expect(text, `the block uses ${placeholder}`).toContain(placeholder);
    text = text.split(placeholder).join(value);
  }
  expect(text).not.toMatch(/<[A-Z_]+>/);
  const config = JSON.parse(text) as { mcpServers: Record<string, StdioServerConfig> };
  const servers = Object.values(config.mcpServers);
  expect(servers).toHaveLength(1);
  return servers[0] as StdioServerConfig;
}

const svc = (clone: string, args: string[], env: Record<string, string>) =>
  run(process.execPath, [path.join(clone, 'dist/bin/svc.mjs'), ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });

async function connect(server: StdioServerConfig, stderr: string[]): Promise<Client> {
  const transport = new StdioClientTransport({ ...server, stderr: 'pipe' });
  transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
  const client = new Client({ name: 'agent-setup-test', version: '1.0.0' });
  // PGlite's first start takes minutes on a loaded 2-core machine.
  await client.connect(transport, PATIENT);
  return client;
}

/** Closing a client ends its server; its process may take a moment to be gone. */
async function closed(client: Client): Promise<void> {
  const pid = (client.transport as StdioClientTransport).pid;
  await client.close();
  for (; pid !== null; ) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function callOk(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args }, undefined, PATIENT)) as CallToolResult;
  expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
  // biome-ignore lint/suspicious/noExplicitAny: test access to JSON answers.
  return result.structuredContent as any;
}

/** The default tool set (MCP_TOOLS unset: memory). */
const memoryTools = OPERATIONS.filter((op) => inToolSet(op, 'memory'))
  .map((op) => op.tool)
  .sort();

/** Step 4 and 5 of the doc: a service key issued and granted the namespace with the compiled CLI. */
async function issueAndGrant(clone: string, env: Record<string, string>, workspace: string, namespace: string) {
  const issued = await svc(
    clone,
    ['admin', 'service-key', 'issue', '--workspace', workspace, '--name', 'my-agent', '--capabilities', 'read,observe'],
    env,
  );
  const key = issued.stdout.trim();
  expect(key).toMatch(/^tms_sk_/);
  const keyId = /issued service key (cred_\w+)/.exec(issued.stderr)?.[1];
  expect(keyId).toBe(`cred_${key.slice(7, 31)}`);
  const grants = [
    { target: { kind: 'credential', credential_id: keyId }, capabilities: ['read', 'observe'], inherit: true },
  ];
  const scope = ['--workspace', workspace, '--namespace', namespace];
  expect(JSON.parse((await svc(clone, ['admin', 'grant', 'list', ...scope], env)).stdout)).toEqual([]);
  const put = await svc(clone, ['admin', 'grant', 'put', ...scope, '--grants', JSON.stringify(grants)], env);
  expect(JSON.parse(put.stdout)).toEqual(grants);
  return key;
}

/** The agent writes a memory and recalls it, waiting for its own write (min_sequence). */
async function writeAndRecall(client: Client, namespace: string, text: string) {
  const created = await callOk(client, 'svc_memories_create', {
    namespace_id: namespace,
    kind: 'claim',
    text,
    valid_from: 0,
    idempotency_key: freshKey('setup'),
  });
  const ask = {
    namespace_ids: [namespace],
    query: text,
    budget: { max_context_chars: 10_000 },
    min_sequence: created.commit.sequence,
    wait_ms: 10_000,
  };
  // `pending` until the index has the write; `degraded` while the semantic arm cannot embed the
  // query yet (the builtin model still loading on a busy machine): both honest, both passing.
  const deadline = Date.now() + 60_000;
  let recalled = await callOk(client, 'svc_recall', ask);
  while ((recalled.status === 'pending' || recalled.status === 'degraded') && Date.now() < deadline) {
    if (recalled.status === 'degraded') expect(recalled.retrieval.lexical).toBe('ok');
    await new Promise((resolve) => setTimeout(resolve, 500));
    recalled = await callOk(client, 'svc_recall', ask);
  }
  expect(recalled.status).toBe('complete');
  expect(recalled.items.map((item: { memory: { id: string } }) => item.memory.id)).toContain(created.memory.id);
}

/** A free loopback port (for the compiled gateway of the embedded-ledger set-up). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the stdio set-up of docs/agents.md, from a fresh clone', SLOW, () => {
  let h: Harness;
  let clone: string;
  const clients: Client[] = [];
  const stderr: string[] = [];

  beforeAll(async () => {
    // Migrated below by the compiled CLI, as the doc's step 2 says.
    h = await startHarness({ driver: 'postgres', migrate: false });
    clone = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-clone-'));
    await run('git', ['clone', '--quiet', ROOT, clone]);
    const pnpm = (...args: string[]) => run('npx', ['-y', 'pnpm@10', ...args], { cwd: clone, maxBuffer: 1 << 24 });
    await pnpm('install', '--frozen-lockfile', '--prefer-offline');
    await pnpm('build');
  }, 600_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => {})));
    await h?.close();
    if (clone) fs.rmSync(clone, { recursive: true, force: true });
  });

  it('builds the services into dist/ with source maps', () => {
    for (const name of ['gateway', 'indexer', 'svc']) {
      const bundle = path.join(clone, 'dist/bin', `${name}.mjs`);
      expect(fs.readFileSync(bundle, 'utf8')).toContain(`//# sourceMappingURL=${name}.mjs.map`);
      expect(fs.existsSync(`${bundle}.map`)).toBe(true);
    }
  });

  it('serves the memory tools with the documented configuration and a granted service key; recall completes', async () => {
    if (!h.database) throw new Error('needs Postgres');
    const env = { DATABASE_URL: h.database.url };
    // Step 2: the compiled CLI migrates (it finds the migrations beside its bundle).
    expect((await svc(clone, ['migrate'], env)).stdout).toContain('migrations applied');
    // Step 3: a workspace and a namespace, made by a person through the gateway (here INDEXER=external:
    // the index is svc mcp's own). Steps 4 and 5 with the compiled CLI.
    const workspace = await h.workspace();
    const ns = (await workspace.api.post('/v1/namespaces', { parent_id: null, name: 'agent' })).body.namespace;
    const key = await issueAndGrant(clone, env, workspace.id, ns.id);

    const markdown = fs.readFileSync(path.join(clone, 'docs/agents.md'), 'utf8');
    const server = substitute(documentedConfig(markdown), {
      [PATH_PLACEHOLDER]: clone,
      [KEY_PLACEHOLDER]: key,
      [DATABASE_PLACEHOLDER]: h.database.url,
    });
    expect(server.command).toBe('node');

    const client = await connect(server, stderr);
    clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(memoryTools);

    const me = await callOk(client, 'svc_me_get');
    expect(me.caller_kind).toBe('service_key');
    expect(me.workspace_id).toBe(workspace.id);
    const created = await callOk(client, 'svc_memories_create', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'The agent set-up works as written.',
      valid_from: 0,
      idempotency_key: freshKey('setup'),
    });
    const read = await callOk(client, 'svc_memories_get', { id: created.memory.id });
    expect(read.view.revision.text).toBe('The agent set-up works as written.');
    await writeAndRecall(client, ns.id, 'The agent recalls what it wrote on Postgres.');
  });

  it('runs the documented set-up on the embedded PGlite ledger under DATA_DIR', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-agent-pglite-'));
    try {
      const env = { DATA_DIR: dataDir };
      // Step 3: the compiled gateway with the dev issuer; a person makes the workspace and namespace.
      const port = await freePort();
      const gateway = spawn(process.execPath, [path.join(clone, 'dist/bin/gateway.mjs')], {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          ...env,
          DEV_AUTH: '1',
          PORT: String(port),
          LOG_LEVEL: 'warn',
        },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => gateway.once('exit', resolve));
      const base = `http://127.0.0.1:${port}`;
      let ready = false;
      for (let attempt = 0; attempt < 600 && !ready; attempt += 1) {
        ready = await fetch(`${base}/readyz`).then(
          (res) => res.ok,
          () => false,
        );
        if (!ready) await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(ready).toBe(true);
      const token = (await svc(clone, ['token'], { ...env, DEV_AUTH: '1' })).stdout.trim();
      const post = async (url: string, body: object, workspace?: string) => {
        const res = await fetch(`${base}${url}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'idempotency-key': freshKey(),
            ...(workspace ? { 'x-service-workspace': workspace } : {}),
          },
          body: JSON.stringify(body),
        });
        expect(res.status).toBe(200);
        // biome-ignore lint/suspicious/noExplicitAny: test access to JSON answers.
        return (await res.json()) as any;
      };
      const { workspace } = await post('/v1/workspaces', { name: 'embedded' });
      const { namespace } = await post('/v1/namespaces', { parent_id: null, name: 'agent' }, workspace.id);
      // The PGlite folder admits one process: the gateway stops before the CLI and svc mcp open it.
      gateway.kill('SIGTERM');
      await exited;

      const key = await issueAndGrant(clone, env, workspace.id, namespace.id);
      const markdown = fs.readFileSync(path.join(clone, 'docs/agents.md'), 'utf8');
      const server = substitute(documentedConfig(markdown), {
        [PATH_PLACEHOLDER]: clone,
        [KEY_PLACEHOLDER]: key,
        [DATABASE_PLACEHOLDER]: 'unused',
      });
      // The doc's embedded variant: DATA_DIR in place of DATABASE_URL.
      const { DATABASE_URL: _unused, ...rest } = server.env;
      const client = await connect({ ...server, env: { ...rest, DATA_DIR: dataDir, LOG_LEVEL: 'warn' } }, stderr);
      clients.push(client);
      expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(memoryTools);
      // PGlite was loaded on demand from dist/node_modules and migrated from dist/drizzle; svc mcp
      // indexes it itself (nothing else can open it).
      await writeAndRecall(client, namespace.id, 'The agent recalls what it wrote on the embedded ledger.');
      // The server owns the files it wrote until it has exited.
      await closed(client);
      expect(fs.existsSync(path.join(dataDir, 'pglite'))).toBe(true);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('wrote no error to stderr', () => {
    // The log schema's numeric levels: 50 error, 60 fatal.
    expect(stderr.join('')).not.toMatch(/"level":(50|60)\b|Error:/);
  });
});
