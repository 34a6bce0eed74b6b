import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { errorObject, OPERATIONS } from '@tms/catalog';
import { freshKey, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type Human, startHarness } from './harness';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const CATALOG_TOOLS = OPERATIONS.map((op) => op.tool);
const sorted = (names: Iterable<string>) => [...names].sort();

type Transport = 'http' | 'stdio';
type Connect = (token: string, workspace: string | null, requestId?: string) => Promise<Client>;

interface ErrorEnvelope {
  error: ReturnType<typeof errorObject>;
}

let h: Harness;
const clients: Client[] = [];
const stderr: string[] = [];
const transportErrors: Error[] = [];

// Every tool of the catalog: MCP_TOOLS=all (the default set is held in mcp-tool-sets.test.ts).
beforeAll(async () => {
  h = await startHarness({ driver: 'postgres', env: { MCP_TOOLS: 'all' } });
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await h?.close();
});

async function track(client: Client, transport: StreamableHTTPClientTransport | StdioClientTransport) {
  client.onerror = (error) => transportErrors.push(error);
  await client.connect(transport);
  clients.push(client);
  return client;
}

const connectors: Record<Transport, Connect> = {
  async http(token, workspace, requestId) {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (workspace) headers['x-service-workspace'] = workspace;
    if (requestId) headers['x-request-id'] = requestId;
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', h.url), { requestInit: { headers } });
    return track(new Client({ name: 'mcp-test', version: '1.0.0' }), transport);
  },
  async stdio(token, workspace) {
    if (!h.database) throw new Error('stdio tests need the Postgres harness');
    const transport = new StdioClientTransport({
      command: 'npx',
      args: ['tsx', 'services/cli/src/main.ts', 'mcp'],
      cwd: ROOT,
      env: {
        DATABASE_URL: h.database.url,
        ...h.issuer.env(),
        TMS_TOKEN: token,
        ...(workspace ? { TMS_WORKSPACE: workspace } : {}),
        LOG_LEVEL: 'warn',
        MCP_TOOLS: 'all',
        // As the harness's gateway: no indexer (mcp-stdio-recall.test.ts holds svc mcp's own).
        INDEXER: 'external',
      },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
    return track(new Client({ name: 'mcp-test', version: '1.0.0' }), transport);
  },
};

async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  // The first text item always carries the same JSON as the structured content; an
  // invalid_input adds a second naming what was wrong (decisions §7), no other error does.
  const json = { type: 'text', text: JSON.stringify(result.structuredContent) };
  const code = (result.structuredContent as Partial<ErrorEnvelope> | undefined)?.error?.code;
  if (result.isError && code === 'invalid_input') {
    expect(result.content).toEqual([
      json,
      { type: 'text', text: expect.stringMatching(/^invalid_input: [\x20-\x7e]+$/) },
    ]);
  } else {
    expect(result.content).toEqual([json]);
  }
  return result;
}

/** Call a tool that must succeed and return its structured content. */
async function ok(client: Client, name: string, args: Record<string, unknown> = {}, called?: Set<string>) {
  const result = await call(client, name, args);
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.structuredContent)}`);
  called?.add(name);
  // biome-ignore lint/suspicious/noExplicitAny: test access to JSON answers.
  return result.structuredContent as any;
}

/** Call a tool that must fail and return its /v1 error object. */
async function failure(client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await call(client, name, args);
  expect(result.isError).toBe(true);
  const envelope = result.structuredContent as unknown as ErrorEnvelope;
  expect(Object.keys(envelope)).toEqual(['error']);
  // Exactly the /v1 error object: fixed message, status and retryability for the code.
  expect(envelope.error).toEqual(
    errorObject(envelope.error.code, envelope.error.request_id, envelope.error.retry_after_seconds),
  );
  return envelope.error;
}

const textOf = (content: { text?: string } | { blob: string } | undefined) =>
  content && 'text' in content ? content.text : undefined;

// biome-ignore lint/suspicious/noExplicitAny: test access to JSON answers.
const jsonOf = (res: Response): Promise<any> => res.json();

const withoutRequestId = ({ request_id: _id, ...rest }: ErrorEnvelope['error']) => rest;

// A stdio connection spawns `svc mcp` through npx and tsx: on a loaded 2-core machine, a minute.
describe.each<Transport>(['http', 'stdio'])('agent tools over MCP (%s)', { timeout: 180_000 }, (mode) => {
  const connect: Connect = (...args) => connectors[mode](...args);
  let ws: string;
  let owner: Human;
  let client: Client;

  beforeAll(async () => {
    const workspace = await h.workspace();
    ws = workspace.id;
    owner = workspace.owner;
    client = await connect(await owner.token(), ws);
  });

  it('lists exactly one tool per catalog operation, generated from the catalog', async () => {
    const { tools } = await client.listTools();
    expect(sorted(tools.map((tool) => tool.name))).toEqual(sorted(CATALOG_TOOLS));
    for (const op of OPERATIONS) {
      const tool = tools.find((t) => t.name === op.tool);
      expect(tool?.description).toBe(op.summary);
      expect(tool?.inputSchema.type).toBe('object');
      expect(tool?.inputSchema.additionalProperties).toBe(false);
      expect(tool?.outputSchema?.type).toBe('object');
      expect(tool?.annotations?.readOnlyHint).toBe(!op.mutates);
      const properties = Object.keys(tool?.inputSchema.properties ?? {});
      const required = tool?.inputSchema.required ?? [];
      const fields = [op.input.params, op.input.query, op.input.body].flatMap((part) =>
        part ? Object.keys(part.shape) : [],
      );
      for (const field of fields) expect(properties).toContain(field);
      expect(required.includes('idempotency_key')).toBe(op.idempotent);
      expect(properties.includes('workspace_id')).toBe(
        op.workspace === 'selected' || (op.workspace === 'directory' && op.name === 'me.get'),
      );
      expect(JSON.stringify(tool)).not.toContain('$schema');
    }
  });

  it('calls every tool successfully in a realistic sequence', async () => {
    const called = new Set<string>();
    const key = () => freshKey('mcp');

    const me = await ok(client, 'svc_me_get', {}, called);
    expect(me).toMatchObject({ actor: { id: owner.actorId }, caller_kind: 'session', workspace_id: ws });
    const listed = await ok(client, 'svc_workspaces_list', {}, called);
    expect(listed.workspaces.map((w: { id: string }) => w.id)).toContain(ws);
    const created = await ok(client, 'svc_workspaces_create', { name: 'agents', idempotency_key: key() }, called);
    expect(created.workspace.id).toMatch(/^ws_/);
    // The argument overrides the connection's workspace.
    expect((await ok(client, 'svc_me_get', { workspace_id: created.workspace.id })).workspace_id).toBe(
      created.workspace.id,
    );

    const { namespace } = await ok(
      client,
      'svc_namespaces_create',
      { parent_id: null, name: 'people', idempotency_key: key() },
      called,
    );
    await ok(client, 'svc_namespaces_update', { id: namespace.id, name: 'persons', idempotency_key: key() }, called);
    expect((await ok(client, 'svc_namespaces_get', { id: namespace.id }, called)).namespace.name).toBe('persons');
    const namespaces = await ok(client, 'svc_namespaces_list', { limit: 10 }, called);
    expect(namespaces.namespaces.map((n: { id: string }) => n.id)).toContain(namespace.id);

    const excerpt = 'Ana said she prefers tea over coffee.';
    const sha = sha256Hex(excerpt);
    const { evidence } = await ok(
      client,
      'svc_evidence_create',
      {
        namespace_id: namespace.id,
        source_locator: 'chat://demo/1',
        content_root_sha256: sha,
        excerpt,
        idempotency_key: key(),
      },
      called,
    );
    const { verification } = await ok(
      client,
      'svc_evidence_verify',
      {
        id: evidence.id,
        expected_content_root_sha256: sha,
        expected_excerpt_sha256: evidence.excerpt_sha256,
        verdict: 'verified',
        idempotency_key: key(),
      },
      called,
    );
    expect((await ok(client, 'svc_evidence_get', { id: evidence.id }, called)).verifications).toHaveLength(1);

    const asserted = await ok(
      client,
      'svc_memories_create',
      {
        namespace_id: namespace.id,
        kind: 'claim',
        text: 'Ana prefers tea.',
        valid_from: 1700000000,
        evidence_ids: [evidence.id],
        idempotency_key: key(),
      },
      called,
    );
    expect(asserted.revision.status).toBe('asserted');
    const view = await ok(client, 'svc_memories_get', { id: asserted.memory.id, include_evidence: true }, called);
    expect(view.view.revision.text).toBe('Ana prefers tea.');
    expect(view.view.evidence.map((e: { id: string }) => e.id)).toEqual([evidence.id]);

    const candidate = await ok(client, 'svc_memories_create', {
      namespace_id: namespace.id,
      kind: 'episode',
      text: 'Ana ordered tea on Monday.',
      valid_from: 1700000000.5,
      idempotency_key: key(),
    });
    expect(candidate.revision.status).toBe('candidate');
    const attested = await ok(
      client,
      'svc_memories_attest',
      {
        id: candidate.memory.id,
        expected_generation: 1,
        evidence_ids: [evidence.id],
        verification_ids: [verification.id],
        idempotency_key: key(),
      },
      called,
    );
    expect(attested.revision.status).toBe('asserted');

    const corrected = await ok(
      client,
      'svc_memories_correct',
      { id: asserted.memory.id, expected_generation: 1, text: 'Ana prefers green tea.', idempotency_key: key() },
      called,
    );
    expect(corrected.memory.generation).toBe(2);
    const history = await ok(client, 'svc_memories_history', { id: asserted.memory.id }, called);
    expect(history.revisions.map((r: { generation: number }) => r.generation)).toEqual([2, 1]);
    const memories = await ok(client, 'svc_memories_list', { namespace_id: namespace.id }, called);
    expect(sorted(memories.items.map((i: { memory: { id: string } }) => i.memory.id))).toEqual(
      sorted([asserted.memory.id, candidate.memory.id]),
    );
    // Recall answers from the ledger and says how complete it is (the indexer may lag here).
    const recalled = await ok(
      client,
      'svc_recall',
      { namespace_ids: [namespace.id], query: 'tea', budget: { max_items: 5, max_context_chars: 10000 } },
      called,
    );
    expect(['complete', 'partial', 'degraded', 'pending']).toContain(recalled.status);
    expect(Array.isArray(recalled.items)).toBe(true);
    await ok(
      client,
      'svc_memories_forget',
      { id: candidate.memory.id, mode: 'retract', expected_generation: 2, idempotency_key: key() },
      called,
    );

    const stray = await ok(client, 'svc_evidence_create', {
      namespace_id: namespace.id,
      source_locator: 'chat://demo/2',
      content_root_sha256: sha256Hex('pasted by mistake'),
      excerpt: 'pasted by mistake',
      idempotency_key: key(),
    });
    const purged = await ok(client, 'svc_evidence_forget', { id: stray.evidence.id, idempotency_key: key() }, called);
    expect(purged.receipt.erased_excerpt_sha256).toBe(sha256Hex('pasted by mistake'));

    const bob = await h.human({ enroll: false });
    const members = await ok(
      client,
      'svc_workspaces_members_put',
      {
        id: ws,
        members: [
          { actor_id: owner.actorId, role: 'admin' },
          { actor_id: bob.actorId, role: 'member' },
        ],
        idempotency_key: key(),
      },
      called,
    );
    expect(members.members).toHaveLength(2);
    const grants = await ok(
      client,
      'svc_namespaces_grants_put',
      {
        id: namespace.id,
        grants: [{ target: { kind: 'actor', actor_id: bob.actorId }, capabilities: ['read'], inherit: false }],
        idempotency_key: key(),
      },
      called,
    );
    expect(grants.grants).toHaveLength(1);
    const listedGrants = await ok(client, 'svc_namespaces_grants_list', { id: namespace.id }, called);
    expect(listedGrants).toEqual({ namespace_id: namespace.id, grants: grants.grants });

    // A product installation and its credential, issued, listed and revoked by tools.
    const { installation } = await ok(
      client,
      'svc_installations_create',
      { name: 'crm', idempotency_key: key() },
      called,
    );
    const installations = await ok(client, 'svc_installations_list', {}, called);
    expect(installations.installations.map((i: { id: string }) => i.id)).toEqual([installation.id]);
    const issued = await ok(
      client,
      'svc_credentials_create',
      {
        kind: 'installation',
        product_installation_id: installation.id,
        name: 'crm-agent',
        capabilities: ['read'],
        idempotency_key: key(),
      },
      called,
    );
    expect(issued.secret).toMatch(/^tms_ic_/);
    const credentials = await ok(client, 'svc_credentials_list', {}, called);
    expect(credentials.credentials.map((c: { id: string }) => c.id)).toEqual([issued.credential.id]);
    const revoked = await ok(
      client,
      'svc_credentials_revoke',
      { id: issued.credential.id, idempotency_key: key() },
      called,
    );
    expect(revoked.credential.revoked_at).toBe(revoked.commit.recorded_at);
    const uninstalled = await ok(
      client,
      'svc_installations_revoke',
      { id: installation.id, idempotency_key: key() },
      called,
    );
    expect(uninstalled.installation.revoked_at).not.toBeNull();
    // The change feed ends with that revocation, ids only.
    const feed = await ok(client, 'svc_changes_list', { after: 0, limit: 100 }, called);
    expect(feed.changes.at(-1)).toMatchObject({
      sequence: uninstalled.commit.sequence,
      operation: 'installations.revoke',
      subjects: [{ type: 'installation', id: installation.id, namespace_id: null }],
    });

    // A webhook, registered, listed and deleted by tools; its secret shown once.
    const hook = await ok(
      client,
      'svc_webhooks_create',
      { url: 'https://hooks.example.com/agent', idempotency_key: key() },
      called,
    );
    expect(hook.secret).toMatch(/^whsec_/);
    const hooks = await ok(client, 'svc_webhooks_list', {}, called);
    expect(hooks.webhooks.map((w: { id: string }) => w.id)).toEqual([hook.webhook.id]);
    const unhooked = await ok(client, 'svc_webhooks_delete', { id: hook.webhook.id, idempotency_key: key() }, called);
    expect(unhooked.webhook.state).toBe('deleted');

    // The ledger's signed head, and a proof that reaches it.
    const head = await ok(client, 'svc_ledger_head', {}, called);
    expect(head.head.sequence).toBe(unhooked.commit.sequence);
    const proof = await ok(client, 'svc_ledger_proof', { id: candidate.revision.id }, called);
    expect(proof).toMatchObject({ subject_id: candidate.revision.id, head });

    // Every operation of the catalog went through its tool (a new operation needs a step above).
    expect(sorted(called)).toEqual(sorted(CATALOG_TOOLS));
  });

  it('answers bad input with the exact invalid_input error object of /v1', async () => {
    const requestId = `mcp-bad-${crypto.randomBytes(4).toString('hex')}`;
    const api = await owner.api(ws);
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'bad-input' })).body.namespace;
    const bad = { namespace_id: ns.id, kind: 'claim', text: '', valid_from: 0 };
    const own = mode === 'http' ? await connect(await owner.token(), ws, requestId) : client;

    const error = await failure(own, 'svc_memories_create', { ...bad, idempotency_key: freshKey() });
    expect(error.code).toBe('invalid_input');
    if (mode === 'http') expect(error).toEqual(errorObject('invalid_input', requestId));
    const rest = await api.post('/v1/memories', bad);
    expect(rest.status).toBe(400);
    expect(withoutRequestId(error)).toEqual(withoutRequestId(rest.body.error));
    // The second text names what was wrong, as /v1's X-Error-Detail does.
    const fact = await call(own, 'svc_memories_create', {
      ...bad,
      text: 'x',
      kind: 'fact',
      idempotency_key: freshKey(),
    });
    expect(fact.isError).toBe(true);
    expect((fact.content[1] as { text?: string } | undefined)?.text).toBe(
      'invalid_input: body.kind: expected one of claim, episode, procedure',
    );

    // Unknown arguments, wrong types and missing keys fail like /v1 does.
    expect((await failure(client, 'svc_namespaces_get', { id: ns.id, extra: 1 })).code).toBe('invalid_input');
    expect((await failure(client, 'svc_memories_get', { id: ns.id, as_of: 'yesterday' })).code).toBe('invalid_input');
    expect((await failure(client, 'svc_namespaces_get', { id: 'no/such' })).code).toBe('invalid_input');
    expect((await failure(client, 'svc_workspaces_list', { workspace_id: ws })).code).toBe('invalid_input');
    expect((await failure(client, 'svc_namespaces_create', { parent_id: null, name: 'x' })).code).toBe(
      'idempotency_required',
    );
    expect((await failure(client, 'svc_namespaces_get', { id: ns.id, workspace_id: 'not-a-ws' })).code).toBe(
      'invalid_input',
    );
  });

  it('an OAuth token with only svc:read is forbidden to create evidence, as on /v1', async () => {
    const subject = `agent-${crypto.randomBytes(4).toString('hex')}`;
    const token = await h.issuer.accessToken(subject, 'svc:read');
    // The agent learns its actor id, then is admitted with observe on a namespace: only the scope is missing.
    const me = await ok(await connect(token, null), 'svc_me_get');
    expect(me).toMatchObject({ caller_kind: 'oauth', scopes: ['svc:read'], workspace_id: null });
    const api = await owner.api(ws);
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'observed' })).body.namespace;
    const put = await api.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: me.actor.id, role: 'member' },
      ],
    });
    expect(put.status).toBe(200);
    const grant = await api.put(`/v1/namespaces/${ns.id}/grants`, {
      grants: [{ target: { kind: 'actor', actor_id: me.actor.id }, capabilities: ['read', 'observe'], inherit: true }],
    });
    expect(grant.status).toBe(200);

    const readOnly = await connect(token, ws);
    expect((await ok(readOnly, 'svc_namespaces_get', { id: ns.id })).namespace.id).toBe(ns.id);
    const args = { namespace_id: ns.id, source_locator: 'chat://x', content_root_sha256: sha256Hex('x'), excerpt: 'x' };
    const error = await failure(readOnly, 'svc_evidence_create', { ...args, idempotency_key: freshKey() });
    expect(error.code).toBe('forbidden');
    const rest = await h.api.as(token, ws).post('/v1/evidence', args);
    expect(rest.status).toBe(403);
    expect(withoutRequestId(error)).toEqual(withoutRequestId(rest.body.error));
  });

  it('a member without a grant gets not_found, as on /v1', async () => {
    const api = await owner.api(ws);
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'private' })).body.namespace;
    const memory = (
      await api.post('/v1/memories', { namespace_id: ns.id, kind: 'claim', text: 'secret', valid_from: 0 })
    ).body.memory;
    const carol = await h.human({ enroll: false });
    const put = await api.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        { actor_id: carol.actorId, role: 'member' },
      ],
    });
    expect(put.status).toBe(200);
    const member = await connect(await carol.token(), ws);

    const read = await failure(member, 'svc_memories_get', { id: memory.id });
    expect(read.code).toBe('not_found');
    const restRead = await (await carol.api(ws)).get(`/v1/memories/${memory.id}`);
    expect(restRead.status).toBe(404);
    expect(withoutRequestId(read)).toEqual(withoutRequestId(restRead.body.error));

    const write = await failure(member, 'svc_memories_create', {
      namespace_id: ns.id,
      kind: 'claim',
      text: 'x',
      valid_from: 0,
      idempotency_key: freshKey(),
    });
    expect(write.code).toBe('not_found');
    // And a workspace the caller is not a member of looks absent.
    const stranger = await h.human({ enroll: false });
    const outside = await connect(await stranger.token(), ws);
    expect((await failure(outside, 'svc_namespaces_list')).code).toBe('not_found');
  });

  it('replays an idempotent write with the identical structured content', async () => {
    const api = await owner.api(ws);
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'replay' })).body.namespace;
    const args = { namespace_id: ns.id, kind: 'claim', text: 'once', valid_from: 0, idempotency_key: freshKey() };
    const first = await call(client, 'svc_memories_create', args);
    const second = await call(client, 'svc_memories_create', args);
    expect(first.isError).toBeFalsy();
    expect(second.structuredContent).toEqual(first.structuredContent);
    expect(second.content).toEqual(first.content);
    const listed = await ok(client, 'svc_memories_list', { namespace_id: ns.id });
    expect(listed.items).toHaveLength(1);
    const changed = await failure(client, 'svc_memories_create', { ...args, text: 'twice' });
    expect(changed.code).toBe('idempotency_conflict');
  });

  it('reads a memory as a resource, at a point in time, and lists memories as resources', async () => {
    const api = await owner.api(ws);
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'resources' })).body.namespace;
    const created = (
      await api.post('/v1/memories', { namespace_id: ns.id, kind: 'procedure', text: 'Boil water.', valid_from: 100 })
    ).body;
    const uri = `memory://${created.memory.id}`;

    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'memory://{workspace_id}/{id}{?as_of,known_at}',
      'memory://{id}{?as_of,known_at}',
    ]);

    const read = await client.readResource({ uri });
    expect(read.contents).toHaveLength(1);
    expect(read.contents[0]?.mimeType).toBe('application/json');
    const body = JSON.parse(String(textOf(read.contents[0])));
    expect(body.view.memory.id).toBe(created.memory.id);
    expect(body.view.revision.text).toBe('Boil water.');
    const rest = await api.get(`/v1/memories/${created.memory.id}`, {
      query: { as_of: 150, known_at: created.commit.recorded_at },
    });
    const pinned = await client.readResource({ uri: `${uri}?as_of=150&known_at=${created.commit.recorded_at}` });
    expect(textOf(pinned.contents[0])).toBe(rest.text);

    const before = await client
      .readResource({ uri: `${uri}?as_of=50` })
      .then(() => null)
      .catch((error: unknown) => error);
    expect(before).toBeInstanceOf(McpError);
    expect((before as McpError).code).toBe(-32002);
    expect(((before as McpError).data as ErrorEnvelope).error.code).toBe('not_found');
    const malformed = await client
      .readResource({ uri: `${uri}?as_of=soon` })
      .then(() => null)
      .catch((error: unknown) => error);
    expect((malformed as McpError).code).toBe(ErrorCode.InvalidParams);

    const uris: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor ? { cursor } : {});
      uris.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
    } while (cursor);
    // Listed in the workspace-naming form, which reads the same memory on any connection.
    expect(uris).toContain(`memory://${ws}/${created.memory.id}`);
  });

  it('answers an unknown tool with an MCP error', async () => {
    const error = await client
      .callTool({ name: 'svc_nothing', arguments: {} })
      .then(() => null)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
  });
});

