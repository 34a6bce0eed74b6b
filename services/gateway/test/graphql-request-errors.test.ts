import { errorObject } from '@tms/catalog';
import { MAX_JSON_DEPTH } from '@tms/domain';
import { freshKey } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GraphqlResult, gql } from './graphql-client';
import { DRIVERS, type Harness, startHarness } from './harness';

/*
 * /graphql reads requests with the same strict decoder as /v1 and /mcp (decisions §7; issue 11,
 * defects 3, 4 and 6): bytes that are not UTF-8, a charset other than utf-8, a duplicate key
 * (body or variables, POST or GET), an escaped lone surrogate or nesting past the bound are
 * `invalid_input`, and so is every request error GraphQL itself finds in the variables or the
 * document. None is `internal`, none logs at error level, none writes.
 */

const CREATE = gql(`mutation($input: CreateMemoryInput!, $key: String!) {
  createMemory(input: $input, idempotencyKey: $key) { revision { text } }
}`);

/** Log lines at pino's error level or above. */
const errorLogs = (h: Harness) => h.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);

describe.each(DRIVERS)('GraphQL request errors (%s)', (driver) => {
  let h: Harness;
  let ws: string;
  let token: string;
  let namespaceId: string;
  let sequence: () => Promise<number>;

  beforeAll(async () => {
    h = await startHarness({ driver });
    const workspace = await h.workspace();
    ws = workspace.id;
    token = await workspace.owner.token();
    namespaceId = (await workspace.api.post('/v1/namespaces', { parent_id: null, name: 'gq' })).body.namespace.id;
    sequence = async () => {
      const res = await workspace.api.patch(`/v1/namespaces/${namespaceId}`, { name: 'gq' });
      expect(res.status, res.text).toBe(200);
      return res.body.commit.sequence;
    };
  });
  afterAll(() => h?.close());

  const headers = (requestId: string, contentType = 'application/json'): Record<string, string> => ({
    authorization: `Bearer ${token}`,
    'x-service-workspace': ws,
    'x-request-id': requestId,
    'content-type': contentType,
    'x-graphql-yoga-csrf': '1',
    accept: 'application/graphql-response+json',
  });

  async function answer(res: Response): Promise<GraphqlResult> {
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: JSON.parse(text) };
  }

  const post = async (body: string | Uint8Array, requestId: string, contentType?: string) =>
    answer(
      await fetch(`${h.url}/graphql`, {
        method: 'POST',
        headers: headers(requestId, contentType),
        body: body as RequestInit['body'],
      }),
    );

  const get = async (search: string, requestId: string) =>
    answer(await fetch(`${h.url}/graphql?${search}`, { headers: headers(requestId) }));

  /** A refused request: 400, no data, exactly one error whose extensions are the spec's error object. */
  function expectInvalidInput(result: GraphqlResult, requestId: string, label: string): void {
    expect(result.status, `${label}: ${result.text.slice(0, 400)}`).toBe(400);
    expect(result.body.data ?? undefined, label).toBeUndefined();
    expect(result.body.errors, label).toHaveLength(1);
    expect(result.body.errors?.[0]?.extensions, `${label}: ${result.text.slice(0, 400)}`).toEqual(
      errorObject('invalid_input', requestId),
    );
    expect(result.headers.get('x-request-id')).toBe(requestId);
  }

  const createBody = (input: string, key = freshKey()) =>
    `{"query":${JSON.stringify(CREATE)},"variables":{"input":${input},"key":"${key}"}}`;
  const input = (text: string, extra = '') =>
    `{"namespaceId":"${namespaceId}","kind":"claim","text":${text},"validFrom":0${extra}}`;

  it('a well-formed create is executed (the control of this file)', async () => {
    const result = await post(createBody(input('"fine"')), 'control');
    expect(result.status, result.text).toBe(200);
    expect(result.body.data?.createMemory.revision.text).toBe('fine');
  });

  it('answers invalid_input, never internal, for bad variables and documents, and logs no error', async () => {
    const before = await sequence();
    const deepList = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`;
    const cases: [string, string | Uint8Array][] = [
      ['variable of the wrong type', createBody(input('"x"').replace('"validFrom":0', '"validFrom":"zero"'))],
      ['bad enum', createBody(input('"x"').replace('"kind":"claim"', '"kind":"fact"'))],
      ['unknown input field', createBody(input('"x"', ',"color":"blue"'))],
      ['missing input field', createBody(`{"namespaceId":"${namespaceId}","kind":"claim","validFrom":0}`)],
      ['string for a list', createBody(input('"x"', ',"evidenceIds":{"a":1}'))],
      ['1e309 in variables', createBody(input('"x"').replace('"validFrom":0', '"validFrom":1e309'))],
      ['variables nested 10000 deep', createBody(input(deepList))],
      [
        `variables nested ${MAX_JSON_DEPTH + 1} deep`,
        createBody(input(`${'['.repeat(MAX_JSON_DEPTH)}"x"${']'.repeat(MAX_JSON_DEPTH)}`)),
      ],
      [
        'list literal nested 10000 deep in the document',
        JSON.stringify({
          query: `{ memories(namespaceId: "${namespaceId}", kind: ${deepList}) { edges { cursor } } }`,
        }),
      ],
      ['variables not an object', JSON.stringify({ query: CREATE, variables: [1] })],
      ['no query', JSON.stringify({ variables: {} })],
      ['query not a string', JSON.stringify({ query: 1 })],
      ['a syntax error', JSON.stringify({ query: '{ me { ' })],
    ];
    for (const [label, body] of cases) expectInvalidInput(await post(body, 'bad-1', undefined), 'bad-1', label);
    // 1e309 as a literal is a Float GraphQL lets through as Infinity: the domain refuses it, as on /v1.
    const literal = await post(
      JSON.stringify({
        query: `mutation { createMemory(input: {namespaceId: "${namespaceId}", kind: claim, text: "x", validFrom: 1e309}, idempotencyKey: "${freshKey()}") { revision { text } } }`,
      }),
      'bad-2',
    );
    expect(literal.body.errors?.[0]?.extensions, literal.text).toEqual(errorObject('invalid_input', 'bad-2'));
    expect(literal.body.data).toEqual({ createMemory: null });
    expect(await sequence()).toBe(before + 1);
    expect(errorLogs(h)).toEqual([]);
  });

  it('refuses bytes that are not UTF-8 instead of storing U+FFFD, and any charset but utf-8', async () => {
    const before = await sequence();
    const [head, tail] = createBody(input('"@@"')).split('@@') as [string, string];
    const bad = Buffer.concat([Buffer.from(head), Buffer.from([0xff, 0xed, 0xa0, 0x80]), Buffer.from(tail)]);
    const cases: [string, GraphqlResult][] = [
      ['invalid UTF-8 in a variable', await post(bad, 'utf8-1')],
      ['encoded surrogate', await post(Buffer.from(createBody(input('"\\ud800"'))), 'utf8-1')],
      ['charset=latin1', await post(createBody(input('"latin"')), 'utf8-1', 'application/json; charset=latin1')],
      ['application/graphql', await post('{ me { callerKind } }', 'utf8-1', 'application/graphql')],
      ['text/plain', await post(createBody(input('"plain"')), 'utf8-1', 'text/plain')],
    ];
    for (const [label, result] of cases) expectInvalidInput(result, 'utf8-1', label);
    expect(await sequence()).toBe(before + 1);
    expect(await h.findInDatabase('\uFFFD')).toEqual([]);
  });

  it('refuses a duplicate key in the body and in the variables', async () => {
    const before = await sequence();
    const cases: [string, string][] = [
      ['duplicate input field, both valid', createBody(input('"a"', ',"text":"b"'))],
      [
        'duplicate variable',
        `{"query":${JSON.stringify(CREATE)},"variables":{"input":${input('"a"')},"key":"${freshKey()}","key":"${freshKey()}"}}`,
      ],
      ['duplicate query', `{"query":${JSON.stringify(CREATE)},"query":"{ me { callerKind } }"}`],
    ];
    for (const [label, body] of cases) expectInvalidInput(await post(body, 'dup-1'), 'dup-1', label);
    expect(await sequence()).toBe(before + 1);
  });

  it('reads GET query strings by the same rules', async () => {
    const query = encodeURIComponent(
      'query($k: MemoryKind) { memories(namespaceId: "x", kind: $k) { edges { cursor } } }',
    );
    const ok = await get(`query=${encodeURIComponent('{ me { callerKind } }')}`, 'get-ok');
    expect(ok.status, ok.text).toBe(200);
    const cases: [string, string][] = [
      ['variables=%7Bbad', `query=${query}&variables=%7Bbad`],
      ['duplicate key in variables', `query=${query}&variables=${encodeURIComponent('{"k":"claim","k":"episode"}')}`],
      ['bad enum in variables', `query=${query}&variables=${encodeURIComponent('{"k":"fact"}')}`],
      ['percent-encoded invalid UTF-8', `query=${encodeURIComponent('{ me { callerKind } }')}%FF`],
      ['percent-encoded surrogate', `query=${query}&variables=${encodeURIComponent('{"k":"')}%ED%A0%80%22%7D`],
      ['escaped lone surrogate in variables', `query=${query}&variables=${encodeURIComponent('{"k":"\\ud800"}')}`],
      ['malformed percent-encoding', `query=%E0%A4%A`],
      ['repeated query', `query=${query}&query=${query}`],
      ['deep variables', `query=${query}&variables=${'%5B'.repeat(1000)}${'%5D'.repeat(1000)}`],
      ['deep document', `query=${'%7B'.repeat(1000)}${'%7D'.repeat(1000)}`],
    ];
    for (const [label, search] of cases) expectInvalidInput(await get(search, 'get-1'), 'get-1', label);
    expect(errorLogs(h)).toEqual([]);
  });
});
