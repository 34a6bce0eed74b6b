import crypto from 'node:crypto';
import { CAPABILITIES, OPERATIONS, type OperationSpec } from '@tms/catalog';
import { ApiClient, type CallResult, freshKey, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, type Human, startHarness } from './harness';

/**
 * The caller matrix: every caller kind (human session, OAuth access token, installation
 * credential, service key) against every catalog operation, with the expected answer of each
 * cell taken from the rule table below (never from the implementation):
 *
 *   1. A token that lacks the operation's scope is `403 forbidden` (sessions are not
 *      scope-limited; a credential's scopes are `svc:<cap>` for each capability of its ceiling,
 *      all six when the ceiling holds `admin`; an OAuth token without a `scope` claim has
 *      `svc:read svc:observe`).
 *   2. `workspaces.create` needs a human session of an enrolled actor: any other caller is
 *      `403 forbidden`, a session of an actor who is not enrolled `403 enrollment_required`.
 *      `me.get` and `workspaces.list` need nothing more than a valid token (and rule 1).
 *   3. Workspace-admin operations (members, installations, credentials, and root namespaces)
 *      are for members with role admin only; credentials are never workspace admins: else `403`.
 *   4. On an addressed namespace the caller holds the union of the grants on it and the
 *      `inherit` grants on its ancestors (`admin` implies all; workspace admins hold admin
 *      everywhere); a credential holds its own grants and its installation's, cut to its
 *      capability ceiling and its namespace ceiling. Not readable: `404 not_found`; readable
 *      without the capability: `403 forbidden`.
 *
 * Each cell runs against targets of its own (a fresh memory for each forget, a fresh
 * installation for each revoke, ...) so that no cell can change what a later one sees.
 */

type Cap = 'read' | 'observe' | 'verify' | 'correct' | 'forget' | 'admin';
type Scope = `svc:${Cap}`;
type CallerKind = 'session' | 'oauth' | 'installation' | 'service_key';

const CAPS: Cap[] = ['read', 'observe', 'verify', 'correct', 'forget', 'admin'];
/** The capabilities below admin. */
const PLAIN_CAPS: Cap[] = ['read', 'observe', 'verify', 'correct', 'forget'];
const ALL_SCOPES: Scope[] = CAPS.map((c) => `svc:${c}` as const);

// ---------------------------------------------------------------------------------------------
// Callers

/** Which grants reach the namespace a cell addresses. */
type GrantCase =
  /** Grants carrying read and the cell's capability (to the actor, installation or key). */
  | 'exact'
  /** Grants carrying every capability below admin except the cell's one. */
  | 'others'
  /** Installation credentials: read and the cell's capability granted to the credential itself. */
  | 'direct'
  /** No grant at all. */
  | 'none';

interface CallerCase {
  kind: CallerKind;
  /** For sessions and OAuth tokens: the workspace admin (the owner) or a plain member. */
  who?: 'owner' | 'member';
  grant: GrantCase;
  /** OAuth tokens: exactly the operation's scope, every scope but it, or no `scope` claim. */
  tokenScope?: 'exact' | 'others' | 'absent';
  /**
   * Credentials: the capability ceiling is read + the cell's capability (`exact`), the cell's
   * capability alone (`only`: grants reach no further, so read is cut away), or every
   * capability below admin but the cell's (`lacks`).
   */
  ceiling?: 'exact' | 'only' | 'lacks';
  /** Credentials: the namespace ceiling is a namespace other than the addressed one. */
  namespaceCeilingElsewhere?: boolean;
}