describe('the /mcp endpoint over HTTP', () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  });
  const post = (headers: Record<string, string>, body: string = initialize) =>
    fetch(new URL('/mcp', h.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });

  it('refuses a missing or invalid token with 401 and the /v1 error body', async () => {
    for (const headers of [{}, { authorization: 'Bearer not.a.token' }] as Record<string, string>[]) {
      const res = await post({ ...headers, 'x-request-id': 'mcp-401' });
      expect(res.status).toBe(401);
      // RFC 6750 §3: a plain challenge without a token, the reason with one.
      expect(res.headers.get('www-authenticate')).toBe(
        headers.authorization ? 'Bearer error="invalid_token", error_description="the token is malformed"' : 'Bearer',
      );
      expect(await res.json()).toEqual({ error: errorObject('unauthenticated', 'mcp-401') });
    }
  });

  it('has no SSE stream or session (405), caps the request size, and serves plain JSON', async () => {
    const token = await (await h.human()).token();
    const get = await fetch(new URL('/mcp', h.url), { headers: { authorization: `Bearer ${token}` } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await jsonOf(get)).error.code).toBe('method_not_allowed');

    const big = await post({ authorization: `Bearer ${token}` }, 'x'.repeat(262145));
    expect(big.status).toBe(413);
    expect((await jsonOf(big)).error.code).toBe('budget_exceeded');

    const garbage = await post({ authorization: `Bearer ${token}` }, '{not json');
    expect(garbage.status).toBe(400);
    expect((await jsonOf(garbage)).error.code).toBe(-32700);

    const res = await post({ authorization: `Bearer ${token}`, 'x-request-id': 'mcp-init' });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('x-request-id')).toBe('mcp-init');
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    const answer = await jsonOf(res);
    expect(answer.result.serverInfo.name).toBe('temporal-memory-service');
    expect(answer.result.capabilities).toMatchObject({ tools: {}, resources: {} });
  });
});

describe('svc mcp (stdio)', () => {
  it('stops with a one-line reason when TMS_TOKEN is refused', async () => {
    if (!h.database) throw new Error('needs Postgres');
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        'npx',
        ['tsx', 'services/cli/src/main.ts', 'mcp'],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: h.database?.url, TMS_TOKEN: 'bogus' },
        },
        (error, stdout, stderrText) =>
          resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr: stderrText }),
      );
    });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('svc: TMS_TOKEN was refused (unauthenticated: the token is malformed)');
  });

  it('wrote nothing but MCP messages to stdout', () => {
    // Any stray stdout line would have surfaced as a client transport (parse) error.
    expect(transportErrors).toEqual([]);
  });
});
