import { OPERATIONS } from '@tms/catalog';
import { Ledger } from '@tms/ledger';
import { ADMIN_URL, type ApiClient, type CallResult, freshKey, sha256Hex } from '@tms/testkit';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';
import { expectError, expectPrivateJson, expectShape, sendRaw } from './shapes';

/*
 * Every error code the /v1 API can reach today, with its exact body and headers.
 *
 * Elsewhere: `rate_limited` needs a small RATE_LIMITS, so rate-limits.test.ts covers it.
 * Not reachable, so not tested: `internal` (only an unexpected defect yields it).
 */

/** The fields of a plain claim valid from 0. */
const claim = (text: string) => ({ kind: 'claim', text, valid_from: 0 });

/** The error body without its per-request id: what must not differ between absent and unauthorized. */
const anonymous = (res: CallResult) => ({ ...res.body.error, request_id: '' });
const headerNames = (res: CallResult) =>
  [...res.headers.keys()].filter((name) => !['date', 'x-request-id', 'content-length'].includes(name)).sort();

describe.each(DRIVERS)('error answers (%s)', (driver) => {
  let h: Harness;
  let ws: string;
  let admin: ApiClient;
  let ns: { id: string };
  let evidence: { id: string; content_root_sha256: string; excerpt_sha256: string };
  let memory: { id: string };

  beforeAll(async () => {
    h = await startHarness({ driver });
    const created = await h.workspace();
    ws = created.id;
    admin = created.api;
    ns = (await admin.post('/v1/namespaces', { parent_id: null, name: 'errors' })).body.namespace;
    const excerpt = 'The sky was blue on Tuesday.';
    evidence = (
      await admin.post('/v1/evidence', {
        namespace_id: ns.id,
        source_locator: 'file:///notes.txt',
        content_root_sha256: sha256Hex(excerpt),
        excerpt,
      })
    ).body.evidence;
    memory = (await admin.post('/v1/memories', { namespace_id: ns.id, ...claim('Blue sky.') })).body.memory;
  });
  afterAll(() => h?.close());

  /** The next commit sequence of the workspace: bad requests must not move it. */
  async function nextSequence(): Promise<number> {
    const res = await admin.patch(`/v1/namespaces/${ns.id}`, { name: 'errors' });
    expect(res.status).toBe(200);
    return res.body.commit.sequence;
  }

  it('answers an unknown path not_found before authentication', async () => {
    for (const path of ['/v1/nope', '/nope', '/', '/v1', '/v1/memories/x/nope', '/v1/namespaces/a/b/c']) {
      expectError(await h.api.get(path), 'not_found');
      expectError(await h.api.call('DELETE', path), 'not_found');
      expectError(await h.api.get(path, { token: 'garbage' }), 'not_found');
    }
  });

  it('answers an unsupported method 405 with Allow, before authentication', async () => {
    expectError(await h.api.call('DELETE', '/v1/memories/x'), 'method_not_allowed', { allow: ['GET'] });
    expectError(await h.api.call('PUT', '/v1/workspaces'), 'method_not_allowed', { allow: ['GET', 'POST'] });
    expectError(await h.api.call('DELETE', '/v1/namespaces/ns_1'), 'method_not_allowed', { allow: ['GET', 'PATCH'] });
    expectError(await admin.call('POST', `/v1/namespaces/${ns.id}/grants`, { body: {} }), 'method_not_allowed', {
      allow: ['GET', 'PUT'],
    });
    expectError(await admin.call('POST', '/v1/me', { body: {} }), 'method_not_allowed', { allow: ['GET'] });
  });

  it('refuses a missing or unverifiable bearer token with 401 and WWW-Authenticate: Bearer', async () => {
    const alice = await h.human();
    const good = await alice.token();
    expectShape(await h.api.get('/v1/me', { token: good }), 'me.get');
    const refused: CallResult[] = [
      await h.api.get('/v1/workspaces'),
      await h.api.get('/v1/me', { token: 'garbage' }),
      await h.api.get('/v1/me', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } }),
      await h.api.get('/v1/me', { headers: { authorization: 'Bearer' } }),
      await h.api.get('/v1/me', { token: `${good.slice(0, -4)}AAAA` }),
      await h.api.get('/v1/me', { token: await h.issuer.sessionToken(alice.subject, { rogueKey: true }) }),
      await h.api.get('/v1/me', { token: await h.issuer.sessionToken(alice.subject, { exp: 1000 }) }),
      await h.api.get('/v1/me', { token: await h.issuer.sessionToken(alice.subject, { audience: 'urn:other' }) }),
      await h.api.get('/v1/me', {
        token: await h.issuer.accessToken(alice.subject, 'svc:read', { audience: 'urn:x' }),
      }),
      await h.api.post('/v1/workspaces', { name: 'anonymous' }),
      await h.api.post(`/v1/memories`, { namespace_id: ns.id, ...claim('x') }, { workspace: ws }),
    ];
    for (const res of refused) expectError(res, 'unauthenticated');
  });

  it('forbids an OAuth token lacking the scope and a member lacking the capability', async () => {
    // An OAuth client acting for its own subject: learn its actor, admit it, grant read+observe.
    const subject = `bot-${freshKey()}`;
    const readOnly = await h.issuer.accessToken(subject, 'svc:read');
    const me = expectShape(await h.api.get('/v1/me', { token: readOnly }), 'me.get');
    expect(me.caller_kind).toBe('oauth');
    expect(me.scopes).toEqual(['svc:read']);
    const human = await h.human({ enroll: false });
    const owner = (await admin.get('/v1/me', { workspace: null })).body.actor.id;
    const members = await admin.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner, role: 'admin' },
        { actor_id: me.actor.id, role: 'member' },
        { actor_id: human.actorId, role: 'member' },
      ],
    });
    expectShape(members, 'workspaces.members.put');
    const grants = await admin.put(`/v1/namespaces/${ns.id}/grants`, {
      grants: [
        { target: { kind: 'actor', actor_id: me.actor.id }, capabilities: ['read', 'observe'], inherit: false },
        { target: { kind: 'actor', actor_id: human.actorId }, capabilities: ['read'], inherit: false },
      ],
    });
    expectShape(grants, 'namespaces.grants.put');

    const bot = admin.as(readOnly, ws);
    expectShape(await bot.get(`/v1/namespaces/${ns.id}`), 'namespaces.get');
    expectError(await bot.post('/v1/memories', { namespace_id: ns.id, ...claim('scoped') }), 'forbidden');
    expectError(await bot.patch(`/v1/namespaces/${ns.id}`, { name: 'renamed' }), 'forbidden');
    // The same client with svc:observe may write: it was the scope, not the grant.
    const observing = admin.as(await h.issuer.accessToken(subject, 'svc:read svc:observe'), ws);
    expectShape(await observing.post('/v1/memories', { namespace_id: ns.id, ...claim('scoped') }), 'memories.create');
    // An OAuth token never creates a workspace, whatever its scopes.
    const everything = admin.as(await h.issuer.accessToken(subject, 'svc:read svc:observe svc:admin'), null);
    expectError(await everything.post('/v1/workspaces', { name: 'by-oauth' }), 'forbidden');

    // A member holding read but not observe: reads, but may not write or administer.
    const reader = await human.api(ws);
    expectShape(await reader.get(`/v1/memories/${memory.id}`), 'memories.get');
    expectError(await reader.post('/v1/memories', { namespace_id: ns.id, ...claim('no') }), 'forbidden');
    expectError(
      await reader.post('/v1/evidence', {
        namespace_id: ns.id,
        source_locator: 'x',
        content_root_sha256: sha256Hex('x'),
        excerpt: 'x',
      }),
      'forbidden',
    );
    expectError(
      await reader.post(`/v1/evidence/${evidence.id}/verifications`, {
        expected_content_root_sha256: evidence.content_root_sha256,
        expected_excerpt_sha256: evidence.excerpt_sha256,
        verdict: 'verified',
      }),
      'forbidden',
    );
    expectError(await reader.patch(`/v1/namespaces/${ns.id}`, { name: 'mine' }), 'forbidden');
    expectError(await reader.put(`/v1/workspaces/${ws}/members`, { members: [] }), 'forbidden');
  });

  it('requires pilot enrollment to create a workspace', async () => {
    const outsider = await h.human({ enroll: false });
    const denied = await (await outsider.api()).post('/v1/workspaces', { name: 'not enrolled' });
    expectError(denied, 'enrollment_required');
    const listed = expectShape(await (await outsider.api()).get('/v1/workspaces'), 'workspaces.list');
    expect(listed.enrollment).toEqual({ can_create_workspace: false, policy: 'admin_managed_pilot' });
    expect(listed.workspaces).toEqual([]);
    const enrolled = await h.human();
    expectShape(await (await enrolled.api()).post('/v1/workspaces', { name: 'enrolled' }), 'workspaces.create');
  });

  it('answers absent ids, unreadable ids and foreign workspaces with the same not_found', async () => {
    const absent = [
      await admin.get('/v1/memories/mem_absent'),
      await admin.get('/v1/memories/mem_absent/history'),
      await admin.get('/v1/evidence/ev_absent'),
      await admin.get('/v1/namespaces/ns_absent'),
      await admin.get('/v1/namespaces', { query: { parent_id: 'ns_absent' } }),
      await admin.patch('/v1/namespaces/ns_absent', { name: 'x' }),
      await admin.put('/v1/namespaces/ns_absent/grants', { grants: [] }),
      await admin.post('/v1/namespaces', { parent_id: 'ns_absent', name: 'x' }),
      await admin.post('/v1/memories', { namespace_id: 'ns_absent', ...claim('x') }),
      await admin.post('/v1/memories', { namespace_id: ns.id, ...claim('x'), evidence_ids: ['ev_absent'] }),
      await admin.post('/v1/evidence/ev_absent/verifications', {
        expected_content_root_sha256: evidence.content_root_sha256,
        expected_excerpt_sha256: evidence.excerpt_sha256,
        verdict: 'verified',
      }),
    ];
    for (const res of absent) expectError(res, 'not_found');

    // Another workspace's member: its ids are as absent here, and ours are absent there.
    const other = await h.workspace();
    const otherNs = (await other.api.post('/v1/namespaces', { parent_id: null, name: 'theirs' })).body.namespace;
    const otherMemory = (await other.api.post('/v1/memories', { namespace_id: otherNs.id, ...claim('t') })).body.memory;
    const hidden = await admin.get(`/v1/memories/${otherMemory.id}`);
    const missing = await admin.get('/v1/memories/mem_absent');
    expectError(hidden, 'not_found');
    expect(anonymous(hidden)).toEqual(anonymous(missing));
    expect(headerNames(hidden)).toEqual(headerNames(missing));

    // A member without a grant: an existing namespace answers like an absent one.
    const stranger = await h.human({ enroll: false });
    const owner = (await admin.get('/v1/me', { workspace: null })).body.actor.id;
    await admin.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner, role: 'admin' },
        { actor_id: stranger.actorId, role: 'member' },
      ],
    });
    const strangerApi = await stranger.api(ws);
    const unreadable = await strangerApi.get(`/v1/namespaces/${ns.id}`);
    const nothing = await strangerApi.get('/v1/namespaces/ns_absent');
    expectError(unreadable, 'not_found');
    expect(anonymous(unreadable)).toEqual(anonymous(nothing));
    expectError(await strangerApi.get(`/v1/memories/${memory.id}`), 'not_found');
    expectError(await strangerApi.get(`/v1/evidence/${evidence.id}`), 'not_found');

    // Selecting a workspace one is not in, or one that does not exist.
    const outsider = await h.human();
    expectError(await (await outsider.api(ws)).get('/v1/namespaces'), 'not_found');
    expectError(await (await outsider.api(ws)).get('/v1/me'), 'not_found');
    expectError(await (await outsider.api(ws)).put(`/v1/workspaces/${ws}/members`, { members: [] }), 'not_found');
    expectError(await (await outsider.api('ws_doesnotexist')).get('/v1/namespaces'), 'not_found');
    expectError(await admin.in('ws_doesnotexist').get(`/v1/namespaces/${ns.id}`), 'not_found');
    expectError(await admin.in(other.id).get(`/v1/namespaces/${ns.id}`), 'not_found');
    // A selector that is not a workspace id at all, or none where one is needed, is invalid input.
    expectError(await admin.in('nope').get('/v1/namespaces'), 'invalid_input');
    expectError(await admin.in(null).get('/v1/namespaces'), 'invalid_input');
  });

  it('answers conflict for a wrong expected hash and for removing the last admin', async () => {
    const wrong = await admin.post(`/v1/evidence/${evidence.id}/verifications`, {
      expected_content_root_sha256: evidence.content_root_sha256,
      expected_excerpt_sha256: sha256Hex('something else'),
      verdict: 'verified',
    });
    expectError(wrong, 'conflict');
    const wrongRoot = await admin.post(`/v1/evidence/${evidence.id}/verifications`, {
      expected_content_root_sha256: 'f'.repeat(64),
      expected_excerpt_sha256: evidence.excerpt_sha256,
      verdict: 'rejected',
    });
    expectError(wrongRoot, 'conflict');
    // Neither left a verification behind.
    const read = expectShape(await admin.get(`/v1/evidence/${evidence.id}`), 'evidence.get');
    expect(read.verifications).toEqual([]);

    const owner = (await admin.get('/v1/me', { workspace: null })).body.actor.id;
    const member = await h.human({ enroll: false });
    expectError(
      await admin.put(`/v1/workspaces/${ws}/members`, {
        members: [
          { actor_id: owner, role: 'member' },
          { actor_id: member.actorId, role: 'member' },
        ],
      }),
      'conflict',
    );
    expectError(await admin.put(`/v1/workspaces/${ws}/members`, { members: [] }), 'conflict');
    // The owner is still admin.
    expectShape(await admin.patch(`/v1/namespaces/${ns.id}`, { name: 'errors' }), 'namespaces.update');
  });

  it('requires an Idempotency-Key on every mutation, before anything else', async () => {
    const mutations = OPERATIONS.filter((op) => op.idempotent);
    expect(mutations.length).toBeGreaterThanOrEqual(8);
    for (const op of mutations) {
      const path = op.path.replace('{id}', op.workspace === 'path' ? ws : 'x');
      // An operation without a body (a DELETE) gets none: a body would be invalid_input of its own.
      const res = await admin.call(op.method, path, { body: op.input.body ? {} : undefined, idem: null });
      expectError(res, 'idempotency_required');
    }
  });

  it('replays an identical retry byte for byte and refuses a changed one under the same key', async () => {
    const key = freshKey();
    const body = { namespace_id: ns.id, ...claim('once') };
    const first = await admin.post('/v1/memories', body, { idem: key });
    expectShape(first, 'memories.create');
    const again = await admin.post('/v1/memories', { ...body }, { idem: key });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    // Key order and whitespace are not part of the request's identity.
    const reordered = await admin.call('POST', '/v1/memories', {
      raw: `{ "valid_from": 0, "text": "once", "kind": "claim", "namespace_id": "${ns.id}" }`,
      idem: key,
    });
    expect(reordered.text).toBe(first.text);
    expectError(await admin.post('/v1/memories', { ...body, text: 'twice' }, { idem: key }), 'idempotency_conflict');
    expectError(
      await admin.post('/v1/namespaces', { parent_id: null, name: 'other op' }, { idem: key }),
      'idempotency_conflict',
    );
    // Nothing but the first request wrote: one revision, and the next write takes the next sequence.
    const history = await admin.get(`/v1/memories/${first.body.memory.id}/history`);
    expect(history.body.revisions).toHaveLength(1);
    expect(await nextSequence()).toBe(first.body.commit.sequence + 1);
    // Keys belong to their principal: another caller's identical key is an independent request.
    const other = await h.workspace();
    const otherNs = (await other.api.post('/v1/namespaces', { parent_id: null, name: 'o' })).body.namespace;
    const theirs = await other.api.post('/v1/memories', { ...body, namespace_id: otherNs.id }, { idem: key });
    expectShape(theirs, 'memories.create');
    expect(theirs.body.memory.id).not.toBe(first.body.memory.id);
    // A malformed key is invalid input, not a missing one.
    expectError(await admin.post('/v1/memories', body, { idem: 'has spaces' }), 'invalid_input');
    expectError(
      await admin.post('/v1/memories', body, { headers: { 'idempotency-key': '' }, idem: null }),
      'invalid_input',
    );
  });

  it('refuses malformed requests with invalid_input and writes nothing', async () => {
    const before = await nextSequence();
    const valid = JSON.stringify({ namespace_id: ns.id, ...claim('fine') });
    const post = (raw: string | Uint8Array, contentType: string | null = 'application/json', query?: string) =>
      admin.call('POST', '/v1/memories', { raw, contentType, ...(query ? { query } : {}) });
    const refused: [string, CallResult][] = [
      ['text/plain', await post(valid, 'text/plain')],
      ['no content type', await post(valid, null)],
      ['latin1 charset', await post(valid, 'application/json; charset=latin1')],
      ['form', await post('a=b', 'application/x-www-form-urlencoded')],
      [
        'invalid UTF-8',
        await post(
          Buffer.concat([
            Buffer.from(`{"namespace_id":"${ns.id}","kind":"claim","text":"`),
            Buffer.from([0xff, 0xfe]),
            Buffer.from('","valid_from":0}'),
          ]),
        ),
      ],
      [
        'overlong UTF-8',
        await post(
          Buffer.concat([
            Buffer.from(`{"namespace_id":"${ns.id}","kind":"claim","text":"a`),
            Buffer.from([0xc0, 0x80]),
            Buffer.from('","valid_from":0}'),
          ]),
        ),
      ],
      ['truncated JSON', await post(valid.slice(0, -1))],
      ['empty body', await post('')],
      ['trailing garbage', await post(`${valid}x`)],
      ['JSON array', await post(`[${valid}]`)],
      ['JSON string', await post(JSON.stringify(valid))],
      ['JSON null', await post('null')],
      ['JSON number', await post('1')],
      ['unknown body field', await post(JSON.stringify({ ...JSON.parse(valid), color: 'blue' }))],
      ['missing field', await post(JSON.stringify({ namespace_id: ns.id, kind: 'claim', text: 'x' }))],
      ['unknown kind', await post(JSON.stringify({ ...JSON.parse(valid), kind: 'fact' }))],
      ['lone surrogate', await post(valid.replace('"fine"', '"fi\\ud800ne"'))],
      ['lone low surrogate', await post(valid.replace('"fine"', '"\\udc00"'))],
      ['surrogate in a key', await post(valid.replace('{', '{"\\ud800":1,'))],
      ['1e400', await post(valid.replace('"valid_from":0', '"valid_from":1e400'))],
      ['-1e400', await post(valid.replace('"valid_from":0', '"valid_from":-1e400'))],
      ['string for number', await post(valid.replace('"valid_from":0', '"valid_from":"0"'))],
      ['null for number', await post(valid.replace('"valid_from":0', '"valid_from":null'))],
      ['valid_to before valid_from', await post(valid.replace('"valid_from":0', '"valid_from":5,"valid_to":4'))],
      ['empty interval', await post(valid.replace('"valid_from":0', '"valid_from":5,"valid_to":5'))],
      ['unknown query parameter', await post(valid, 'application/json', 'dry=1')],
    ];
    for (const [label, res] of refused) {
      expect(res.status, label).toBe(400);
      expectError(res, 'invalid_input');
    }

    const gets: [string, CallResult][] = [
      ['unknown query parameter', await admin.get('/v1/namespaces', { query: 'foo=1' })],
      ['unknown query parameter on a get', await admin.get(`/v1/namespaces/${ns.id}`, { query: 'limit=1' })],
      ['repeated query parameter', await admin.get('/v1/namespaces', { query: 'limit=1&limit=1' })],
      ['repeated unknown parameter', await admin.get('/v1/workspaces', { query: 'x=1&x=1' })],
      ['bad percent-encoding', await admin.get('/v1/namespaces', { query: 'parent_id=%E0%A4%A' })],
      ['string for number', await admin.get(`/v1/memories/${memory.id}`, { query: 'as_of=abc' })],
      ['number with trailing junk', await admin.get(`/v1/memories/${memory.id}`, { query: 'as_of=1x' })],
      ['hex number', await admin.get(`/v1/memories/${memory.id}`, { query: 'as_of=0x10' })],
      ['empty number', await admin.get(`/v1/memories/${memory.id}`, { query: 'as_of=' })],
      ['infinite number', await admin.get(`/v1/memories/${memory.id}`, { query: 'as_of=1e400' })],
      ['boolean spelled yes', await admin.get(`/v1/memories/${memory.id}`, { query: 'include_evidence=yes' })],
      ['boolean spelled 1', await admin.get(`/v1/memories/${memory.id}`, { query: 'include_evidence=1' })],
      [
        'body on a GET',
        await sendRaw(h.url, {
          method: 'GET',
          path: `/v1/memories/${memory.id}`,
          headers: {
            authorization: `Bearer ${admin.token}`,
            'x-service-workspace': ws,
            'content-type': 'application/json',
          },
          body: Buffer.from('{}'),
        }),
      ],
      ['malformed path id', await admin.get('/v1/memories/%E0%A4%A')],
      ['path id with a space', await admin.get('/v1/memories/a%20b')],
      ['malformed id in body', await admin.post('/v1/namespaces', { parent_id: '-bad', name: 'x' })],
      [
        'uppercase sha256',
        await admin.post('/v1/evidence', {
          namespace_id: ns.id,
          source_locator: 'x',
          content_root_sha256: sha256Hex('x').toUpperCase(),
          excerpt: 'x',
        }),
      ],
      [
        'content root not the excerpt hash',
        await admin.post('/v1/evidence', {
          namespace_id: ns.id,
          source_locator: 'x',
          content_root_sha256: sha256Hex('y'),
          excerpt: 'x',
        }),
      ],
      [
        'unknown verdict',
        await admin.post(`/v1/evidence/${evidence.id}/verifications`, {
          expected_content_root_sha256: evidence.content_root_sha256,
          expected_excerpt_sha256: evidence.excerpt_sha256,
          verdict: 'maybe',
        }),
      ],
      [
        'grant to a non-member',
        await admin.put(`/v1/namespaces/${ns.id}/grants`, {
          grants: [{ target: { kind: 'actor', actor_id: 'act_nobody' }, capabilities: ['read'], inherit: false }],
        }),
      ],
      [
        'member that is no actor',
        await admin.put(`/v1/workspaces/${ws}/members`, {
          members: [{ actor_id: 'act_nobody', role: 'admin' }],
        }),
      ],
    ];
    for (const [label, res] of gets) {
      expect(res.status, `${label}: ${res.text}`).toBe(400);
      expectError(res, 'invalid_input');
    }
    // None of them wrote: the next write takes the very next sequence.
    expect(await nextSequence()).toBe(before + 1);
  });

  it('echoes a valid X-Request-Id and replaces an invalid one', async () => {
    const id = `req-${freshKey()}.a:b_c`;
    const failed = await h.api.get('/v1/nope', { headers: { 'x-request-id': id } });
    expectError(failed, 'not_found', { requestId: id });
    const ok = await admin.get('/v1/namespaces', { headers: { 'x-request-id': id } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-request-id')).toBe(id);
    const longest = `r${'x'.repeat(199)}`;
    expectError(await h.api.get('/v1/me', { headers: { 'x-request-id': longest } }), 'unauthenticated', {
      requestId: longest,
    });
    for (const invalid of ['has spaces', `r${'x'.repeat(200)}`, '-leading-dash', 'semi;colon', 'a/b']) {
      const res = await h.api.get('/v1/nope', { headers: { 'x-request-id': invalid } });
      expectError(res, 'not_found');
      expect(res.body.error.request_id).not.toBe(invalid);
    }
    const a = await h.api.get('/v1/nope');
    const b = await h.api.get('/v1/nope');
    expect(a.body.error.request_id).not.toBe(b.body.error.request_id);
  });

  it('answers a body over the request cap budget_exceeded', async () => {
    const body = Buffer.alloc(262145, 0x20);
    body.write(JSON.stringify({ parent_id: null, name: 'too big' }));
    const res = await sendRaw(h.url, {
      method: 'POST',
      path: '/v1/namespaces',
      headers: {
        authorization: `Bearer ${admin.token}`,
        'x-service-workspace': ws,
        'idempotency-key': freshKey(),
        'content-type': 'application/json',
      },
      body,
    });
    expectError(res, 'budget_exceeded');
  });

  it('answers projection_pending, retryable, when recall asks for an unindexed sequence', async () => {
    // The harness runs no indexer, so the indexed sequence stays behind every commit.
    const body = {
      namespace_ids: [ns.id],
      query: 'sky',
      // The lexical arm alone: a cold builtin embedder would make the answer `degraded` first.
      mode: 'lexical',
      budget: { max_context_chars: 1000 },
      min_sequence: 9007199254740991,
    };
    const pending = await admin.post('/v1/recall', { ...body, on_pending: 'error' });
    expectError(pending, 'projection_pending', { retryAfterSeconds: 1 });
    expect(pending.body.error.retryable).toBe(true);
    const reported = expectShape(await admin.post('/v1/recall', body), 'recall');
    expect(reported.status).toBe('pending');
  });

  it('answers unavailable, retryable, when the database is lost', async () => {
    const lost = await startHarness({ driver });
    try {
      const { api } = await lost.workspace();
      expectShape(await api.get('/v1/namespaces'), 'namespaces.list');
      expect((await lost.api.get('/readyz')).status).toBe(200);
      if (driver === 'postgres') {
        const name = lost.database?.name as string;
        const adminDb = await Ledger.open({ databaseUrl: ADMIN_URL, maxConnections: 1 });
        try {
          await adminDb.handle.db.execute(
            sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name}`,
          );
          await adminDb.handle.db.execute(sql.raw(`drop database if exists "${name}" with (force)`));
        } finally {
          await adminDb.close();
        }
      } else {
        const ledger = lost.gateway.ledger;
        await ledger.close();
        // Already closed: let the harness tear down everything else without closing it twice.
        ledger.close = async () => {};
      }
      for (const res of [
        await api.get('/v1/namespaces'),
        await api.get('/v1/me'),
        await api.post('/v1/namespaces', { parent_id: null, name: 'lost' }),
      ]) {
        expectError(res, 'unavailable', { retryAfterSeconds: 1 });
        expect(res.body.error.retryable).toBe(true);
      }
      const ready = await lost.api.get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'not_ready', reason: 'database unreachable' });
      expect((await lost.api.get('/healthz')).status).toBe(200);
      // Unknown paths still answer without the database.
      expectError(await lost.api.get('/v1/nope'), 'not_found');
    } finally {
      await lost.close();
    }
  });

  // PGlite is one connection in this process: no second session can hold a row lock on it.
  it.runIf(driver === 'postgres')('answers unavailable when an operation times out, and a retry replays', async () => {
    const slow = await startHarness({ driver, timeoutMs: 500 });
    const locker = await Ledger.open({ databaseUrl: slow.database?.url, maxConnections: 1 });
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      const { id, api } = await slow.workspace();
      const ns = expectShape(await api.post('/v1/namespaces', { parent_id: null, name: 'root' }), 'namespaces.create');
      let locked = () => {};
      const lockTaken = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = locker.handle.db.transaction(async (tx) => {
        await tx.execute(sql`select * from workspace_heads where workspace_id = ${id} for update`);
        locked();
        await released;
      });
      await lockTaken;

      const key = freshKey();
      const started = performance.now();
      const blocked = await api.post('/v1/namespaces', { parent_id: null, name: 'blocked' }, { idem: key });
      const elapsed = performance.now() - started;
      expectError(blocked, 'unavailable', { retryAfterSeconds: 1 });
      expect(elapsed).toBeGreaterThanOrEqual(450);
      expect(elapsed).toBeLessThan(5000);
      // Reads do not wait for the writer's lock.
      expectShape(await api.get(`/v1/namespaces/${ns.namespace.id}`), 'namespaces.get');

      release();
      await holder;
      // The retry under the same key executes once: one namespace named "blocked".
      const retried = expectShape(
        await api.post('/v1/namespaces', { parent_id: null, name: 'blocked' }, { idem: key }),
        'namespaces.create',
      );
      const again = await api.post('/v1/namespaces', { parent_id: null, name: 'blocked' }, { idem: key });
      expect(again.body).toEqual(retried);
      const listed = expectShape(await api.get('/v1/namespaces'), 'namespaces.list');
      expect(listed.namespaces.filter((n: { name: string }) => n.name === 'blocked')).toHaveLength(1);
    } finally {
      release();
      await locker.close();
      await slow.close();
    }
  });

  it('answers every /v1 error as private JSON, authenticated or not', async () => {
    const res = await h.api.get('/v1/namespaces');
    expectPrivateJson(res);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
  });
});
