import { type ApiClient, type CallResult, freshKey, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';
import { expectError, expectShape, sendRaw } from './shapes';

/*
 * Every bound of interface.md's Limits table, at the bound (accepted) and just past it
 * (refused). Lengths count Unicode code points: an astral character such as '😀' is one
 * character but two UTF-16 units and four UTF-8 bytes.
 */

const EMOJI = '😀';
const REQUEST_CAP = 262144;

/** `n` code points, each an astral character. */
const astral = (n: number) => EMOJI.repeat(n);

const refused = (res: CallResult) => expectError(res, 'invalid_input');

async function addEvidence(api: ApiClient, namespaceId: string, excerpt: string, sourceLocator = 'file:///source') {
  return api.post('/v1/evidence', {
    namespace_id: namespaceId,
    source_locator: sourceLocator,
    content_root_sha256: sha256Hex(excerpt),
    excerpt,
  });
}

async function addMemory(api: ApiClient, namespaceId: string, text: string, extra: object = {}) {
  return api.post('/v1/memories', { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0, ...extra });
}

describe.each(DRIVERS)('limits (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  async function fresh() {
    const { id, api, owner } = await h.workspace();
    const ns = expectShape(await api.post('/v1/namespaces', { parent_id: null, name: 'root' }), 'namespaces.create');
    return { ws: id, api, owner, ns: ns.namespace as { id: string } };
  }

  it('names: 160 code points accepted, 161 refused (code points, not UTF-16 units)', async () => {
    const { api, ns } = await fresh();
    const owner = await (await h.human()).api();
    expect(astral(160).length).toBe(320);

    const workspace = expectShape(await owner.post('/v1/workspaces', { name: astral(160) }), 'workspaces.create');
    expect(workspace.workspace.name).toBe(astral(160));
    // A base letter plus a combining accent is two code points.
    const combining = 'e\u0301'.repeat(80);
    expect(
      expectShape(await owner.post('/v1/workspaces', { name: combining }), 'workspaces.create').workspace.name,
    ).toBe(combining);
    refused(await owner.post('/v1/workspaces', { name: astral(161) }));
    refused(await owner.post('/v1/workspaces', { name: `${combining}e` }));
    refused(await owner.post('/v1/workspaces', { name: 'w'.repeat(161) }));
    refused(await owner.post('/v1/workspaces', { name: '' }));

    const created = expectShape(
      await api.post('/v1/namespaces', { parent_id: null, name: astral(160) }),
      'namespaces.create',
    );
    expect(created.namespace.name).toBe(astral(160));
    expect(created.namespace.display_path).toEqual([astral(160)]);
    const child = expectShape(
      await api.post('/v1/namespaces', { parent_id: ns.id, name: 'n'.repeat(160) }),
      'namespaces.create',
    );
    expect(child.namespace.display_path).toEqual(['root', 'n'.repeat(160)]);
    refused(await api.post('/v1/namespaces', { parent_id: null, name: astral(161) }));
    refused(await api.post('/v1/namespaces', { parent_id: ns.id, name: 'n'.repeat(161) }));
    refused(await api.post('/v1/namespaces', { parent_id: null, name: '' }));

    const renamed = expectShape(await api.patch(`/v1/namespaces/${ns.id}`, { name: astral(160) }), 'namespaces.update');
    expect(renamed.namespace.display_path).toEqual([astral(160)]);
    refused(await api.patch(`/v1/namespaces/${ns.id}`, { name: astral(161) }));
    refused(await api.patch(`/v1/namespaces/${ns.id}`, { name: '' }));
    const read = expectShape(await api.get(`/v1/namespaces/${child.namespace.id}`), 'namespaces.get');
    expect(read.namespace.display_path).toEqual([astral(160), 'n'.repeat(160)]);
  });

  it('ids, workspace selectors and Idempotency-Key: 200 characters accepted, 201 refused', async () => {
    const { api, ns } = await fresh();
    const id200 = `i${'d'.repeat(199)}`;
    const id201 = `${id200}d`;
    for (const path of ['/v1/namespaces/', '/v1/memories/', '/v1/evidence/']) {
      expectError(await api.get(`${path}${id200}`), 'not_found');
      refused(await api.get(`${path}${id201}`));
    }
    expectError(await api.get(`/v1/memories/${id200}/history`), 'not_found');
    refused(await api.get(`/v1/memories/${id201}/history`));
    expectError(await api.post('/v1/namespaces', { parent_id: id200, name: 'x' }), 'not_found');
    refused(await api.post('/v1/namespaces', { parent_id: id201, name: 'x' }));
    expectError(await addMemory(api, id200, 'x'), 'not_found');
    refused(await addMemory(api, id201, 'x'));
    expectError(await addMemory(api, ns.id, 'x', { evidence_ids: [id200] }), 'not_found');
    refused(await addMemory(api, ns.id, 'x', { evidence_ids: [id201] }));
    expectError(await api.get('/v1/namespaces', { query: { parent_id: id200 } }), 'not_found');
    refused(await api.get('/v1/namespaces', { query: { parent_id: id201 } }));

    const selector200 = `ws_${'w'.repeat(197)}`;
    expectError(await api.in(selector200).get('/v1/namespaces'), 'not_found');
    refused(await api.in(`${selector200}w`).get('/v1/namespaces'));
    expectError(
      await api.put(`/v1/workspaces/${selector200}/members`, { members: [] }, { workspace: null }),
      'not_found',
    );
    refused(await api.put(`/v1/workspaces/${selector200}w/members`, { members: [] }, { workspace: null }));

    const key200 = `K${'k'.repeat(199)}`;
    const first = expectShape(
      await api.post('/v1/namespaces', { parent_id: null, name: 'keyed' }, { idem: key200 }),
      'namespaces.create',
    );
    const replay = await api.post('/v1/namespaces', { parent_id: null, name: 'keyed' }, { idem: key200 });
    expect(replay.body).toEqual(first);
    refused(await api.post('/v1/namespaces', { parent_id: null, name: 'keyed 2' }, { idem: `${key200}k` }));
    refused(await api.post('/v1/namespaces', { parent_id: null, name: 'keyed 3' }, { idem: '-leading-dash' }));
    const listed = expectShape(await api.get('/v1/namespaces'), 'namespaces.list');
    expect(listed.namespaces.map((n: { name: string }) => n.name).sort()).toEqual(['keyed', 'root']);
  });

  it('source_locator: 2048 characters; excerpt: 65536 characters', async () => {
    const { api, ns } = await fresh();
    for (const locator of ['l'.repeat(2048), astral(2048)]) {
      const created = expectShape(
        await addEvidence(api, ns.id, `excerpt for ${locator.length}`, locator),
        'evidence.create',
      );
      expect(created.evidence.source_locator).toBe(locator);
      const read = expectShape(await api.get(`/v1/evidence/${created.evidence.id}`), 'evidence.get');
      expect(read.evidence.source_locator).toBe(locator);
    }
    refused(await addEvidence(api, ns.id, 'other', 'l'.repeat(2049)));
    refused(await addEvidence(api, ns.id, 'other', astral(2049)));
    refused(await addEvidence(api, ns.id, 'other', ''));

    // 65536 three-byte characters: 196608 bytes, inside the request cap.
    const widest = '€'.repeat(65536);
    // 65536 code points that are 65537 UTF-16 units.
    const astralEnd = `${'a'.repeat(65535)}${EMOJI}`;
    for (const excerpt of [widest, astralEnd]) {
      const created = expectShape(await addEvidence(api, ns.id, excerpt), 'evidence.create');
      expect(created.evidence.excerpt).toBe(excerpt);
      expect(created.evidence.excerpt_sha256).toBe(sha256Hex(excerpt));
      const read = expectShape(await api.get(`/v1/evidence/${created.evidence.id}`), 'evidence.get');
      expect(read.evidence.excerpt).toBe(excerpt);
    }
    refused(await addEvidence(api, ns.id, '€'.repeat(65537)));
    refused(await addEvidence(api, ns.id, `${'a'.repeat(65536)}${EMOJI}`));
    refused(await addEvidence(api, ns.id, ''));
  });

  it('memory text: 32768 characters', async () => {
    const { api, ns } = await fresh();
    for (const text of [astral(32768), 't'.repeat(32768)]) {
      const created = expectShape(await addMemory(api, ns.id, text), 'memories.create');
      expect(created.revision.text).toBe(text);
      const read = expectShape(await api.get(`/v1/memories/${created.memory.id}`), 'memories.get');
      expect(read.view.revision.text).toBe(text);
    }
    refused(await addMemory(api, ns.id, astral(32769)));
    refused(await addMemory(api, ns.id, 't'.repeat(32769)));
    refused(await addMemory(api, ns.id, ''));
  });

  it('evidence_ids: 32 accepted, 33 refused; a view of 32 large excerpts passes the response cap', async () => {
    const { api, ns } = await fresh();
    // 40000 three-byte characters: 120 kB of UTF-8 each, 3.8 MB for 32 of them.
    const created = await Promise.all(
      Array.from({ length: 33 }, (_, i) => addEvidence(api, ns.id, `${i}:${'€'.repeat(40000)}`)),
    );
    const ids = created.map((res) => expectShape(res, 'evidence.create').evidence.id as string);
    const cites = expectShape(
      await addMemory(api, ns.id, 'cites 32', { evidence_ids: ids.slice(0, 32) }),
      'memories.create',
    );
    expect(cites.revision.evidence_ids).toEqual(ids.slice(0, 32));
    refused(await addMemory(api, ns.id, 'cites 33', { evidence_ids: ids }));
    refused(await addMemory(api, ns.id, 'cites twice', { evidence_ids: [ids[0], ids[0]] }));
    refused(await addMemory(api, ns.id, 'cites one twice in 32', { evidence_ids: [...ids.slice(0, 31), ids[0]] }));

    // Read with its evidence, the view passes 1048576 bytes: budget_exceeded.
    const memoryId = cites.memory.id as string;
    expectError(await api.get(`/v1/memories/${memoryId}`, { query: { include_evidence: true } }), 'budget_exceeded');
    const light = expectShape(await api.get(`/v1/memories/${memoryId}`), 'memories.get');
    expect(light.view.evidence).toEqual([]);
    expect(light.view.revision.evidence_ids).toEqual(ids.slice(0, 32));
    const explicit = expectShape(
      await api.get(`/v1/memories/${memoryId}`, { query: { include_evidence: false } }),
      'memories.get',
    );
    expect(explicit.view.evidence).toEqual([]);
    // A view of a few of them fits and carries the exact excerpts.
    const few = expectShape(
      await addMemory(api, ns.id, 'cites 2', { evidence_ids: ids.slice(0, 2) }),
      'memories.create',
    );
    const fits = expectShape(
      await api.get(`/v1/memories/${few.memory.id}`, { query: { include_evidence: true } }),
      'memories.get',
    );
    expect(fits.view.evidence.map((e: { excerpt: string }) => e.excerpt)).toEqual([
      `0:${'€'.repeat(40000)}`,
      `1:${'€'.repeat(40000)}`,
    ]);
  });

  it('support_revision_ids: 32 accepted, 33 refused, no duplicates', async () => {
    const { api, ns } = await fresh();
    const created = await Promise.all(Array.from({ length: 33 }, (_, i) => addMemory(api, ns.id, `support ${i}`)));
    const revisionIds = created.map((res) => expectShape(res, 'memories.create').revision.id as string);
    const supported = expectShape(
      await addMemory(api, ns.id, 'supported by 32', { support_revision_ids: revisionIds.slice(0, 32) }),
      'memories.create',
    );
    expect(supported.revision.support_revision_ids).toEqual(revisionIds.slice(0, 32));
    refused(await addMemory(api, ns.id, 'supported by 33', { support_revision_ids: revisionIds }));
    refused(await addMemory(api, ns.id, 'supported twice', { support_revision_ids: [revisionIds[1], revisionIds[1]] }));
  });

  it('members and grants: 100 accepted, 101 refused; capabilities per grant: 6 accepted, a 7th refused', async () => {
    const { ws, api, owner, ns } = await fresh();
    const people = [];
    for (let batch = 0; batch < 10; batch += 1) {
      people.push(...(await Promise.all(Array.from({ length: 10 }, () => h.human({ enroll: false })))));
    }
    const members = [
      { actor_id: owner.actorId, role: 'admin' },
      ...people.slice(0, 99).map((p) => ({ actor_id: p.actorId, role: 'member' })),
    ];
    const put = expectShape(await api.put(`/v1/workspaces/${ws}/members`, { members }), 'workspaces.members.put');
    expect(put.members).toEqual(members);
    const extra = people[99] as (typeof people)[number];
    refused(
      await api.put(`/v1/workspaces/${ws}/members`, {
        members: [...members, { actor_id: extra.actorId, role: 'member' }],
      }),
    );

    const grants = members.map((m) => ({
      target: { kind: 'actor', actor_id: m.actor_id },
      capabilities: ['read'],
      inherit: false,
    }));
    const granted = expectShape(await api.put(`/v1/namespaces/${ns.id}/grants`, { grants }), 'namespaces.grants.put');
    expect(granted.grants).toEqual(grants);
    // The 101st grant is refused by count (only 100 members exist to target anyway).
    refused(
      await api.put(`/v1/namespaces/${ns.id}/grants`, {
        grants: [...grants, { target: { kind: 'actor', actor_id: extra.actorId }, capabilities: [], inherit: false }],
      }),
    );
    // The 100 grants stand: the 99th member reads the namespace.
    const last = people[98] as (typeof people)[number];
    expectShape(await (await last.api(ws)).get(`/v1/namespaces/${ns.id}`), 'namespaces.get');

    const target = { kind: 'actor', actor_id: last.actorId };
    const all = ['read', 'observe', 'verify', 'correct', 'forget', 'admin'];
    const six = expectShape(
      await api.put(`/v1/namespaces/${ns.id}/grants`, { grants: [{ target, capabilities: all, inherit: true }] }),
      'namespaces.grants.put',
    );
    expect(six.grants[0].capabilities).toEqual(all);
    refused(
      await api.put(`/v1/namespaces/${ns.id}/grants`, {
        grants: [{ target, capabilities: [...all, 'read'], inherit: true }],
      }),
    );
    refused(
      await api.put(`/v1/namespaces/${ns.id}/grants`, {
        grants: [{ target, capabilities: ['read', 'read'], inherit: true }],
      }),
    );
    refused(
      await api.put(`/v1/namespaces/${ns.id}/grants`, {
        grants: [{ target, capabilities: ['read', 'write'], inherit: true }],
      }),
    );
    expectShape(
      await api.put(`/v1/namespaces/${ns.id}/grants`, { grants: [{ target, capabilities: [], inherit: false }] }),
      'namespaces.grants.put',
    );
  });

  it('page limit: 1 and 100 accepted; 0, 101, 1.5 and abc refused', async () => {
    const { api, ns } = await fresh();
    expectShape(await api.post('/v1/namespaces', { parent_id: null, name: 'second' }), 'namespaces.create');
    const memory = expectShape(await addMemory(api, ns.id, 'v1'), 'memories.create').memory;
    expectShape(
      await api.post(`/v1/memories/${memory.id}/corrections`, { expected_generation: 1, text: 'v2' }),
      'memories.correct',
    );
    const lists: [string, string][] = [
      ['/v1/workspaces', 'workspaces.list'],
      ['/v1/namespaces', 'namespaces.list'],
      [`/v1/memories/${memory.id}/history`, 'memories.history'],
    ];
    for (const [path, operation] of lists) {
      const one = expectShape(await api.get(path, { query: { limit: 1 } }), operation);
      const items = Object.values(one).find(Array.isArray) as unknown[];
      expect(items.length, operation).toBe(1);
      const hundred = expectShape(await api.get(path, { query: { limit: 100 } }), operation);
      expect(hundred.next_cursor, operation).toBeNull();
      for (const limit of ['0', '101', '1.5', 'abc', '-1', '', '1e400']) {
        refused(await api.get(path, { query: { limit } }));
      }
    }
    // One is a real page size: the first page of two namespaces continues.
    const first = expectShape(await api.get('/v1/namespaces', { query: { limit: 1 } }), 'namespaces.list');
    expect(first.next_cursor).toEqual(expect.any(String));
    const firstHistory = expectShape(
      await api.get(`/v1/memories/${memory.id}/history`, { query: { limit: 1 } }),
      'memories.history',
    );
    expect(firstHistory.revisions[0].generation).toBe(2);
    expect(firstHistory.next_cursor).toEqual(expect.any(String));
  });

  it('cursors: issued ones page, forged ones of 512 and 513 characters are invalid_input', async () => {
    const { api, ns } = await fresh();
    for (const name of ['b', 'c']) {
      expectShape(await api.post('/v1/namespaces', { parent_id: null, name }), 'namespaces.create');
    }
    const seen: string[] = [];
    const cursors: string[] = [];
    let cursor: string | undefined;
    do {
      const page = expectShape(await api.get('/v1/namespaces', { query: { limit: 1, cursor } }), 'namespaces.list');
      seen.push(...page.namespaces.map((n: { name: string }) => n.name));
      cursor = page.next_cursor ?? undefined;
      if (cursor) {
        expect(cursor.length).toBeLessThanOrEqual(512);
        cursors.push(cursor);
      }
    } while (cursor);
    expect(seen).toEqual(['b', 'c', 'root']);
    const genuine = cursors[0] as string;

    const memory = expectShape(await addMemory(api, ns.id, 'm'), 'memories.create').memory;
    const evidence = expectShape(await addEvidence(api, ns.id, 'e'), 'evidence.create').evidence;
    const forged = ['A'.repeat(512), 'A'.repeat(513), `${'A'.repeat(255)}.${'A'.repeat(256)}`, ''];
    const tampered = `${genuine.slice(0, -1)}${genuine.endsWith('A') ? 'B' : 'A'}`;
    for (const bad of [...forged, tampered]) {
      refused(await api.get('/v1/namespaces', { query: { cursor: bad } }));
      refused(await api.get('/v1/workspaces', { query: { cursor: bad } }));
      refused(await api.get(`/v1/memories/${memory.id}/history`, { query: { cursor: bad } }));
      refused(await api.get(`/v1/evidence/${evidence.id}`, { query: { cursor: bad } }));
    }
    // A genuine cursor is bound to the listing it came from.
    refused(await api.get('/v1/workspaces', { query: { cursor: genuine } }));
    refused(await api.get(`/v1/memories/${memory.id}/history`, { query: { cursor: genuine } }));
    refused(await api.get('/v1/namespaces', { query: { cursor: genuine, parent_id: ns.id } }));
    expectShape(await api.get('/v1/namespaces', { query: { cursor: genuine } }), 'namespaces.list');
  });

  it('namespace depth: 32 levels of 160-character names, the 33rd refused', async () => {
    const { api } = await fresh();
    const names: string[] = [];
    let parent: string | null = null;
    for (let level = 1; level <= 32; level += 1) {
      const name = `${level}${astral(160 - String(level).length)}`;
      names.push(name);
      const created = expectShape(await api.post('/v1/namespaces', { parent_id: parent, name }), 'namespaces.create');
      expect(created.namespace.display_path).toEqual(names);
      parent = created.namespace.id as string;
    }
    const deepest = expectShape(await api.get(`/v1/namespaces/${parent}`), 'namespaces.get');
    expect(deepest.namespace.display_path).toEqual(names);
    expectError(await api.post('/v1/namespaces', { parent_id: parent, name: 'too deep' }), 'invalid_input', {
      detail: 'body.parent_id: a namespace may be at most 32 levels deep',
    });
    const listed = expectShape(await api.get('/v1/namespaces', { query: { limit: 100 } }), 'namespaces.list');
    expect(listed.namespaces.map((n: { display_path: string[] }) => n.display_path.length)).toContain(32);
    expect(listed.namespaces.some((n: { name: string }) => n.name === 'too deep')).toBe(false);
  });

  it('request body: exactly 262144 bytes accepted, 262145 refused, with Content-Length or chunked', async () => {
    const { ws, api, owner } = await fresh();
    const token = await owner.token();
    const body = (name: string, size: number) => {
      const padded = Buffer.alloc(size, ' ');
      padded.write(JSON.stringify({ parent_id: null, name }));
      return padded;
    };
    const headers = () => ({
      authorization: `Bearer ${token}`,
      'x-service-workspace': ws,
      'idempotency-key': freshKey(),
      'content-type': 'application/json',
    });
    const send = (name: string, size: number, chunkSize?: number) =>
      sendRaw(h.url, {
        method: 'POST',
        path: '/v1/namespaces',
        headers: headers(),
        body: body(name, size),
        ...(chunkSize ? { chunkSize } : {}),
      });

    expect(body('x', REQUEST_CAP).length).toBe(REQUEST_CAP);
    expectShape(await send('exact', REQUEST_CAP), 'namespaces.create');
    expectShape(await send('exact chunked', REQUEST_CAP, 16384), 'namespaces.create');
    expectShape(
      await api.call('POST', '/v1/namespaces', { raw: body('exact fetch', REQUEST_CAP) }),
      'namespaces.create',
    );
    expectError(await send('over', REQUEST_CAP + 1), 'budget_exceeded');
    expectError(await send('over chunked', REQUEST_CAP + 1, 16384), 'budget_exceeded');
    expectError(await send('over chunked, one chunk', REQUEST_CAP + 1, REQUEST_CAP + 1), 'budget_exceeded');
    expectError(await send('far over chunked', 4 * REQUEST_CAP, 65536), 'budget_exceeded');
    // The cap counts bytes: 65536 four-byte characters are 262144 bytes before any JSON.
    expectError(await addEvidence(api, 'ns_x', astral(65536)), 'budget_exceeded');

    const listed = expectShape(await api.get('/v1/namespaces'), 'namespaces.list');
    expect(listed.namespaces.map((n: { name: string }) => n.name).sort()).toEqual(
      ['exact', 'exact chunked', 'exact fetch', 'root'].sort(),
    );
  });
});
