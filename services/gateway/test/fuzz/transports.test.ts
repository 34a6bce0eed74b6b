import { agentTools } from '@tms/agent-tools';
import { ERROR_TABLE, type ErrorCode, errorObject, idSchema, OPERATIONS, type Operation } from '@tms/catalog';
import { sha256Hex } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Harness, startHarness } from '../harness';
import {
  deepNesting,
  type JsonSchema,
  nest,
  type Payload,
  type Pools,
  PROTOTYPE_KEYS,
  payloadFor,
  serialize,
  setOwn,
  validFor,
  wholeBody,
} from './arbitraries';
import { closeAgent, send, WireRequest, type WireResponse } from './wire';

/*
 * Property-based fuzzing of /v1, /graphql and /mcp (issue 11, decisions §7). Every request is
 * generated from the catalog: its operations, their zod input schemas (as JSON Schema), their
 * paths and methods, the GraphQL fields the gateway derives from them (found by introspection)
 * and the agent tools' input schemas. Valid requests are mutated (wrong types, bounds, lone
 * surrogates, U+0000, huge numbers, raw 1e309, deep nesting, duplicate and prototype keys,
 * invalid UTF-8, odd content types, bad ids and cursors) and sent to a real gateway over
 * loopback. Properties, per request: no 5xx; an error is exactly the spec's error object for
 * its code, with its status and `X-Request-Id`; nothing is logged at error level or as
 * `internal`; a refused write leaves the ledger (commits, idempotency records, workspaces) as
 * it was.
 *
 * FUZZ_RUNS multiplies the run (default 1: 2,700 requests, sized for `.ci/run`'s 30 minutes;
 * FUZZ_RUNS=2 is the former default); FUZZ_SEED replays a run.
 */

/** The fuzz run's size and seed are test parameters, read only here. */
const ENV = process.env;
const MULTIPLIER = Math.max(1, Number(ENV.FUZZ_RUNS ?? '1') || 1);
const SEED = Number.isInteger(Number(ENV.FUZZ_SEED)) && ENV.FUZZ_SEED ? Number(ENV.FUZZ_SEED) : 20251111;
/** FUZZ_COLLECT=1: run every case and print each distinct failure once, instead of stopping at the first. */
const COLLECT = ENV.FUZZ_COLLECT === '1';
const RUNS = { rest: 1000 * MULTIPLIER, graphql: 850 * MULTIPLIER, mcp: 850 * MULTIPLIER };

let h: Harness;
let token = '';
let pools: Pools;
const sent = { rest: 0, graphql: 0, mcp: 0 };
let logCursor = 0;

const jsonSchemaOf = (schema: z.ZodType) => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
  }) as JsonSchema & {
    $schema?: string;
  };
  return rest as JsonSchema;
};

/** The operation's params, query and body as one object schema (how GraphQL and MCP take them). */
function mergedSchema(operation: Operation): JsonSchema {
  const parts = [operation.input.params, operation.input.query, operation.input.body].filter(
    (part): part is NonNullable<typeof part> => part !== null,
  );
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const part of parts) {
    const json = jsonSchemaOf(part as z.ZodType);
    Object.assign(properties, json.properties ?? {});
    required.push(...(json.required ?? []));
  }
  return { type: 'object', properties, required, additionalProperties: false } as JsonSchema;
}

// ---- the fixture and the ledger --------------------------------------------------------------

const rowsOf = <T>(result: unknown) => (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];

/** Every row a write adds: a refused write must leave these exactly as they were. */
async function ledgerState(): Promise<string> {
  const rows = rowsOf<Record<string, number>>(
    await h.gateway.ledger.handle.db.execute(sql`select
      (select count(*) from commits)::int as commits,
      (select coalesce(sum(sequence), 0) from workspace_heads)::bigint::text as heads,
      (select count(*) from idempotency_records)::int as idempotency_records,
      (select count(*) from workspaces)::int as workspaces`),
  );
  return JSON.stringify(rows[0]);
}

