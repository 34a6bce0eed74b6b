import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApiClient, type CallResult, cliLines, runSvc, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, type Human, startHarness } from './harness';

type Capability = 'read' | 'observe' | 'verify' | 'correct' | 'forget' | 'admin';

const grant = (actorId: string, capabilities: Capability[], inherit: boolean) => ({
  target: { kind: 'actor' as const, actor_id: actorId },
  capabilities,
  inherit,
});

function expectError(res: CallResult, status: number, code: string, why = '') {
  expect(res.status, `${why} ${res.text}`).toBe(status);
  expect(res.body?.error?.code, why).toBe(code);
}

describe.each(DRIVERS)('capabilities and grants (%s)', (driver) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver });
  });
  afterAll(() => h?.close());

  interface Team {
    ws: string;
    owner: Human;
    admin: ApiClient;
    /** Members of the workspace (role member unless listed in `admins`). */
    people: { human: Human; api: ApiClient }[];
    ns(parent: { id: string } | null, name: string): Promise<{ id: string; display_path: string[] }>;
    grants(namespaceId: string, grants: unknown[], as?: ApiClient): Promise<CallResult>;
  }

  /** A workspace with its owner and `count` further members (the first `admins` of them workspace admins). */
  async function team(count: number, admins = 0): Promise<Team> {
    const { id: ws, owner, api: admin } = await h.workspace();
    const humans: Human[] = [];
    for (let i = 0; i < count; i += 1) humans.push(await h.human({ enroll: false }));
    const members = await admin.put(`/v1/workspaces/${ws}/members`, {
      members: [
        { actor_id: owner.actorId, role: 'admin' },
        ...humans.map((p, i) => ({ actor_id: p.actorId, role: i < admins ? 'admin' : 'member' })),
      ],
    });
    expect(members.status, members.text).toBe(200);
    const people = await Promise.all(humans.map(async (human) => ({ human, api: await human.api(ws) })));
    return {
      ws,
      owner,
      admin,
      people,
      async ns(parent, name) {
        const res = await admin.post('/v1/namespaces', { parent_id: parent?.id ?? null, name });
        expect(res.status, res.text).toBe(200);
        return res.body.namespace;
      },
      grants(namespaceId, grants, as = admin) {
        return as.put(`/v1/namespaces/${namespaceId}/grants`, { grants });
      },
    };
  }

  const status = async (api: ApiClient, namespaceId: string) => (await api.get(`/v1/namespaces/${namespaceId}`)).status;

  function evidenceBody(namespaceId: string) {
    const excerpt = `excerpt ${crypto.randomBytes(4).toString('hex')}`;
    return {
      namespace_id: namespaceId,
      source_locator: 'file:///e.txt',
      content_root_sha256: sha256Hex(excerpt),
      excerpt,
    };
  }

  const memoryBody = (namespaceId: string, extra: object = {}) => ({
    namespace_id: namespaceId,
    kind: 'claim',
    text: 'a claim',
    valid_from: 0,
    ...extra,
  });

  describe('inheritance', () => {
    it('inherit:true reaches the whole subtree (also namespaces created later), inherit:false only the namespace', async () => {
      const t = await team(2);
      const [bob, carol] = t.people as [Team['people'][0], Team['people'][0]];
      const top = await t.ns(null, 'top');
      const mid = await t.ns(top, 'mid');
      const leaf = await t.ns(mid, 'leaf');
      const side = await t.ns(top, 'side');
      expect((await t.grants(mid.id, [grant(bob.human.actorId, ['read'], true)])).status).toBe(200);
      const second = await t.grants(mid.id, [
        grant(bob.human.actorId, ['read'], true),
        grant(carol.human.actorId, ['read'], false),
      ]);
      expect(second.status, second.text).toBe(200);
      const later = await t.ns(leaf, 'later');
      const memory = (await t.admin.post('/v1/memories', memoryBody(later.id))).body.memory;

      const expectations: [string, string, number, number][] = [
        ['top', top.id, 404, 404],
        ['mid', mid.id, 200, 200],
        ['leaf', leaf.id, 200, 404],
        ['later', later.id, 200, 404],
        ['side', side.id, 404, 404],
      ];
      for (const [name, id, forBob, forCarol] of expectations) {
        expect(await status(bob.api, id), `bob on ${name}`).toBe(forBob);
        expect(await status(carol.api, id), `carol on ${name}`).toBe(forCarol);
      }
      expect((await bob.api.get(`/v1/memories/${memory.id}`)).status).toBe(200);
      expectError(await carol.api.get(`/v1/memories/${memory.id}`), 404, 'not_found');
    });

    it('capabilities from several grants add up along the path', async () => {
      const t = await team(1);
      const [bob] = t.people as [Team['people'][0]];
      const top = await t.ns(null, 'top');
      const mid = await t.ns(top, 'mid');
      expect((await t.grants(top.id, [grant(bob.human.actorId, ['read'], true)])).status).toBe(200);
      expect((await t.grants(mid.id, [grant(bob.human.actorId, ['observe'], false)])).status).toBe(200);
      expect((await bob.api.post('/v1/memories', memoryBody(mid.id))).status).toBe(200);
      // observe was not inherited from mid upwards, nor granted on top.
      expectError(await bob.api.post('/v1/memories', memoryBody(top.id)), 403, 'forbidden');
    });
  });

  describe('what a capability allows', () => {
    it('admin on a namespace implies every capability there, and nothing below when not inherited', async () => {
      const t = await team(2);
      const [bob, carol] = t.people as [Team['people'][0], Team['people'][0]];
      const ns = await t.ns(null, 'n');
      const child = await t.ns(ns, 'child');
      expect((await t.grants(ns.id, [grant(bob.human.actorId, ['admin'], false)])).status).toBe(200);
      const api = bob.api;

      expect(await status(api, ns.id)).toBe(200); // read
      const evidence = await api.post('/v1/evidence', evidenceBody(ns.id)); // observe
      expect(evidence.status, evidence.text).toBe(200);
      const ev = evidence.body.evidence;
      const verified = await api.post(`/v1/evidence/${ev.id}/verifications`, {
        expected_content_root_sha256: ev.content_root_sha256,
        expected_excerpt_sha256: ev.excerpt_sha256,
        verdict: 'verified',
      }); // verify
      expect(verified.status, verified.text).toBe(200);
      const created = await api.post('/v1/memories', memoryBody(ns.id, { evidence_ids: [ev.id] }));
      expect(created.status, created.text).toBe(200);
      // Holding verify, citing verified evidence: asserted at creation.
      expect(created.body.revision.status).toBe('asserted');
      const corrected = await api.post(`/v1/memories/${created.body.memory.id}/corrections`, {
        expected_generation: 1,
        text: 'corrected',
      }); // correct
      expect(corrected.status, corrected.text).toBe(200);
      const forgotten = await api.post(`/v1/memories/${created.body.memory.id}/forget`, {
        mode: 'retract',
        expected_generation: 2,
      }); // forget
      expect(forgotten.status, forgotten.text).toBe(200);
      expect((await api.patch(`/v1/namespaces/${ns.id}`, { name: 'renamed' })).status).toBe(200); // admin
      const put = await t.grants(
        ns.id,
        [grant(bob.human.actorId, ['admin'], false), grant(carol.human.actorId, ['read'], false)],
        api,
      );
      expect(put.status, put.text).toBe(200);
      expect((await api.post('/v1/namespaces', { parent_id: ns.id, name: 'new' })).status).toBe(200);

      // Not inherited: the child is unreadable.
      expectError(await api.get(`/v1/namespaces/${child.id}`), 404, 'not_found');
      expectError(await api.post('/v1/evidence', evidenceBody(child.id)), 404, 'not_found');
    });

    it('workspace admins hold admin everywhere in their workspace, without any grant', async () => {
      const t = await team(2, 1);
      const [dave, erin] = t.people as [Team['people'][0], Team['people'][0]];
      const top = await t.ns(null, 'top');
      const deep = await t.ns(await t.ns(top, 'mid'), 'deep');
      // Dave (role admin) holds no grant at all, Erin (role member) neither.
      for (const id of [top.id, deep.id]) {
        expect(await status(dave.api, id)).toBe(200);
        expectError(await erin.api.get(`/v1/namespaces/${id}`), 404, 'not_found');
      }
      expect((await dave.api.post('/v1/memories', memoryBody(deep.id))).status).toBe(200);
      expect((await dave.api.patch(`/v1/namespaces/${deep.id}`, { name: 'renamed' })).status).toBe(200);
      expect((await dave.api.post('/v1/namespaces', { parent_id: null, name: 'root2' })).status).toBe(200);
      // Dave may pass on anything, inherited, since he holds it on every subtree.
      const put = await t.grants(
        top.id,
        [grant(erin.human.actorId, ['read', 'observe', 'verify', 'correct', 'forget', 'admin'], true)],
        dave.api,
      );
      expect(put.status, put.text).toBe(200);
      expect(await status(erin.api, deep.id)).toBe(200);
      // A member cannot create root namespaces even with admin on every existing one.
      expectError(await erin.api.post('/v1/namespaces', { parent_id: null, name: 'root3' }), 403, 'forbidden');
    });

    it('read without observe: readable, but memories.create and evidence.create are forbidden', async () => {
      const t = await team(2);
      const [bob, carol] = t.people as [Team['people'][0], Team['people'][0]];
      const ns = await t.ns(null, 'n');
      const put = await t.grants(ns.id, [
        grant(bob.human.actorId, ['read'], false),
        grant(carol.human.actorId, ['read', 'observe'], false),
      ]);
      expect(put.status, put.text).toBe(200);
      expect(await status(bob.api, ns.id)).toBe(200);
      expectError(await bob.api.post('/v1/memories', memoryBody(ns.id)), 403, 'forbidden', 'memories.create');
      expectError(await bob.api.post('/v1/evidence', evidenceBody(ns.id)), 403, 'forbidden', 'evidence.create');
      expectError(await bob.api.patch(`/v1/namespaces/${ns.id}`, { name: 'x' }), 403, 'forbidden', 'update');
      expectError(await t.grants(ns.id, [], bob.api), 403, 'forbidden', 'grants.put');
      // Carol, with observe, may.
      expect((await carol.api.post('/v1/memories', memoryBody(ns.id))).status).toBe(200);
      expect((await carol.api.post('/v1/evidence', evidenceBody(ns.id))).status).toBe(200);
      // And bob's failed attempts wrote nothing: his grant is still in place.
      expect(await status(bob.api, ns.id)).toBe(200);
    });
  });

  describe('putting grants', () => {
    it('a namespace admin without inheritance may not grant inherit:true, but may grant non-inherit', async () => {
      const t = await team(2);
      const [bob, carol] = t.people as [Team['people'][0], Team['people'][0]];
      const ns = await t.ns(null, 'n');
      const child = await t.ns(ns, 'child');
      const own = grant(bob.human.actorId, ['admin'], false);
      expect((await t.grants(ns.id, [own])).status).toBe(200);

      for (const caps of [['read'], ['admin']] as Capability[][]) {
        const broader = await t.grants(ns.id, [own, grant(carol.human.actorId, caps, true)], bob.api);
        expectError(broader, 403, 'forbidden', `inherit ${caps}`);
        expect(broader.body.error.message).toBe('This operation is not permitted.');
      }
      // Not even for himself.
      expectError(await t.grants(ns.id, [grant(bob.human.actorId, ['admin'], true)], bob.api), 403, 'forbidden');
      // Nothing changed.
      expectError(await carol.api.get(`/v1/namespaces/${ns.id}`), 404, 'not_found');
      expectError(await bob.api.get(`/v1/namespaces/${child.id}`), 404, 'not_found');

      const narrow = await t.grants(ns.id, [own, grant(carol.human.actorId, ['read', 'observe'], false)], bob.api);
      expect(narrow.status, narrow.text).toBe(200);
      expect(narrow.body.grants).toEqual([own, grant(carol.human.actorId, ['read', 'observe'], false)]);
      expect(await status(carol.api, ns.id)).toBe(200);
      expect(await status(carol.api, child.id)).toBe(404);
      expect(await status(bob.api, ns.id)).toBe(200);
    });

    it('inherited grants may pass on exactly what the caller holds on the whole subtree', async () => {
      const t = await team(2);
      const [bob, carol] = t.people as [Team['people'][0], Team['people'][0]];
      const parent = await t.ns(null, 'parent');
      const ns = await t.ns(parent, 'n');
      const below = await t.ns(ns, 'below');
      await t.grants(parent.id, [grant(bob.human.actorId, ['read'], true)]);
      const own = grant(bob.human.actorId, ['admin'], false);
      await t.grants(ns.id, [own]);

      // Bob holds read on the subtree (from parent), admin only on ns itself.
      expectError(
        await t.grants(ns.id, [own, grant(carol.human.actorId, ['observe'], true)], bob.api),
        403,
        'forbidden',
      );
      expectError(
        await t.grants(ns.id, [own, grant(carol.human.actorId, ['read', 'observe'], true)], bob.api),
        403,
        'forbidden',
      );
      const ok = await t.grants(
        ns.id,
        [own, grant(carol.human.actorId, ['read'], true), grant(t.owner.actorId, ['observe'], false)],
        bob.api,
      );
      expect(ok.status, ok.text).toBe(200);
      expect(await status(carol.api, below.id)).toBe(200);

      // With admin inherited from the parent, anything may be passed on below it.
      await t.grants(parent.id, [grant(bob.human.actorId, ['admin'], true)]);
      const wide = await t.grants(below.id, [grant(carol.human.actorId, ['admin', 'read'], true)], bob.api);
      expect(wide.status, wide.text).toBe(200);
    });

    it('targets must be members of the workspace; installations, credentials and duplicates are invalid_input', async () => {
      const t = await team(1);
      const [bob] = t.people as [Team['people'][0]];
      const ns = await t.ns(null, 'n');
      expect((await t.grants(ns.id, [grant(bob.human.actorId, ['read'], false)])).status).toBe(200);
      const stranger = await h.human({ enroll: true }); // an actor, but not a member
      const elsewhere = await h.workspace(); // a member of another workspace

      const invalid: [string, unknown[]][] = [
        ['an actor that is no member', [grant(stranger.actorId, ['read'], false)]],
        ['the admin of another workspace', [grant(elsewhere.owner.actorId, ['read'], false)]],
        ['an actor that does not exist', [grant(`act_${'q'.repeat(24)}`, ['read'], false)]],
        [
          'an installation',
          [
            {
              target: { kind: 'installation', product_installation_id: 'pi_abc' },
              capabilities: ['read'],
              inherit: false,
            },
          ],
        ],
        [
          'a credential',
          [{ target: { kind: 'credential', credential_id: 'cred_abc' }, capabilities: ['read'], inherit: false }],
        ],
        [
          'a duplicate target',
          [grant(bob.human.actorId, ['read'], false), grant(bob.human.actorId, ['observe'], true)],
        ],
        [
          'a valid grant next to an invalid one',
          [grant(bob.human.actorId, ['read', 'observe'], false), grant(stranger.actorId, ['read'], false)],
        ],
        ['a capability listed twice', [grant(bob.human.actorId, ['read', 'read'], false)]],
        ['an unknown capability', [{ ...grant(bob.human.actorId, ['read'], false), capabilities: ['write'] }]],
      ];
      for (const [why, grants] of invalid) expectError(await t.grants(ns.id, grants), 400, 'invalid_input', why);

      // None of them changed anything: bob still reads but cannot observe; the stranger sees nothing.
      expect(await status(bob.api, ns.id)).toBe(200);
      expectError(await bob.api.post('/v1/memories', memoryBody(ns.id)), 403, 'forbidden');
      expect((await (await stranger.api(t.ws)).get(`/v1/namespaces/${ns.id}`)).status).toBe(404);

      // A removed member is no longer a valid target.
      await t.admin.put(`/v1/workspaces/${t.ws}/members`, { members: [{ actor_id: t.owner.actorId, role: 'admin' }] });
      expectError(await t.grants(ns.id, [grant(bob.human.actorId, ['read'], false)]), 400, 'invalid_input', 'removed');
    });

    it('replaces the list: omitted grants are revoked for the very next request', async () => {
      const t = await team(2);
      const [bob, carol] = t.people as [Team['people'][0], Team['people'][0]];
      const top = await t.ns(null, 'top');
      const child = await t.ns(top, 'child');
      const memory = (await t.admin.post('/v1/memories', memoryBody(child.id))).body.memory;
      const both = [grant(bob.human.actorId, ['read'], true), grant(carol.human.actorId, ['read', 'observe'], true)];
      const first = await t.grants(top.id, both);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ namespace_id: top.id, grants: both, commit: expect.any(Object) });
      expect((await bob.api.get(`/v1/memories/${memory.id}`)).status).toBe(200);
      expect(await status(bob.api, child.id)).toBe(200);

      const onlyCarol = await t.grants(top.id, [both[1]]);
      expect(onlyCarol.status).toBe(200);
      expect(onlyCarol.body.grants).toEqual([both[1]]);
      expect(onlyCarol.body.commit.sequence).toBeGreaterThan(first.body.commit.sequence);
      expectError(await bob.api.get(`/v1/memories/${memory.id}`), 404, 'not_found', 'bob after revocation');
      expectError(await bob.api.get(`/v1/namespaces/${top.id}`), 404, 'not_found');
      expectError(await bob.api.get(`/v1/namespaces/${child.id}`), 404, 'not_found');
      expect((await bob.api.get('/v1/namespaces')).body.namespaces).toEqual([]);
      expect((await carol.api.get(`/v1/memories/${memory.id}`)).status).toBe(200);

      // Narrowing a grant takes effect at once too.
      await t.grants(top.id, [grant(carol.human.actorId, ['read'], true)]);
      expectError(await carol.api.post('/v1/memories', memoryBody(child.id)), 403, 'forbidden');

      const none = await t.grants(top.id, []);
      expect(none.status).toBe(200);
      expect(none.body.grants).toEqual([]);
      expectError(await carol.api.get(`/v1/namespaces/${child.id}`), 404, 'not_found');
    });
  });

  describe('reading grants (namespaces.grants.list)', () => {
    it('answers the stored list in the order put, the shape put answers, and empty before any put', async () => {
      const t = await team(2);
      const [bob, carol] = t.people as [Team['people'][0], Team['people'][0]];
      const top = await t.ns(null, 'top');
      const empty = await t.admin.get(`/v1/namespaces/${top.id}/grants`);
      expect(empty.status, empty.text).toBe(200);
      expect(empty.body).toEqual({ namespace_id: top.id, grants: [] });

      const list = [grant(carol.human.actorId, ['read', 'observe'], false), grant(bob.human.actorId, ['admin'], true)];
      const put = await t.grants(top.id, list);
      expect(put.status, put.text).toBe(200);
      const read = await t.admin.get(`/v1/namespaces/${top.id}/grants`);
      expect(read.status, read.text).toBe(200);
      expect(read.body).toEqual({ namespace_id: put.body.namespace_id, grants: put.body.grants });

      // The safe edit: read the list, change it, put the whole list back.
      const changed = [
        ...read.body.grants.filter((g: { target: { actor_id?: string } }) => g.target.actor_id !== carol.human.actorId),
      ];
      expect((await t.grants(top.id, changed)).status).toBe(200);
      expect((await t.admin.get(`/v1/namespaces/${top.id}/grants`)).body.grants).toEqual([list[1]]);
    });

    it('is admin-only: a reader is forbidden, an unreadable or absent namespace is not_found', async () => {
      const t = await team(2);
      const [bob, carol] = t.people as [Team['people'][0], Team['people'][0]];
      const top = await t.ns(null, 'top');
      const child = await t.ns(top, 'child');
      await t.grants(top.id, [grant(bob.human.actorId, ['read', 'observe', 'verify', 'correct', 'forget'], true)]);
      expectError(await bob.api.get(`/v1/namespaces/${top.id}/grants`), 403, 'forbidden', 'reader');
      expectError(await bob.api.get(`/v1/namespaces/${child.id}/grants`), 403, 'forbidden', 'reader below');
      expectError(await carol.api.get(`/v1/namespaces/${top.id}/grants`), 404, 'not_found', 'no grant');
      expectError(await t.admin.get('/v1/namespaces/ns_absent/grants'), 404, 'not_found', 'absent');

      // admin on the namespace itself (not inherited) is enough there, and nowhere below.
      await t.grants(top.id, [grant(carol.human.actorId, ['admin'], false)]);
      const own = await carol.api.get(`/v1/namespaces/${top.id}/grants`);
      expect(own.status, own.text).toBe(200);
      expect(own.body.grants).toEqual([grant(carol.human.actorId, ['admin'], false)]);
      expectError(await carol.api.get(`/v1/namespaces/${child.id}/grants`), 404, 'not_found', 'below');
    });
  });

  describe('namespaces.list', () => {
    // Created in this order; display-path order differs (and `alpha-x` sorts after the whole
    // `alpha` subtree although "alpha-x" < "alpha/..." as plain strings).
    const CREATION: [string, string | null][] = [
      ['zulu', null],
      ['alpha', null],
      ['bravo', 'zulu'],
      ['mike', null],
      ['yankee', 'alpha'],
      ['alpha-x', null],
      ['charlie', 'alpha'],
      ['echo', 'zulu/bravo'],
      ['able', 'zulu'],
    ];
    const ALL_IN_ORDER = [
      'alpha',
      'alpha/charlie',
      'alpha/yankee',
      'alpha-x',
      'mike',
      'zulu',
      'zulu/able',
      'zulu/bravo',
      'zulu/bravo/echo',
    ];
    const BOBS = ['alpha', 'alpha/charlie', 'zulu', 'zulu/able', 'zulu/bravo', 'zulu/bravo/echo'];

    type Ns = { id: string; parent_id: string | null; display_path: string[]; workspace_id: string };
    const pathOf = (n: Ns) => n.display_path.join('/');

    async function tree() {
      const t = await team(1);
      const [bob] = t.people as [Team['people'][0]];
      const byPath = new Map<string, Ns>();
      for (const [name, parent] of CREATION) {
        const created = (await t.ns(parent ? (byPath.get(parent) as Ns) : null, name)) as unknown as Ns;
        byPath.set(pathOf(created), created);
      }
      const id = (path: string) => (byPath.get(path) as Ns).id;
      await t.grants(id('zulu'), [grant(bob.human.actorId, ['read'], true)]);
      await t.grants(id('alpha'), [grant(bob.human.actorId, ['read'], false)]);
      await t.grants(id('alpha/charlie'), [grant(bob.human.actorId, ['read'], false)]);
      await t.grants(id('mike'), [grant(bob.human.actorId, ['observe'], false)]); // not readable
      return { t, bob, id, byPath };
    }

    async function walk(api: ApiClient, query: Record<string, string | number>) {
      const pages: string[][] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 50; i += 1) {
        const res = await api.get('/v1/namespaces', { query: { ...query, cursor } });
        expect(res.status, res.text).toBe(200);
        pages.push(res.body.namespaces.map(pathOf));
        cursor = res.body.next_cursor ?? undefined;
        if (!cursor) break;
      }
      return pages;
    }

    it('lists exactly the readable namespaces, in display-path order', async () => {
      const { t, bob, id, byPath } = await tree();
      const all = await t.admin.get('/v1/namespaces');
      expect(all.status).toBe(200);
      expect(all.body.namespaces.map(pathOf)).toEqual(ALL_IN_ORDER);
      expect(all.body.next_cursor).toBeNull();
      // Each item is the full Namespace, as created.
      const echo = all.body.namespaces.find((n: Ns) => pathOf(n) === 'zulu/bravo/echo');
      expect(echo).toEqual(byPath.get('zulu/bravo/echo'));
      expect(echo.parent_id).toBe(id('zulu/bravo'));
      expect(echo.workspace_id).toBe(t.ws);

      const mine = await bob.api.get('/v1/namespaces');
      expect(mine.status).toBe(200);
      expect(mine.body.namespaces.map(pathOf)).toEqual(BOBS);
      expect(mine.body.next_cursor).toBeNull();
    });

    it('with parent_id lists only that parent’s readable children; an unreadable parent is not_found', async () => {
      const { t, bob, id } = await tree();
      const children = async (api: ApiClient, parent: string) => {
        const res = await api.get('/v1/namespaces', { query: { parent_id: id(parent) } });
        expect(res.status, `${parent}: ${res.text}`).toBe(200);
        return res.body.namespaces.map(pathOf);
      };
      expect(await children(t.admin, 'alpha')).toEqual(['alpha/charlie', 'alpha/yankee']);
      expect(await children(bob.api, 'alpha')).toEqual(['alpha/charlie']);
      expect(await children(bob.api, 'zulu')).toEqual(['zulu/able', 'zulu/bravo']);
      expect(await children(bob.api, 'zulu/bravo')).toEqual(['zulu/bravo/echo']);
      expect(await children(bob.api, 'alpha/charlie')).toEqual([]);
      for (const hidden of ['mike', 'alpha-x', 'alpha/yankee']) {
        expectError(
          await bob.api.get('/v1/namespaces', { query: { parent_id: id(hidden) } }),
          404,
          'not_found',
          hidden,
        );
      }
    });

    it('pages with limit=1 through every readable namespace; a cursor is bound to its listing', async () => {
      const { t, bob, id } = await tree();
      const pages = await walk(bob.api, { limit: 1 });
      expect(pages).toEqual(BOBS.map((p) => [p]));
      expect((await walk(bob.api, { limit: 4 })).flat()).toEqual(BOBS);
      expect((await walk(t.admin, { limit: 2 })).flat()).toEqual(ALL_IN_ORDER);
      const childPages = await walk(bob.api, { limit: 1, parent_id: id('zulu') });
      expect(childPages).toEqual([['zulu/able'], ['zulu/bravo']]);

      // A cursor of the children listing is refused by the full listing, and the reverse.
      const childCursor = (await bob.api.get('/v1/namespaces', { query: { limit: 1, parent_id: id('zulu') } })).body
        .next_cursor;
      const fullCursor = (await bob.api.get('/v1/namespaces', { query: { limit: 1 } })).body.next_cursor;
      expect(typeof childCursor).toBe('string');
      expect(typeof fullCursor).toBe('string');
      expectError(await bob.api.get('/v1/namespaces', { query: { cursor: childCursor } }), 400, 'invalid_input');
      expectError(
        await bob.api.get('/v1/namespaces', { query: { cursor: fullCursor, parent_id: id('zulu') } }),
        400,
        'invalid_input',
      );
      expectError(
        await bob.api.get('/v1/namespaces', { query: { cursor: childCursor, parent_id: id('alpha') } }),
        400,
        'invalid_input',
      );
      // A cursor of another workspace's listing, a tampered one, garbage.
      const other = await team(0);
      await other.ns(null, 'a');
      await other.ns(null, 'b');
      const foreign = (await other.admin.get('/v1/namespaces', { query: { limit: 1 } })).body.next_cursor;
      expect(typeof foreign).toBe('string');
      expectError(await t.admin.get('/v1/namespaces', { query: { cursor: foreign } }), 400, 'invalid_input', 'foreign');
      const flip = (c: string) => (c === 'A' ? 'B' : 'A');
      const forged = `${fullCursor.slice(0, 5)}${flip(fullCursor[5])}${fullCursor.slice(6)}`;
      expect(forged).not.toBe(fullCursor);
      expectError(await bob.api.get('/v1/namespaces', { query: { cursor: forged } }), 400, 'invalid_input', 'forged');
      expectError(
        await bob.api.get('/v1/namespaces', { query: { cursor: 'garbage' } }),
        400,
        'invalid_input',
        'garbage',
      );
    });
  });
});