const CALLERS: CallerCase[] = [
  { kind: 'session', who: 'owner', grant: 'none' },
  { kind: 'session', who: 'member', grant: 'exact' },
  { kind: 'session', who: 'member', grant: 'others' },
  { kind: 'session', who: 'member', grant: 'none' },
  { kind: 'oauth', who: 'owner', grant: 'none', tokenScope: 'exact' },
  { kind: 'oauth', who: 'owner', grant: 'none', tokenScope: 'others' },
  { kind: 'oauth', who: 'owner', grant: 'none', tokenScope: 'absent' },
  { kind: 'oauth', who: 'member', grant: 'exact', tokenScope: 'exact' },
  { kind: 'oauth', who: 'member', grant: 'others', tokenScope: 'exact' },
  { kind: 'installation', grant: 'exact', ceiling: 'exact' },
  { kind: 'installation', grant: 'others', ceiling: 'exact' },
  { kind: 'installation', grant: 'none', ceiling: 'exact' },
  { kind: 'installation', grant: 'exact', ceiling: 'lacks' },
  { kind: 'installation', grant: 'exact', ceiling: 'only' },
  { kind: 'installation', grant: 'exact', ceiling: 'exact', namespaceCeilingElsewhere: true },
  { kind: 'installation', grant: 'direct', ceiling: 'exact' },
  { kind: 'service_key', grant: 'exact', ceiling: 'exact' },
  { kind: 'service_key', grant: 'others', ceiling: 'exact' },
  { kind: 'service_key', grant: 'none', ceiling: 'exact' },
  { kind: 'service_key', grant: 'exact', ceiling: 'lacks' },
  { kind: 'service_key', grant: 'exact', ceiling: 'only' },
];

const exactCaps = (need: Cap): Cap[] => (need === 'read' ? ['read'] : ['read', need]);
const otherCaps = (need: Cap): Cap[] => PLAIN_CAPS.filter((c) => c !== need);
const expand = (caps: readonly Cap[]): Set<Cap> => new Set(caps.includes('admin') ? CAPS : caps);
const isWorkspaceAdmin = (c: CallerCase) => (c.kind === 'session' || c.kind === 'oauth') && c.who === 'owner';
function ceilingOf(c: CallerCase, need: Cap): Cap[] {
  if (c.ceiling === 'lacks') return otherCaps(need);
  return c.ceiling === 'only' ? [need] : exactCaps(need);
}

function grantedCaps(grant: GrantCase, need: Cap): Cap[] {
  if (grant === 'none') return [];
  return grant === 'others' ? otherCaps(need) : exactCaps(need);
}

