import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';

/*
 * A JSON-RPC request whose params the MCP schemas refuse (tools/call without params or with
 * arguments that are not an object, resources/read with a uri that is not a string) is the
 * client's mistake: -32602 Invalid params, never -32603 Internal error (found by the fuzz suite).
 */

let h: Harness;
let headers: Record<string, string>;

beforeAll(async () => {
  h = await startHarness({ driver: 'pglite' });
  const { id, owner } = await h.workspace();
  headers = {
    authorization: `Bearer ${await owner.token()}`,
    'x-service-workspace': id,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
});
afterAll(async () => {
  await h?.close();
});

const MALFORMED: [string, unknown][] = [
  ['tools/call without params', { method: 'tools/call' }],
  ['tools/call with numeric arguments', { method: 'tools/call', params: { name: 'svc_me_get', arguments: 1 } }],
  ['tools/call with list arguments', { method: 'tools/call', params: { name: 'svc_me_get', arguments: [] } }],
  ['tools/call with a numeric name', { method: 'tools/call', params: { name: 7 } }],
  ['resources/read with a numeric uri', { method: 'resources/read', params: { uri: 5 } }],
  ['resources/list with a numeric cursor', { method: 'resources/list', params: { cursor: 5 } }],
];

describe('/mcp: malformed params', () => {
  it.each(MALFORMED)('%s answers -32602 Invalid params', async (_name, request) => {
    const res = await fetch(new URL('/mcp', h.url), {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...(request as object) }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { error?: { code: number } };
    expect(body.error?.code).toBe(ErrorCode.InvalidParams);
  });

  it('a well-formed call still works', async () => {
    const res = await fetch(new URL('/mcp', h.url), {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'svc_me_get', arguments: {} },
      }),
    });
    const body = (await res.json()) as { result?: { isError?: boolean; structuredContent?: { actor?: unknown } } };
    expect(body.result?.isError).toBeUndefined();
    expect(body.result?.structuredContent?.actor).toBeDefined();
  });
});