async function setUp(): Promise<void> {
  // Every operation is fuzzed over /mcp too: all tools, not the memory set of the default.
  h = await startHarness({ driver: 'postgres', env: { RATE_LIMITS: 'off', MCP_TOOLS: 'all' } });
  const owned = await h.workspace();
  token = await owned.owner.token();
  // biome-ignore lint/suspicious/noExplicitAny: fixture answers are read loosely; a wrong one fails the setup.
  const ok = async (res: Promise<{ status: number; body: any; text: string }>) => {
    const answer = await res;
    if (answer.status !== 200) throw new Error(`fixture: ${answer.text}`);
    return answer.body;
  };
  const api = owned.api;
  const root = (await ok(api.post('/v1/namespaces', { parent_id: null, name: 'fuzz' }))).namespace;
  const child = (await ok(api.post('/v1/namespaces', { parent_id: root.id, name: 'child' }))).namespace;
  const excerpt = 'An excerpt for the fuzz run.';
  const evidence = (
    await ok(
      api.post('/v1/evidence', {
        namespace_id: root.id,
        source_locator: 'fuzz://source',
        content_root_sha256: sha256Hex(excerpt),
        excerpt,
      }),
    )
  ).evidence;
  const verification = (
    await ok(
      api.post(`/v1/evidence/${evidence.id}/verifications`, {
        expected_content_root_sha256: sha256Hex(excerpt),
        expected_excerpt_sha256: sha256Hex(excerpt),
        verdict: 'verified',
      }),
    )
  ).verification;
  const created = await ok(
    api.post('/v1/memories', {
      namespace_id: child.id,
      kind: 'claim',
      text: 'The fuzz memory.',
      valid_from: 0,
      evidence_ids: [evidence.id],
    }),
  );
  const installation = (await ok(api.post('/v1/installations', { name: 'fuzz app' }))).installation;
  const credential = (
    await ok(api.post('/v1/credentials', { kind: 'service_key', name: 'fuzz key', capabilities: ['read'] }))
  ).credential;
  // Another workspace's ids: readable to nobody here, so they must answer like absent ones.
  const other = await h.workspace();
  const otherNamespace = (await ok(other.api.post('/v1/namespaces', { parent_id: null, name: 'other' }))).namespace;
  const otherMemory = await ok(
    other.api.post('/v1/memories', { namespace_id: otherNamespace.id, kind: 'claim', text: 'Other.', valid_from: 0 }),
  );
  pools = {
    ids: [
      owned.id,
      owned.owner.actorId,
      root.id,
      child.id,
      evidence.id,
      verification.id,
      created.memory.id,
      created.revision.id,
      installation.id,
      credential.id,
      other.id,
      other.owner.actorId,
      otherNamespace.id,
      otherMemory.memory.id,
    ],
    workspaceIds: [owned.id, other.id],
    sha256: [sha256Hex(excerpt), sha256Hex('')],
  };
  workspaceId = owned.id;
  logCursor = h.logs.length;
}

let workspaceId = '';

// ---- properties common to every transport ------------------------------------------------------

/** Problems with an `{error}` body: exactly the spec's object for its code, status and headers. */
function restErrorProblems(response: WireResponse, request: WireRequest): string[] {
  const problems: string[] = [];
  const requestId = String(response.headers['x-request-id'] ?? '');
  let body: { error?: { code?: string; retry_after_seconds?: number | null } } | null = null;
  try {
    body = JSON.parse(response.body.toString('utf8'));
  } catch {
    return [`an error answer that is not JSON: ${response.body.toString('utf8').slice(0, 200)}`];
  }
  const code = body?.error?.code as ErrorCode | undefined;
  if (!code || !Object.hasOwn(ERROR_TABLE, code)) return [`not the spec's error body: ${JSON.stringify(body)}`];
  const expected = { error: errorObject(code, requestId, body?.error?.retry_after_seconds ?? null) };
  if (JSON.stringify(body) !== JSON.stringify(expected))
    problems.push(`error body ${JSON.stringify(body)} is not exactly ${JSON.stringify(expected)}`);
  if (response.status !== ERROR_TABLE[code].status)
    problems.push(`status ${response.status} for ${code} (spec: ${ERROR_TABLE[code].status})`);
  if (code === 'internal') problems.push('answered internal');
  if (code === 'unauthenticated' && !BEARER_CHALLENGE.test(String(response.headers['www-authenticate'])))
    problems.push(`401 without a Bearer challenge (RFC 6750 §3): ${response.headers['www-authenticate']}`);
  problems.push(...requestIdProblems(requestId, request));
  return problems;
}

/** `Bearer`, or `Bearer error="invalid_token", error_description="<reason>"` when a token was refused. */
const BEARER_CHALLENGE = /^Bearer(?: error="invalid_token", error_description="[\x20\x21\x23-\x5b\x5d-\x7e]+")?$/;

function requestIdProblems(requestId: string, request: WireRequest): string[] {
  if (requestId === '') return ['no X-Request-Id header'];
  const given = request.headers['x-request-id'];
  if (given !== undefined && !request.headOverflows && idSchema.safeParse(given).success && given !== requestId)
    return [`X-Request-Id ${requestId} does not echo the valid ${given}`];
  return [];
}