function callerLabel(c: CallerCase, op: OperationSpec, need: Cap): string {
  const list = (caps: readonly string[]) => `[${caps.join(' ')}]`;
  const granted =
    c.grant === 'none'
      ? 'no grant'
      : `${c.grant === 'direct' ? 'credential' : c.kind === 'installation' ? 'installation' : 'grant'} ${list(grantedCaps(c.grant, need))}`;
  switch (c.kind) {
    case 'session':
    case 'oauth': {
      const role = c.who === 'owner' ? 'workspace admin' : 'member';
      const scopes =
        c.kind === 'oauth'
          ? ` scopes ${c.tokenScope === 'absent' ? '(no claim)' : list(scopesOf(c, op, need) ?? [])}`
          : '';
      return `${c.kind} ${role}${scopes}, ${granted}`;
    }
    default: {
      const where = c.namespaceCeilingElsewhere ? ' on another namespace only' : '';
      return `${c.kind} ceiling ${list(ceilingOf(c, need))}${where}, ${granted}`;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The rule table

type Rule =
  /** Only a human session of an enrolled actor. */
  | 'enrolled_session'
  /** Any valid token. */
  | 'authenticated'
  /** Any caller with standing in the workspace (members and its credentials). */
  | 'workspace'
  /** Members with role admin. */
  | 'workspace_admin'
  /** The capability on the addressed namespace. */
  | { on: 'namespace'; capability: Cap };

interface Outcome {
  status: number;
  code?: string;
}

const OK: Outcome = { status: 200 };
const FORBIDDEN: Outcome = { status: 403, code: 'forbidden' };
const NOT_FOUND: Outcome = { status: 404, code: 'not_found' };
const ENROLLMENT_REQUIRED: Outcome = { status: 403, code: 'enrollment_required' };

/** The scopes the caller's token carries in a cell; null when it is not scope-limited. */
function scopesOf(c: CallerCase, op: OperationSpec, need: Cap): Scope[] | null {
  switch (c.kind) {
    case 'session':
      return null;
    case 'oauth':
      if (c.tokenScope === 'absent') return ['svc:read', 'svc:observe'];
      if (c.tokenScope === 'others') return ALL_SCOPES.filter((s) => s !== op.scope);
      return op.scope ? [op.scope as Scope] : [];
    default:
      return [...expand(ceilingOf(c, need))].map((cap) => `svc:${cap}` as const);
  }
}

/** What the caller holds on the namespace a cell addresses. */
function heldOn(c: CallerCase, need: Cap): Set<Cap> {
  if (isWorkspaceAdmin(c)) return new Set(CAPS);
  let held = expand(grantedCaps(c.grant, need));
  if (c.kind === 'installation' || c.kind === 'service_key') {
    const ceiling = expand(ceilingOf(c, need));
    held = new Set([...held].filter((cap) => ceiling.has(cap)));
    if (c.namespaceCeilingElsewhere) held = new Set();
  }
  return held;
}

function expected(c: CallerCase, v: Variant): Outcome {
  const op = operation(v);
  const need = needOf(v);
  const scopes = scopesOf(c, op, need);
  if (op.scope !== null && scopes !== null && !scopes.includes(op.scope as Scope)) return FORBIDDEN;
  const rule = ruleOf(v);
  if (rule === 'enrolled_session') {
    if (c.kind !== 'session') return FORBIDDEN;
    return c.who === 'owner' ? OK : ENROLLMENT_REQUIRED; // the owner is enrolled, the member is not
  }
  if (rule === 'authenticated' || rule === 'workspace') return OK;
  if (rule === 'workspace_admin') return isWorkspaceAdmin(c) ? OK : FORBIDDEN;
  const held = heldOn(c, need);
  if (!held.has('read')) return NOT_FOUND;
  if (!held.has(rule.capability)) return FORBIDDEN;
  return OK;
}

function ruleOf(v: Variant): Rule {
  if (v.rule) return v.rule;
  const op = operation(v);
  if (op.name === 'workspaces.create') return 'enrolled_session';
  if (op.capability === null) return 'authenticated';
  if (op.capability === 'workspace_admin') return 'workspace_admin';
  return { on: 'namespace', capability: op.capability };
}

/** The capability a cell turns on: the operation's own, admin for workspace-admin rules, else its scope's. */
function needOf(v: Variant): Cap {
  const rule = ruleOf(v);
  if (typeof rule === 'object') return rule.capability;
  if (rule === 'workspace_admin') return 'admin';
  const scope = operation(v).scope;
  return scope ? (scope.slice(4) as Cap) : 'read';
}

const describeOutcome = (o: Outcome) => (o.code ? `${o.status} ${o.code}` : `${o.status}`);

// ---------------------------------------------------------------------------------------------
// One request per operation (and a second where one operation has two rules)

interface Request {
  /** The `{id}` path parameter. */
  id?: string;
  query?: Record<string, string | number | boolean>;
  body?: unknown;
}

interface Variant {
  op: string;
  /** A qualifier when one operation has more than one request. */
  qualifier?: string;
  /** Overrides the rule the catalog entry implies. */
  rule?: Rule;
  /** A valid request (creating what it needs with the admin) addressing `place` where it addresses a namespace. */
  prepare(w: World, place: string): Promise<Request>;
}

const none = async (): Promise<Request> => ({});

const VARIANTS: Variant[] = [
  { op: 'workspaces.list', prepare: none },
  { op: 'workspaces.create', prepare: async () => ({ body: { name: 'matrix' } }) },
  { op: 'me.get', prepare: none },
  {
    op: 'workspaces.members.put',
    // The full member list, unchanged, so no later cell loses its standing.
    prepare: async (w) => ({ id: w.ws, body: { members: w.members } }),
  },
  {
    op: 'namespaces.list',
    qualifier: 'parent_id',
    prepare: async (_w, place) => ({ query: { parent_id: place } }),
  },
  {
    op: 'namespaces.list',
    qualifier: 'whole workspace',
    // Without parent_id nothing is addressed: it lists what the caller may read.
    rule: 'workspace',
    prepare: none,
  },
  {
    op: 'namespaces.create',
    qualifier: 'under a parent',
    prepare: async (_w, place) => ({ body: { parent_id: place, name: 'child' } }),
  },
  {
    op: 'namespaces.create',
    qualifier: 'root',
    rule: 'workspace_admin',
    prepare: async () => ({ body: { parent_id: null, name: 'root' } }),
  },
  { op: 'namespaces.get', prepare: async (_w, place) => ({ id: place }) },
  {
    op: 'namespaces.update',
    prepare: async (w, place) => ({ id: await w.make.namespace(place), body: { name: 'renamed' } }),
  },
  { op: 'namespaces.grants.list', prepare: async (w, place) => ({ id: await w.make.namespace(place) }) },
  {
    op: 'namespaces.grants.put',
    prepare: async (w, place) => ({ id: await w.make.namespace(place), body: { grants: [] } }),
  },
  { op: 'evidence.create', prepare: async (_w, place) => ({ body: evidenceBody(place) }) },
  { op: 'evidence.get', prepare: async (w, place) => ({ id: (await w.make.evidence(place)).id }) },
  {
    op: 'evidence.verify',
    prepare: async (w, place) => {
      const ev = await w.make.evidence(place);
      return {
        id: ev.id,
        body: {
          expected_content_root_sha256: ev.content_root_sha256,
          expected_excerpt_sha256: ev.excerpt_sha256,
          verdict: 'verified',
        },
      };
    },
  },
  { op: 'evidence.forget', prepare: async (w, place) => ({ id: (await w.make.evidence(place)).id, body: {} }) },
  { op: 'memories.create', prepare: async (_w, place) => ({ body: memoryBody(place) }) },
  { op: 'memories.get', prepare: async (w, place) => ({ id: await w.make.memory(place) }) },
  { op: 'memories.history', prepare: async (w, place) => ({ id: await w.make.memory(place) }) },
  { op: 'memories.list', prepare: async (_w, place) => ({ query: { namespace_id: place } }) },
  { op: 'changes.list', prepare: async (_w, place) => ({ query: { namespace_id: place } }) },
  {
    op: 'memories.attest',
    prepare: async (w, place) => {
      const ev = await w.make.evidence(place);
      const memory = await w.make.memory(place);
      const verification = await w.make.verification(ev);
      return {
        id: memory,
        body: { expected_generation: 1, evidence_ids: [ev.id], verification_ids: [verification] },
      };
    },
  },
  {
    op: 'memories.correct',
    prepare: async (w, place) => ({
      id: await w.make.memory(place),
      body: { expected_generation: 1, text: 'Ana prefers green tea.' },
    }),
  },
  {
    op: 'memories.forget',
    prepare: async (w, place) => ({
      id: await w.make.memory(place),
      body: { mode: 'retract', expected_generation: 1 },
    }),
  },
  {
    op: 'recall',
    prepare: async (_w, place) => ({
      body: { namespace_ids: [place], query: 'tea', budget: { max_context_chars: 10000 } },
    }),
  },
  { op: 'installations.list', prepare: none },
  { op: 'installations.create', prepare: async () => ({ body: { name: 'matrix-app' } }) },
  { op: 'installations.revoke', prepare: async (w) => ({ id: await w.make.installation(), body: {} }) },
  { op: 'credentials.list', prepare: none },
  {
    op: 'credentials.create',
    prepare: async () => ({ body: { kind: 'service_key', name: 'matrix-key', capabilities: ['read'] } }),
  },
  { op: 'credentials.revoke', prepare: async (w) => ({ id: await w.make.serviceKey(), body: {} }) },
  { op: 'webhooks.list', prepare: none },
  { op: 'webhooks.create', prepare: async () => ({ body: { url: 'https://hooks.example.com/matrix' } }) },
  { op: 'webhooks.delete', prepare: async (w) => ({ id: await w.make.webhook() }) },
  // The head names no namespace: any caller with standing in the workspace may keep it.
  { op: 'ledger.head', rule: 'workspace', prepare: none },
  { op: 'ledger.proof', prepare: async (w, place) => ({ id: (await w.make.evidence(place)).id }) },
];

const CATALOG = new Map<string, OperationSpec>(OPERATIONS.map((op) => [op.name, op as OperationSpec]));

function operation(v: Variant): OperationSpec {
  const op = CATALOG.get(v.op);
  if (!op) throw new Error(`the matrix names ${v.op}, which is not in the catalog`);
  return op;
}

const variantLabel = (v: Variant) => (v.qualifier ? `${v.op} (${v.qualifier})` : v.op);

/**
 * Cells that fail because the implementation breaks a rule above, each marked `it.fails`
 * (key: `variant label | caller label`). Empty: every cell holds.
 */
const KNOWN_VIOLATIONS = new Set<string>([]);

// ---------------------------------------------------------------------------------------------
// Request bodies

const rand = () => crypto.randomBytes(4).toString('hex');

function evidenceBody(namespaceId: string) {
  const excerpt = `Ana said she prefers tea (${rand()}).`;
  return {
    namespace_id: namespaceId,
    source_locator: 'chat://matrix/1',
    content_root_sha256: sha256Hex(excerpt),
    excerpt,
  };
}

const memoryBody = (namespaceId: string) => ({
  namespace_id: namespaceId,
  kind: 'claim',
  text: 'Ana prefers tea.',
  valid_from: 1700000000,
});

// ---------------------------------------------------------------------------------------------
// The world every cell addresses

interface Evidence {
  id: string;
  content_root_sha256: string;
  excerpt_sha256: string;
}

interface World {
  ws: string;
  members: { actor_id: string; role: 'admin' | 'member' }[];
  /** Root namespaces, per capability, where the grants of each case reach. */
  places: Record<Exclude<GrantCase, 'none'>, Record<Cap, string>> & { none: string };
  make: {
    namespace(parent: string): Promise<string>;
    evidence(namespaceId: string): Promise<Evidence>;
    verification(evidence: Evidence): Promise<string>;
    memory(namespaceId: string): Promise<string>;
    installation(): Promise<string>;
    serviceKey(): Promise<string>;
    webhook(): Promise<string>;
  };
  client(c: CallerCase, op: OperationSpec, need: Cap): Promise<ApiClient>;
}

async function ok(pending: Promise<CallResult>, what: string) {
  const res = await pending;
  if (res.status !== 200) throw new Error(`setup: ${what} answered ${res.status}: ${res.text}`);
  return res.body;
}

/** The credential a case uses for a capability (shared by cases that differ only in their grants). */
const credentialKey = (c: CallerCase, need: Cap) =>
  [c.kind, c.ceiling, c.namespaceCeilingElsewhere ? 'elsewhere' : 'anywhere', c.grant === 'direct', need].join('/');

async function buildWorld(h: Harness): Promise<World> {
  const { id: ws, owner, api: admin } = await h.workspace();
  const member: Human = await h.human({ enroll: false });
  // An OAuth token comes from another issuer than the session: another actor for the same subject.
  const actorOf = async (token: string) => (await ok(h.api.get('/v1/me', { token }), 'me.get')).actor.id as string;
  const oauthOwner = await actorOf(await h.issuer.accessToken(owner.subject));
  const oauthMember = await actorOf(await h.issuer.accessToken(member.subject));
  expect(new Set([owner.actorId, member.actorId, oauthOwner, oauthMember]).size).toBe(4);
  const members: World['members'] = [
    { actor_id: owner.actorId, role: 'admin' },
    { actor_id: member.actorId, role: 'member' },
    { actor_id: oauthOwner, role: 'admin' },
    { actor_id: oauthMember, role: 'member' },
  ];
  await ok(admin.put(`/v1/workspaces/${ws}/members`, { members }), 'members.put');

  const make: World['make'] = {
    async namespace(parent) {
      const body = await ok(admin.post('/v1/namespaces', { parent_id: parent, name: `n-${rand()}` }), 'namespace');
      return body.namespace.id;
    },
    async evidence(namespaceId) {
      return (await ok(admin.post('/v1/evidence', evidenceBody(namespaceId)), 'evidence')).evidence;
    },
    async verification(ev) {
      const body = await ok(
        admin.post(`/v1/evidence/${ev.id}/verifications`, {
          expected_content_root_sha256: ev.content_root_sha256,
          expected_excerpt_sha256: ev.excerpt_sha256,
          verdict: 'verified',
        }),
        'verification',
      );
      return body.verification.id;
    },
    async memory(namespaceId) {
      return (await ok(admin.post('/v1/memories', memoryBody(namespaceId)), 'memory')).memory.id;
    },
    async installation() {
      return (await ok(admin.post('/v1/installations', { name: `i-${rand()}` }), 'installation')).installation.id;
    },
    async serviceKey() {
      const body = { kind: 'service_key', name: `k-${rand()}`, capabilities: ['read'] };
      return (await ok(admin.post('/v1/credentials', body), 'service key')).credential.id;
    },
    async webhook() {
      const body = { url: `https://hooks.example.com/${rand()}` };
      return (await ok(admin.post('/v1/webhooks', body), 'webhook')).webhook.id;
    },
  };

  const root = async (name: string) =>
    (await ok(admin.post('/v1/namespaces', { parent_id: null, name }), 'root namespace')).namespace.id as string;
  const perCap = async (prefix: string) => {
    const out = {} as Record<Cap, string>;
    for (const cap of CAPS) out[cap] = await root(`${prefix}-${cap}`);
    return out;
  };
  const places: World['places'] = {
    exact: await perCap('exact'),
    others: await perCap('others'),
    direct: await perCap('direct'),
    none: await root('no-grants'),
  };

  // Every credential the cases use, for every capability.
  const installationId = await make.installation();
  const credentials = new Map<string, { id: string; secret: string }>();
  for (const c of CALLERS) {
    if (c.kind !== 'installation' && c.kind !== 'service_key') continue;
    for (const need of CAPS) {
      const key = credentialKey(c, need);
      if (credentials.has(key)) continue;
      const issued = await ok(
        admin.post('/v1/credentials', {
          kind: c.kind,
          ...(c.kind === 'installation' ? { product_installation_id: installationId } : {}),
          name: `matrix ${key}`,
          capabilities: ceilingOf(c, need),
          namespace_ids: c.namespaceCeilingElsewhere ? [places.none] : null,
        }),
        `credential ${key}`,
      );
      credentials.set(key, { id: issued.credential.id, secret: issued.secret });
    }
  }

  // The grants each case relies on, inherited, on the place of each capability.
  const targetOf = (c: CallerCase, need: Cap) => {
    if (c.kind === 'session') return { kind: 'actor', actor_id: member.actorId };
    if (c.kind === 'oauth') return { kind: 'actor', actor_id: oauthMember };
    if (c.kind === 'installation' && c.grant !== 'direct') {
      return { kind: 'installation', product_installation_id: installationId };
    }
    return { kind: 'credential', credential_id: (credentials.get(credentialKey(c, need)) as { id: string }).id };
  };
  for (const grant of ['exact', 'others', 'direct'] as const) {
    for (const need of CAPS) {
      const targets = new Map<string, object>();
      for (const c of CALLERS) {
        if (c.grant !== grant || isWorkspaceAdmin(c)) continue;
        const target = targetOf(c, need);
        targets.set(JSON.stringify(target), target);
      }
      const grants = [...targets.values()].map((target) => ({
        target,
        capabilities: grantedCaps(grant, need),
        inherit: true,
      }));
      await ok(admin.put(`/v1/namespaces/${places[grant][need]}/grants`, { grants }), `grants ${grant} ${need}`);
    }
  }

  return {
    ws,
    members,
    places,
    make,
    async client(c, op, need) {
      switch (c.kind) {
        case 'session':
          return new ApiClient(h.url, await h.issuer.sessionToken((c.who === 'owner' ? owner : member).subject), ws);
        case 'oauth': {
          const scope = c.tokenScope === 'absent' ? null : (scopesOf(c, op, need) ?? []).join(' ');
          const subject = (c.who === 'owner' ? owner : member).subject;
          return new ApiClient(h.url, await h.issuer.accessToken(subject, scope), ws);
        }
        default: {
          const credential = credentials.get(credentialKey(c, need));
          if (!credential) throw new Error(`no credential ${credentialKey(c, need)}`);
          // Bound to its workspace: no selector.
          return new ApiClient(h.url, credential.secret, null);
        }
      }
    },
  };
}

function placeOf(w: World, c: CallerCase, need: Cap): string {
  return c.grant === 'none' ? w.places.none : w.places[c.grant][need];
}

// ---------------------------------------------------------------------------------------------

describe('caller matrix (pglite)', () => {
  let h: Harness;
  let w: World;
  /** Prepared requests of read-only operations, reused per (variant, place). */
  const readRequests = new Map<string, Promise<Request>>();

  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite', env: { RATE_LIMITS: 'off' } });
    w = await buildWorld(h);
  });
  afterAll(() => h?.close());

  it('has a prepared request for every catalog operation, and names no other', () => {
    expect([...CAPABILITIES]).toEqual(CAPS);
    const covered = new Set(VARIANTS.map((v) => v.op));
    expect(
      OPERATIONS.map((op) => op.name).filter((name) => !covered.has(name)),
      'operations without a prepared request',
    ).toEqual([]);
    expect(
      VARIANTS.map((v) => v.op).filter((name) => !CATALOG.has(name)),
      'requests for unknown operations',
    ).toEqual([]);
    expect(new Set(CALLERS.map((c) => c.kind))).toEqual(new Set(['session', 'oauth', 'installation', 'service_key']));
  });

  // The callers are what they claim: kind, workspace and scopes as /v1/me reports them (for a forget cell).
  for (const c of CALLERS) {
    const op = CATALOG.get('memories.forget') as OperationSpec;
    it(`${callerLabel(c, op, 'forget')} is a ${c.kind} caller with the scopes of the table`, async () => {
      const res = await (await w.client(c, op, 'forget')).get('/v1/me');
      expect(res.status, res.text).toBe(200);
      expect(res.body.caller_kind).toBe(c.kind);
      expect(res.body.workspace_id).toBe(w.ws);
      expect([...res.body.scopes].sort()).toEqual([...(scopesOf(c, op, 'forget') ?? ALL_SCOPES)].sort());
    });
  }

  for (const v of VARIANTS) {
    const label = variantLabel(v);
    describe(label, () => {
      for (const c of CALLERS) {
        const op = CATALOG.get(v.op);
        if (!op) continue; // reported by the coverage test
        const need = needOf(v);
        const who = callerLabel(c, op, need);
        const want = expected(c, v);
        const cell = KNOWN_VIOLATIONS.has(`${label} | ${who}`) ? it.fails : it;
        cell(`${who} → ${describeOutcome(want)}`, async () => {
          const place = placeOf(w, c, need);
          let prepared: Promise<Request>;
          if (op.mutates) prepared = v.prepare(w, place);
          else {
            const key = `${label}|${place}`;
            prepared = readRequests.get(key) ?? v.prepare(w, place);
            readRequests.set(key, prepared);
          }
          const request = await prepared;
          expect(op.path.includes('{id}'), `${label}: the {id} parameter`).toBe(request.id !== undefined);
          const path = op.path.replace('{id}', request.id ?? '');
          const client = await w.client(c, op, need);
          const res = await client.call(op.method, path, {
            query: request.query,
            body: request.body,
            idem: op.idempotent ? freshKey('matrix') : null,
          });
          const got: Outcome = res.status === 200 ? OK : { status: res.status, code: res.body?.error?.code };
          expect(got, `${label} as ${who}: expected ${describeOutcome(want)}, got ${res.text.slice(0, 400)}`).toEqual(
            want,
          );
          if (res.status === 200) {
            const parsed = op.output.safeParse(res.body);
            expect(parsed.success, `${label} as ${who}: answer shape ${parsed.error?.message}`).toBe(true);
          }
        });
      }
    });
  }
});
