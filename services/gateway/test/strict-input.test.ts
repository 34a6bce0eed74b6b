import { OPERATIONS } from '@tms/catalog';
import { MAX_JSON_DEPTH } from '@tms/domain';
import { type ApiClient, type CallResult, freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';
import { expectError } from './shapes';

/*
 * One strict reading of client input on /v1 and /mcp (decisions §7; issue 11, defects 2 and 6):
 * query parameter names are looked up among the operation's own fields only, JSON nested past
 * the bound or holding a duplicate key is refused, bytes that are not UTF-8 are refused, and
 * none of it answers 5xx, logs an error or writes anything. GraphQL: graphql-request-errors.test.ts.
 */

/** Names every object inherits: none of them is a query parameter of any operation. */
const INHERITED_NAMES = [
  'toString',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  '__defineGetter__',
];

/** Log lines at pino's error level or above. */
const errorLogs = (h: Harness) => h.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);

describe.each(DRIVERS)('strict input (%s)', (driver) => {
  let h: Harness;
  let ws: string;
  let admin: ApiClient;
  let token: string;
  let ns: { id: string };

  beforeAll(async () => {
    h = await startHarness({ driver });
    const created = await h.workspace();
    ws = created.id;
    admin = created.api;
    token = admin.token as string;
    ns = (await admin.post('/v1/namespaces', { parent_id: null, name: 'strict' })).body.namespace;
  });
  afterAll(() => h?.close());

  /** The next commit sequence of the workspace: refused requests must not move it. */
  async function nextSequence(): Promise<number> {
    const res = await admin.patch(`/v1/namespaces/${ns.id}`, { name: 'strict' });
    expect(res.status, res.text).toBe(200);
    return res.body.commit.sequence;
  }

  const postMemory = (raw: string | Uint8Array, contentType = 'application/json') =>
    admin.call('POST', '/v1/memories', { raw, contentType });

  it('refuses an inherited member name as a query parameter on every operation: 400, never 500', async () => {
    const before = await nextSequence();
    for (const operation of OPERATIONS) {
      const path = operation.path.replace(/\{[a-z_]+\}/g, 'abc123');
      for (const name of INHERITED_NAMES) {
        const body = operation.method === 'GET' ? {} : { raw: '{}' };
        const res = await admin.call(operation.method, path, { query: `${name}=1`, ...body });
        expect(res.status, `${operation.name} ?${name}=1: ${res.text}`).toBe(400);
        expectError(res, 'invalid_input');
      }
    }
    // The same names in a body are unknown fields, refused like any other.
    for (const name of INHERITED_NAMES) {
      const body = `{"namespace_id":"${ns.id}","kind":"claim","text":"x","valid_from":0,"${name}":{}}`;
      expectError(await postMemory(body), 'invalid_input');
    }
    expect(await nextSequence()).toBe(before + 1);
    expect(errorLogs(h)).toEqual([]);
  });

  it(`refuses JSON nested deeper than ${MAX_JSON_DEPTH} levels, whole body or inside a field, up to the size cap`, async () => {
    const before = await nextSequence();
    const depth = 100_000; // 200000 bytes, under the 262144-byte cap
    const cases: [string, CallResult][] = [
      ['deep array body', await postMemory(`${'['.repeat(depth)}${']'.repeat(depth)}`)],
      ['deep object body', await postMemory(`${'{"a":'.repeat(depth / 5)}1${'}'.repeat(depth / 5)}`)],
      [
        'deep field',
        await postMemory(
          `{"namespace_id":"${ns.id}","kind":"claim","text":${'['.repeat(depth)}${']'.repeat(depth)},"valid_from":0}`,
        ),
      ],
      [
        'just past the bound',
        await postMemory(
          `{"namespace_id":"${ns.id}","kind":"claim","text":"x","valid_from":0,"extra":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`,
        ),
      ],
    ];
    for (const [label, res] of cases) {
      expect(res.status, `${label}: ${res.text.slice(0, 300)}`).toBe(400);
      expectError(res, 'invalid_input');
    }
    expect(await nextSequence()).toBe(before + 1);
    expect(errorLogs(h)).toEqual([]);
  });

  it('refuses a duplicate key at any depth in a /v1 body and writes nothing', async () => {
    const before = await nextSequence();
    const cases: [string, CallResult][] = [
      [
        'top level, both values valid',
        await postMemory(`{"namespace_id":"${ns.id}","kind":"claim","kind":"episode","text":"x","valid_from":0}`),
      ],
      [
        'top level, spelled with an escape',
        await postMemory(`{"namespace_id":"${ns.id}","kind":"claim","text":"a","t\\u0065xt":"b","valid_from":0}`),
      ],
      [
        'nested in a grant',
        await admin.call('PUT', `/v1/namespaces/${ns.id}/grants`, {
          raw: `{"grants":[{"target":{"kind":"actor","actor_id":"x","actor_id":"y"},"capabilities":["read"],"inherit":false}]}`,
        }),
      ],
      ['namespace rename', await admin.call('PATCH', `/v1/namespaces/${ns.id}`, { raw: '{"name":"a","name":"b"}' })],
    ];
    for (const [label, res] of cases) {
      expect(res.status, `${label}: ${res.text}`).toBe(400);
      expectError(res, 'invalid_input');
    }
    expect(await nextSequence()).toBe(before + 1);
  });

  describe('over /mcp', () => {
    const rpc = (body: string | Uint8Array, contentType = 'application/json') =>
      fetch(new URL('/mcp', h.url), {
        method: 'POST',
        headers: {
          'content-type': contentType,
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
          'x-service-workspace': ws,
        },
        body: body as RequestInit['body'],
      });
    const toolCall = (args: string, id = 1) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"svc_memories_create","arguments":${args}}}`;
    const createArgs = (text: string, extra = '') =>
      `{"namespace_id":"${ns.id}","kind":"claim","text":${text},"valid_from":0,"idempotency_key":"${freshKey()}"${extra}}`;

    async function expectParseError(res: Response, label: string) {
      const text = await res.text();
      expect(res.status, `${label}: ${text}`).toBe(400);
      const body = JSON.parse(text);
      expect(body.jsonrpc, label).toBe('2.0');
      expect(body.id, label).toBeNull();
      expect(body.error.code, label).toBe(-32700);
      expect(body.error.message, label).toMatch(/^Parse error: body: /);
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }

    it('applies the same rules: duplicate keys, bad UTF-8, charset, depth are a JSON-RPC parse error', async () => {
      const before = await nextSequence();
      // A well-formed call is executed (the test's own control).
      const good = await rpc(toolCall(createArgs('"accepted"')));
      expect(good.status).toBe(200);
      expect((await good.json()).result.structuredContent.revision.text).toBe('accepted');

      const cases: [string, Response][] = [
        ['duplicate key in tool arguments', await rpc(toolCall(createArgs('"a"', ',"text":"b"')))],
        [
          'duplicate key in the message',
          await rpc(
            `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"svc_memories_create","arguments":${createArgs('"x"')}}}`,
          ),
        ],
        [
          'invalid UTF-8 in tool arguments',
          await rpc(
            Buffer.concat(
              toolCall(createArgs('"@@"'))
                .split('@@')
                .flatMap((part, i) =>
                  i === 0 ? [Buffer.from(part)] : [Buffer.from([0xff, 0xed, 0xa0, 0x80]), Buffer.from(part)],
                ),
            ),
          ),
        ],
        ['escaped lone surrogate', await rpc(toolCall(createArgs('"\\ud800"')))],
        ['charset=latin1', await rpc(toolCall(createArgs('"latin"')), 'application/json; charset=latin1')],
        ['nested 100000 deep', await rpc(toolCall(createArgs(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)))],
      ];
      for (const [label, res] of cases) await expectParseError(res, label);
      // Only the control wrote.
      expect(await nextSequence()).toBe(before + 2);
      expect(errorLogs(h)).toEqual([]);
    });
  });
});