/** Log lines written since the last check at error level (pino >= 50) or with code internal. */
function logProblems(): string[] {
  const lines = h.logs.slice(logCursor);
  logCursor = h.logs.length;
  const problems: string[] = [];
  for (const line of lines) {
    try {
      const entry = JSON.parse(line) as { level?: number; code?: string; msg?: string; err?: { message?: string } };
      if ((entry.level ?? 0) >= 50 || entry.code === 'internal') problems.push(`logged: ${line.slice(0, 600)}`);
    } catch {
      problems.push(`a log line that is not JSON: ${line.slice(0, 200)}`);
    }
  }
  return problems;
}

/** The slowest requests of the run (printed at the end: where a run's time goes). */
const slowest: { ms: number; request: string }[] = [];
function noteDuration(request: WireRequest, ms: number): void {
  if (slowest.length >= 5 && ms <= (slowest[slowest.length - 1]?.ms ?? 0)) return;
  slowest.push({ ms, request: `${request.describe().slice(0, 400)}` });
  slowest.sort((a, b) => b.ms - a.ms);
  slowest.length = Math.min(slowest.length, 5);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** What every transport must refuse (decisions §7): bytes that are not UTF-8, a duplicate key. */
function mustBeRefused(request: WireRequest): string | null {
  if (request.body !== null) {
    try {
      strictUtf8.decode(request.body);
    } catch {
      return 'a body that is not UTF-8';
    }
  }
  if (/duplicate key "/.test(request.mutation)) return 'a duplicate JSON key';
  return null;
}

/** Send, check the transport's properties, the log and (for a refused write) the ledger. */
async function exchange(request: WireRequest): Promise<void> {
  const before = request.mutates ? await ledgerState() : null;
  const started = performance.now();
  const response = await send(h.url, request);
  noteDuration(request, performance.now() - started);
  sent[request.transport] += 1;
  const problems: string[] = [];
  if (response.status >= 500) problems.push(`answered ${response.status}`);
  const checked = request.check(response);
  problems.push(...checked.problems);
  const mustRefuse = mustBeRefused(request);
  if (mustRefuse !== null && !checked.refused) problems.push(`accepted a request with ${mustRefuse}`);
  if (before !== null && checked.refused) {
    const after = await ledgerState();
    if (after !== before) problems.push(`a refused write changed the ledger: ${before} → ${after}`);
  }
  problems.push(...logProblems());
  if (problems.length > 0) {
    if (COLLECT) {
      collect(request, problems, response);
      return;
    }
    const answer = `${response.status} ${response.body.toString('utf8').slice(0, 600)}`;
    throw new Error(`${problems.join('\n')}\nrequest: ${request.describe()}\nanswer: ${answer}`);
  }
}

const collected = new Map<string, { count: number; request: string; answer: string }>();

function collect(request: WireRequest, problems: string[], response: WireResponse): void {
  const normalize = (text: string) =>
    text
      .replace(/req_[0-9a-f]+|[a-z]+_[0-9a-z]{20,}|"[^"]{40,}"/g, '…')
      .replace(/[0-9]+/g, '#')
      .slice(0, 160);
  const key = `${request.transport} ${problems.map(normalize).join(' | ')}`;
  const seen = collected.get(key);
  if (seen) {
    seen.count += 1;
    if (request.describe().length < seen.request.length) seen.request = request.describe();
    return;
  }
  const answer = `${response.status} ${response.body.toString('utf8').slice(0, 400)}`;
  collected.set(key, { count: 1, request: request.describe(), answer });
}

// ---- shared generators -----------------------------------------------------------------------

/** Percent-encode a string's code points as UTF-8 (a lone surrogate as its 3-byte WTF-8 form). */
function percentEncode(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (/^[A-Za-z0-9._~-]$/.test(ch)) out += ch;
    else if (cp >= 0xd800 && cp <= 0xdfff)
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    else out += [...Buffer.from(ch, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}

const percentBytes = (bytes: Buffer) =>
  [...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** Who calls: the workspace owner almost always; sometimes no, a bad or an expired-looking token. */
const authArb = fc.oneof(
  { weight: 20, arbitrary: fc.constant('good') },
  fc.constantFrom('none', 'Bearer', 'Bearer x.y.z', 'Basic dXNlcjpwdw==', 'Bearer \u00ff'),
);
const workspaceArb = () =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant(workspaceId) },
    fc.constantFrom(null, 'ws_missing', 'not-a-workspace', '', ...pools.workspaceIds),
  );
const requestIdArb = fc.option(
  fc.oneof(fc.stringMatching(/^[a-z0-9]{1,24}$/), fc.constantFrom('bad id', '-x', 'x'.repeat(300))),
  {
    nil: undefined,
  },
);
const idempotencyKeyArb = fc.oneof(
  { weight: 10, arbitrary: fc.uuid() },
  fc.constantFrom(undefined, '', 'bad key', 'x'.repeat(201), '__proto__'),
);

function baseHeaders(auth: string, workspace: string | null, requestId: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (auth === 'good') headers.authorization = `Bearer ${token}`;
  else if (auth !== 'none') headers.authorization = auth.replace(/[^\x20-\x7e]/g, '?');
  if (workspace !== null) headers['x-service-workspace'] = workspace;
  if (requestId !== undefined) headers['x-request-id'] = requestId;
  return headers;
}

const CONTENT_TYPES = [
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=iso-8859-1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  'application/json;;',
  'APPLICATION/JSON',
  'application/*',
  '',
];
const contentTypeArb = (normal: string) =>
  fc.oneof(
    { weight: 10, arbitrary: fc.constant<string | null>(normal) },
    fc.constantFrom<string | null>(null, ...CONTENT_TYPES),
  );

// ---- REST --------------------------------------------------------------------------------------

const BAD_PATH_IDS = [
  '%00',
  '..',
  '%2F',
  '%ZZ',
  '%FF',
  '%ED%A0%80',
  'x'.repeat(201),
  '%C3%A9',
  'a%20b',
  '__proto__',
  'constructor',
  'toString',
  '-x',
  'ws_missing',
];

const BAD_QUERY_PAIRS = [
  ...PROTOTYPE_KEYS.map((key) => `${key}=1`),
  'unknown=1',
  'limit=abc',
  'limit=1e309',
  'limit=-0',
  'limit=9007199254740993',
  'limit=0',
  'limit=101',
  'cursor=%FF',
  'cursor=',
  `cursor=${'x'.repeat(600)}`,
  '%ZZ=1',
  'as_of=NaN',
  'as_of=1e309',
  'known_at=-0',
  'include_evidence=1',
  'kind=CLAIM',
  '=',
  'a=%00',
  'namespace_id=%ED%A0%80',
  'parent_id=%00',
];

function restArb(operation: Operation): fc.Arbitrary<WireRequest> {
  const paramsSchema = jsonSchemaOf(operation.input.params as z.ZodType);
  const querySchema = jsonSchemaOf(operation.input.query as z.ZodType);
  const bodySchema = operation.input.body ? jsonSchemaOf(operation.input.body as z.ZodType) : null;
  const id = fc.oneof(
    {
      weight: 6,
      arbitrary: validFor(paramsSchema.properties?.id ?? { type: 'string' }, 'id', pools).map((v) =>
        percentEncode(String(v)),
      ),
    },
    fc.constantFrom(...BAD_PATH_IDS),
  );
  const query = fc.tuple(
    validFor(querySchema, '', pools) as fc.Arbitrary<Record<string, unknown>>,
    fc.array(fc.constantFrom(...BAD_QUERY_PAIRS), { maxLength: 2 }),
    fc.boolean(),
  );
  const body = bodySchema ? payloadFor(bodySchema, pools) : fc.constant(null);
  const method = fc.oneof(
    { weight: 30, arbitrary: fc.constant(operation.method) },
    fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
  );
  return fc
    .record({
      id,
      query,
      body,
      method,
      auth: authArb,
      workspace: workspaceArb(),
      requestId: requestIdArb,
      idempotencyKey: idempotencyKeyArb,
      contentType: contentTypeArb('application/json'),
      bodyOnGet: fc.boolean(),
    })
    .map((c) => {
      const [values, extra, duplicate] = c.query;
      const pairs = Object.entries(values).map(
        ([key, value]) =>
          `${percentEncode(key)}=${percentEncode(typeof value === 'string' ? value : JSON.stringify(value))}`,
      );
      if (duplicate && pairs[0]) pairs.push(pairs[0]);
      pairs.push(...extra);
      const path = operation.path.replace('{id}', c.id) + (pairs.length > 0 ? `?${pairs.join('&')}` : '');
      const headers = baseHeaders(c.auth, c.workspace, c.requestId);
      if (operation.idempotent && c.idempotencyKey !== undefined) headers['idempotency-key'] = c.idempotencyKey;
      let bytes: Buffer | null = null;
      let mutation = `query ${JSON.stringify(extra)}${duplicate ? ' +duplicate' : ''}`;
      if (c.body) {
        bytes = serialize(c.body);
        mutation += `; body: ${c.body.mutation}`;
      } else if (c.bodyOnGet && c.method !== 'GET') {
        bytes = Buffer.from('{}');
      }
      if (bytes !== null && c.contentType !== null) headers['content-type'] = c.contentType;
      return new WireRequest('rest', operation.name, operation.mutates, c.method, path, headers, bytes, mutation);
    });
}

function checkRest(operation: Operation, request: WireRequest) {
  return (response: WireResponse) => {
    if (response.status >= 400) return { problems: restErrorProblems(response, request), refused: true };
    const problems = requestIdProblems(String(response.headers['x-request-id'] ?? ''), request);
    try {
      const parsed = operation.output.safeParse(JSON.parse(response.body.toString('utf8')));
      if (!parsed.success)
        problems.push(`a ${response.status} answer outside the output schema: ${parsed.error.message.slice(0, 300)}`);
    } catch {
      problems.push('a success answer that is not JSON');
    }
    return { problems, refused: false };
  };
}

// ---- GraphQL -----------------------------------------------------------------------------------

interface GraphqlField {
  kind: 'query' | 'mutation';
  name: string;
  args: { name: string; type: string }[];
}

type TypeRef = { kind: string; name: string | null; ofType: TypeRef | null };
const typeString = (t: TypeRef): string =>
  t.kind === 'NON_NULL'
    ? `${typeString(t.ofType as TypeRef)}!`
    : t.kind === 'LIST'
      ? `[${typeString(t.ofType as TypeRef)}]`
      : (t.name ?? '?');

/** The GraphQL field of each catalog operation, found by the operation name in its description. */
async function graphqlFields(): Promise<Map<string, GraphqlField>> {
  const typeRef = 'kind name ofType { kind name ofType { kind name ofType { kind name } } }';
  const fields = `fields { name description args { name type { ${typeRef} } } }`;
  const res = await fetch(new URL('/graphql', h.url), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      'x-service-workspace': workspaceId,
    },
    body: JSON.stringify({
      query: `{ q: __type(name: "Query") { ${fields} } m: __type(name: "Mutation") { ${fields} } }`,
    }),
  });
  const body = (await res.json()) as {
    data: Record<
      'q' | 'm',
      { fields: { name: string; description: string; args: { name: string; type: TypeRef }[] }[] }
    >;
  };
  const out = new Map<string, GraphqlField>();
  for (const [kind, list] of [
    ['query', body.data.q.fields],
    ['mutation', body.data.m.fields],
  ] as const) {
    for (const field of list) {
      const name = /\(`([a-z][a-z.]*)`[,)]/.exec(field.description ?? '')?.[1];
      if (name)
        out.set(name, {
          kind,
          name: field.name,
          args: field.args.map((a) => ({ name: a.name, type: typeString(a.type) })),
        });
    }
  }
  return out;
}

const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
function camelDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelDeep);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) setOwn(out, camel(key), camelDeep(v));
  return out;
}
/** Connection arguments of hand-written list fields. */
const CONNECTION_ARGS: Record<string, string> = { limit: 'first', cursor: 'after' };