// The operator CLI reads and replaces grants, so a credential it issues can be granted without
// the API. It opens the ledger itself: Postgres, beside the running gateway.
describe('svc admin grant list / put (postgres)', { timeout: 300_000 }, () => {
  let h: Harness;
  let cliEnv: Record<string, string>;
  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
    cliEnv = { DATABASE_URL: h.database?.url ?? '', USER: 'ops-test' };
  });
  afterAll(() => h?.close());

  const svc = async (args: string[]) => {
    const run = await runSvc(args, cliEnv);
    expect(run.code, `svc ${args.join(' ')}: ${run.stderr}`).toBe(0);
    return run.stdout.trim();
  };

  it('grants a CLI-issued service key a namespace, reads the list back and replaces it from a file', async () => {
    const { id: ws, api: admin } = await h.workspace();
    const ns = (await admin.post('/v1/namespaces', { parent_id: null, name: 'agents' })).body.namespace.id as string;
    const secret = await svc([
      'admin',
      'service-key',
      'issue',
      '--workspace',
      ws,
      '--name',
      'agent',
      '--capabilities',
      'read,observe',
    ]);
    const keyId = `cred_${secret.slice(7, 31)}`;
    const job = new ApiClient(h.url).as(secret);
    expectError(await job.get(`/v1/namespaces/${ns}`), 404, 'not_found', 'before the grant');

    const scope = ['--workspace', ws, '--namespace', ns];
    expect(JSON.parse(await svc(['admin', 'grant', 'list', ...scope]))).toEqual([]);
    const granted = [
      { target: { kind: 'credential', credential_id: keyId }, capabilities: ['read', 'observe'], inherit: true },
    ];
    const put = await runSvc(['admin', 'grant', 'put', ...scope, '--grants', JSON.stringify(granted)], cliEnv);
    expect(put.code, put.stderr).toBe(0);
    expect(JSON.parse(put.stdout)).toEqual(granted);
    // It says what the put did: here it added one grant and revoked none.
    expect(cliLines(put.stderr).join('\n')).toMatch(
      new RegExp(
        `^${ns} has 1 grant: added credential ${keyId} \\(read, observe, inherited by the subtree\\) \\(commit \\d+\\)$`,
      ),
    );
    expect((await job.get(`/v1/namespaces/${ns}`)).status).toBe(200);
    expect((await admin.get(`/v1/namespaces/${ns}/grants`)).body).toEqual({ namespace_id: ns, grants: granted });
    expect(JSON.parse(await svc(['admin', 'grant', 'list', ...scope]))).toEqual(granted);

    // Read, change, put the whole list back: here from a file, as the REST body shape.
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tms-grants-')), 'grants.json');
    const narrowed = [{ ...granted[0], capabilities: ['read'] }];
    fs.writeFileSync(file, JSON.stringify({ grants: narrowed }));
    expect(JSON.parse(await svc(['admin', 'grant', 'put', ...scope, '--grants', file]))).toEqual(narrowed);
    expectError(
      await job.post('/v1/memories', { namespace_id: ns, kind: 'claim', text: 'x', valid_from: 0 }),
      403,
      'forbidden',
      'observe was left out',
    );
  });

  it('refuses bad grants with exit 2 and the usage, an absent namespace with not_found', async () => {
    const { id: ws, api: admin } = await h.workspace();
    const ns = (await admin.post('/v1/namespaces', { parent_id: null, name: 'n' })).body.namespace.id as string;
    const scope = ['--workspace', ws, '--namespace', ns];
    for (const bad of [
      '[{',
      '/no/such/grants.json',
      '[{"target":{"kind":"actor","actor_id":"act_x"},"capabilities":["root"],"inherit":true}]',
    ]) {
      const run = await runSvc(['admin', 'grant', 'put', ...scope, '--grants', bad], cliEnv);
      expect(run.code, `${bad}: ${run.stderr}`).toBe(2);
      expect(cliLines(run.stderr)[0]).toMatch(/^svc: invalid_input/);
      expect(run.stderr).toContain('Usage: svc admin grant put');
    }
    const absent = await runSvc(['admin', 'grant', 'list', '--workspace', ws, '--namespace', 'ns_absent'], cliEnv);
    expect(absent.code).toBe(1);
    expect(cliLines(absent.stderr)).toEqual([expect.stringMatching(/^svc: not_found/)]);
    expect((await admin.get(`/v1/namespaces/${ns}/grants`)).body.grants).toEqual([]);
  });
});