/** The field's variables from the operation's flat input (plus `idempotency_key`). */
function variablesOf(field: GraphqlField, input: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (field.args.some((a) => a.name === 'input')) {
    const { idempotency_key: key, ...rest } = input;
    setOwn(out, 'input', camelDeep(rest));
    if (key !== undefined) setOwn(out, 'idempotencyKey', key);
    return out;
  }
  for (const [key, value] of Object.entries(input)) {
    const name = key === 'idempotency_key' ? 'idempotencyKey' : (CONNECTION_ARGS[key] ?? camel(key));
    if (field.args.some((a) => a.name === name)) setOwn(out, name, value);
  }
  return out;
}

const documentOf = (field: GraphqlField, selection = '__typename') => {
  const declared = field.args.map((a) => `$${a.name}: ${a.type}`).join(', ');
  const passed = field.args.map((a) => `${a.name}: $${a.name}`).join(', ');
  return `${field.kind} Fuzz${declared ? `(${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''} { ${selection} } }`;
};

/** Documents that are not the field's well-formed query. */
function oddDocuments(field: GraphqlField): fc.Arbitrary<string> {
  const first = field.args[0]?.name ?? 'x';
  const call = (args: string) => `${field.kind} { ${field.name}(${args}) { __typename } }`;
  return fc.oneof(
    fc.constantFrom(
      call(`${first}: 1e309`),
      call(`${first}: -0`),
      call(`${first}: 9007199254740993`),
      call(`${first}: "\\uD800"`),
      call(`${first}: "a\\u0000b"`),
      call(`${first}: BAD_ENUM`),
      call(`${first}: {__proto__: 1}`),
      call(`${first}: {a: 1, a: 2}`),
      call(`unknownArgument: 1`),
      `${field.kind} { ${field.name} { __typename } }`,
      `${field.kind} { ${field.name} { noSuchField } }`,
      `{ __proto__ }`,
      `{ constructor }`,
      `subscription { x }`,
      '{',
      '',
      `query Q($v: NoSuchType) { __typename }`,
      `query Q { __typename } query Q { __typename }`,
    ),
    deepNesting().map((nested) => call(`${first}: ${nested.replace(/\{"a":/g, '{a:').slice(0, 200_000)}`)),
    fc.string({ unit: 'binary', maxLength: 60 }),
  );
}

function graphqlArb(operation: Operation, field: GraphqlField): fc.Arbitrary<WireRequest> {
  const schema = mergedSchema(operation);
  if (operation.idempotent) {
    schema.properties = { ...schema.properties, idempotency_key: jsonSchemaOf(idSchema) };
    schema.required = [...(schema.required ?? []), 'idempotency_key'];
  }
  // The valid input (snake case, as the catalog has it) becomes the field's variables before mutating.
  const variables = payloadFor(schema, pools, false, (value) => variablesOf(field, value));
  const shape = fc.oneof(
    { weight: 12, arbitrary: fc.constant('post' as const) },
    { weight: 2, arbitrary: fc.constant('get' as const) },
    { weight: 2, arbitrary: fc.constant('document' as const) },
    { weight: 2, arbitrary: fc.constant('whole' as const) },
  );
  return fc
    .record({
      shape,
      variables,
      document: oddDocuments(field),
      whole: wholeBody(),
      auth: authArb,
      workspace: workspaceArb(),
      requestId: requestIdArb,
      contentType: contentTypeArb('application/json'),
      accept: fc.constantFrom('application/graphql-response+json', 'application/json', '*/*', undefined),
      variablesText: fc.constantFrom('%7Bbad', '%FF', '%7B%22a%22%3A1%2C%22a%22%3A2%7D', '%5B'.repeat(4000)),
    })
    .map((c) => {
      const headers = baseHeaders(c.auth, c.workspace, c.requestId);
      if (c.accept !== undefined) headers.accept = c.accept;
      const query = documentOf(field);
      if (c.shape === 'get') {
        const variablesBytes = serialize(c.variables);
        const badVariables =
          c.variables.mutation === 'none' && field.args.length > 0 ? c.variablesText : percentBytes(variablesBytes);
        const path = `/graphql?query=${percentEncode(query)}&variables=${badVariables}`;
        return new WireRequest(
          'graphql',
          operation.name,
          operation.mutates,
          'GET',
          path,
          headers,
          null,
          `GET; variables: ${c.variables.mutation}`,
        );
      }
      let payload: Payload;
      let mutation: string;
      if (c.shape === 'document') {
        payload = { value: { query: c.document }, raws: [], mutation: '' };
        mutation = 'odd document';
      } else if (c.shape === 'whole') {
        payload = c.whole;
        mutation = `whole body: ${c.whole.mutation}`;
      } else {
        payload = nest(c.variables, (value) => ({ query, variables: value }));
        mutation = `variables: ${c.variables.mutation}`;
      }
      if (c.contentType !== null) headers['content-type'] = c.contentType;
      return new WireRequest(
        'graphql',
        operation.name,
        operation.mutates,
        'POST',
        '/graphql',
        headers,
        serialize(payload),
        mutation,
      );
    });
}

function checkGraphql(request: WireRequest) {
  return (response: WireResponse) => {
    const requestId = String(response.headers['x-request-id'] ?? '');
    let body: { error?: unknown; errors?: { extensions?: Record<string, unknown> }[]; data?: unknown };
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      return { problems: [`an answer that is not JSON: ${response.status}`], refused: true };
    }
    if (body && typeof body === 'object' && 'error' in body)
      return { problems: restErrorProblems(response, request), refused: true };
    const problems = requestIdProblems(requestId, request);
    const errors = body.errors ?? [];
    for (const error of errors) {
      const { http: _http, ...extensions } = error.extensions ?? {};
      const code = extensions.code as ErrorCode | undefined;
      if (!code || !Object.hasOwn(ERROR_TABLE, code)) {
        problems.push(`a GraphQL error without a spec code: ${JSON.stringify(error)}`);
        continue;
      }
      const expected = errorObject(code, requestId, (extensions.retry_after_seconds as number | null) ?? null);
      if (JSON.stringify(extensions) !== JSON.stringify(expected))
        problems.push(`extensions ${JSON.stringify(extensions)} are not exactly ${JSON.stringify(expected)}`);
      if (code === 'internal') problems.push('answered internal');
    }
    if (errors.length === 0 && response.status >= 400) problems.push(`status ${response.status} without errors`);
    return { problems, refused: errors.length > 0 || response.status >= 400 };
  };
}

// ---- MCP ---------------------------------------------------------------------------------------

const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

/** JSON-RPC envelopes that are not a well-formed tools/call. */
const oddEnvelopes = (tool: string, args: unknown) =>
  fc.constantFrom<unknown>(
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool } },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: [] } },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: 'x' } },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: null } },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: '__proto__', arguments: args } },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'constructor', arguments: args } },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_nope', arguments: args } },
    { jsonrpc: '2.0', id: 1, method: 'tools/call' },
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'memory://%FF' } },
    { jsonrpc: '2.0', id: 1, method: 'resources/list', params: { cursor: 'bad' } },
    { jsonrpc: '2.0', id: 1, method: 'nope' },
    { jsonrpc: '1.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } },
    { jsonrpc: '2.0', id: { x: 1 }, method: 'tools/call', params: { name: tool, arguments: args } },
    { jsonrpc: '2.0', id: null, method: 'tools/call', params: { name: tool, arguments: args } },
    { jsonrpc: '2.0', method: 'tools/call', params: { name: tool, arguments: args } },
    [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } }],
    [],
  );

function mcpArb(operation: Operation): fc.Arbitrary<WireRequest> {
  const tool = agentTools().byName.get(operation.tool);
  if (!tool) throw new Error(`no agent tool for ${operation.name}`);
  const args = payloadFor(tool.definition.inputSchema as JsonSchema, pools, false);
  return fc
    .record({
      shape: fc.oneof(
        { weight: 14, arbitrary: fc.constant('call' as const) },
        { weight: 2, arbitrary: fc.constant('envelope' as const) },
        { weight: 2, arbitrary: fc.constant('whole' as const) },
      ),
      id: fc.oneof(fc.nat(), fc.string({ maxLength: 8 })),
      args,
      whole: wholeBody(),
      auth: authArb,
      workspace: workspaceArb(),
      requestId: requestIdArb,
      contentType: contentTypeArb('application/json'),
      accept: fc.oneof(
        { weight: 10, arbitrary: fc.constant(MCP_HEADERS.accept) },
        fc.constantFrom('application/json', 'text/event-stream', '*/*'),
      ),
    })
    .chain((c) => oddEnvelopes(operation.tool, c.args.value).map((envelope) => ({ ...c, envelope })))
    .map((c) => {
      const headers = baseHeaders(c.auth, c.workspace, c.requestId);
      headers.accept = c.accept;
      if (c.contentType !== null) headers['content-type'] = c.contentType;
      let payload: Payload;
      let mutation: string;
      if (c.shape === 'whole') {
        payload = c.whole;
        mutation = `whole body: ${c.whole.mutation}`;
      } else if (c.shape === 'envelope') {
        payload = { ...c.args, value: c.envelope };
        // The arguments may not be in this envelope: their mutation is only a note here.
        mutation = `odd envelope; arguments (if sent): ${c.args.mutation.replace('duplicate key', 'duplicated key')}`;
      } else {
        payload = nest(c.args, (value) => ({
          jsonrpc: '2.0',
          id: c.id,
          method: 'tools/call',
          params: { name: operation.tool, arguments: value },
        }));
        mutation = `arguments: ${c.args.mutation}`;
      }
      return new WireRequest(
        'mcp',
        operation.name,
        operation.mutates,
        'POST',
        '/mcp',
        headers,
        serialize(payload),
        mutation,
      );
    });
}

type JsonRpcAnswer = {
  result?: { isError?: boolean; structuredContent?: unknown; content?: { type: string; text?: string }[] };
  error?: { code?: number; message?: string; data?: unknown };
};

function checkMcp(request: WireRequest) {
  return (response: WireResponse) => {
    const requestId = String(response.headers['x-request-id'] ?? '');
    if (response.body.length === 0) {
      return { problems: response.status === 202 ? [] : [`an empty ${response.status} answer`], refused: true };
    }
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      return { problems: [`an answer that is not JSON: ${response.status}`], refused: true };
    }
    if (
      body &&
      typeof body === 'object' &&
      'error' in body &&
      typeof (body as { error: { code?: unknown } }).error?.code === 'string'
    )
      return { problems: restErrorProblems(response, request), refused: true };
    const problems: string[] = [];
    let refused = true;
    for (const answer of (Array.isArray(body) ? body : [body]) as JsonRpcAnswer[]) {
      if (answer.error) {
        if (answer.error.code === -32603) problems.push(`a JSON-RPC internal error: ${JSON.stringify(answer.error)}`);
        const object = (answer.error.data as { error?: { code?: string } } | undefined)?.error;
        if (object?.code === 'internal') problems.push('a JSON-RPC error carrying internal');
        continue;
      }
      const result = answer.result;
      if (!result) {
        problems.push(`neither result nor error: ${JSON.stringify(answer).slice(0, 200)}`);
        continue;
      }
      if (!result.isError) {
        refused = false;
        continue;
      }
      const envelope = result.structuredContent as { error?: { code?: string; retry_after_seconds?: number | null } };
      const code = envelope?.error?.code as ErrorCode | undefined;
      if (!code || !Object.hasOwn(ERROR_TABLE, code)) {
        problems.push(`a tool error without the spec's error object: ${JSON.stringify(result)}`);
        continue;
      }
      const expected = { error: errorObject(code, requestId, envelope.error?.retry_after_seconds ?? null) };
      if (JSON.stringify(envelope) !== JSON.stringify(expected))
        problems.push(`tool error ${JSON.stringify(envelope)} is not exactly ${JSON.stringify(expected)}`);
      if (code === 'internal') problems.push('a tool error internal');
    }
    problems.push(...requestIdProblems(requestId, request));
    return { problems, refused };
  };
}

// ---- the runs ----------------------------------------------------------------------------------

beforeAll(setUp, 120_000);
afterAll(async () => {
  closeAgent();
  for (const [key, failure] of collected)
    console.log(`FAILURE ×${failure.count}: ${key}\n${failure.request}\n  answer: ${failure.answer}\n`);
  for (const { ms, request } of slowest) console.log(`slow: ${Math.round(ms)} ms ${request}`);
  console.log(
    `fuzz: seed ${SEED}, requests sent ${JSON.stringify(sent)} (FUZZ_RUNS=${MULTIPLIER}, FUZZ_SEED to replay)`,
  );
  await h?.close();
});

function run(name: keyof typeof RUNS, arbitrary: fc.Arbitrary<WireRequest>) {
  const started = performance.now();
  console.log(`fuzz ${name}: seed ${SEED}, ${RUNS[name]} runs`);
  return fc
    .assert(
      fc.asyncProperty(arbitrary, (request) => exchange(request)),
      { seed: SEED, numRuns: RUNS[name], endOnFailure: ENV.FUZZ_SHRINK === '0' },
    )
    .finally(() =>
      console.log(`fuzz ${name}: ${sent[name]} requests in ${Math.round(performance.now() - started)} ms`),
    );
}

describe('fuzzing the three transports from the catalog', () => {
  it('/v1: no 5xx, the exact error body, nothing logged as an error, refused writes change nothing', async () => {
    const arbitrary = fc.oneof(
      ...OPERATIONS.map((operation) =>
        restArb(operation).map((request) => request.checkedBy(checkRest(operation, request))),
      ),
      // Unknown paths are not_found before authentication.
      fc
        .constantFrom('/v1/nope', '/v1/memories/x/y/z', '/v1/%ZZ', '/v1/__proto__', '/v1/constructor', '/', '/v1')
        .map((path) => {
          const request = new WireRequest('rest', 'unknown path', false, 'GET', path, {}, null, 'unknown path');
          return request.checkedBy((r) => ({
            problems: r.status >= 400 ? restErrorProblems(r, request) : [],
            refused: true,
          }));
        }),
    );
    await run('rest', arbitrary);
    expect(sent.rest).toBeGreaterThanOrEqual(RUNS.rest);
  });

  it('/graphql: no 5xx, the spec error object in errors[].extensions, refused writes change nothing', async () => {
    const fields = await graphqlFields();
    const covered = OPERATIONS.filter((operation) => fields.has(operation.name));
    // Every catalog operation has its GraphQL field (found by its name in the field's description).
    expect(covered.map((o) => o.name)).toEqual(OPERATIONS.map((o) => o.name));
    const arbitrary = fc.oneof(
      ...covered.map((operation) =>
        graphqlArb(operation, fields.get(operation.name) as GraphqlField).map((request) =>
          request.checkedBy(checkGraphql(request)),
        ),
      ),
    );
    await run('graphql', arbitrary);
    expect(sent.graphql).toBeGreaterThanOrEqual(RUNS.graphql);
  });

  it('/mcp: no 5xx, a tool error or JSON-RPC error never internal, refused writes change nothing', async () => {
    const arbitrary = fc.oneof(
      ...OPERATIONS.map((operation) => mcpArb(operation).map((request) => request.checkedBy(checkMcp(request)))),
    );
    await run('mcp', arbitrary);
    expect(sent.mcp).toBeGreaterThanOrEqual(RUNS.mcp);
  });
});
