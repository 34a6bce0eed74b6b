import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fieldDescription } from '../src/descriptions';
import {
  evidenceCreate,
  memoriesCreate,
  namespacesGrantsPut,
  namespacesList,
  OPERATIONS,
  workspacesMembersPut,
} from '../src/operations';
import { memoriesList } from '../src/operations-lifecycle';
import {
  idSchema,
  MIN_TIMESTAMP,
  nameSchema,
  sha256Schema,
  TIMESTAMP_LIMIT,
  timestampProblem,
  timestampSchema,
} from '../src/primitives';

interface Row {
  name: string;
  method: string;
  path: string;
  tool: string;
  scope: string | null;
  capability: string | null;
  idempotent: boolean;
  maxItems: number;
}

/**
 * interface.md, Endpoints: the thirteen operations. "none"/"none listed" become null. The
 * scope of memories.history is "not shown beyond read requirement": the catalog fixes svc:read.
 * Max items: 100 for list operations and grants put, 1 otherwise.
 */
const INTERFACE_ENDPOINTS: Row[] = [
  row('workspaces.list', 'GET /v1/workspaces', 'svc_workspaces_list', 'svc:read', null, false, 100),
  row('workspaces.create', 'POST /v1/workspaces', 'svc_workspaces_create', null, null, true, 1),
  row('namespaces.list', 'GET /v1/namespaces', 'svc_namespaces_list', 'svc:read', 'read', false, 100),
  row('namespaces.create', 'POST /v1/namespaces', 'svc_namespaces_create', 'svc:admin', 'admin', true, 1),
  row('namespaces.get', 'GET /v1/namespaces/{id}', 'svc_namespaces_get', 'svc:read', 'read', false, 1),
  row('namespaces.update', 'PATCH /v1/namespaces/{id}', 'svc_namespaces_update', 'svc:admin', 'admin', true, 1),
  row(
    'namespaces.grants.put',
    'PUT /v1/namespaces/{id}/grants',
    'svc_namespaces_grants_put',
    'svc:admin',
    'admin',
    true,
    100,
  ),
  row('evidence.create', 'POST /v1/evidence', 'svc_evidence_create', 'svc:observe', 'observe', true, 1),
  row('evidence.get', 'GET /v1/evidence/{id}', 'svc_evidence_get', 'svc:read', 'read', false, 1),
  row(
    'evidence.verify',
    'POST /v1/evidence/{id}/verifications',
    'svc_evidence_verify',
    'svc:verify',
    'verify',
    true,
    1,
  ),
  row('memories.create', 'POST /v1/memories', 'svc_memories_create', 'svc:observe', 'observe', true, 1),
  row('memories.get', 'GET /v1/memories/{id}', 'svc_memories_get', 'svc:read', 'read', false, 1),
  row('memories.history', 'GET /v1/memories/{id}/history', 'svc_memories_history', 'svc:read', 'read', false, 100),
];

/** decisions.md §3: the two operations that belong with the core. */
const DECISIONS_CORE: Row[] = [
  row('me.get', 'GET /v1/me', 'svc_me_get', null, null, false, 1),
  row(
    'workspaces.members.put',
    'PUT /v1/workspaces/{id}/members',
    'svc_workspaces_members_put',
    'svc:admin',
    'workspace_admin',
    true,
    100,
  ),
];

/** decisions.md §3: the memory lifecycle and recall; checked when the catalog has them. */
const DECISIONS_LIFECYCLE: Row[] = [
  row('memories.list', 'GET /v1/memories', 'svc_memories_list', 'svc:read', 'read', false, 100),
  row('memories.attest', 'POST /v1/memories/{id}/attestations', 'svc_memories_attest', 'svc:verify', 'verify', true, 1),
  row(
    'memories.correct',
    'POST /v1/memories/{id}/corrections',
    'svc_memories_correct',
    'svc:correct',
    'correct',
    true,
    1,
  ),
  row('memories.forget', 'POST /v1/memories/{id}/forget', 'svc_memories_forget', 'svc:forget', 'forget', true, 1),
  row('evidence.forget', 'POST /v1/evidence/{id}/forget', 'svc_evidence_forget', 'svc:forget', 'forget', true, 1),
  row('recall', 'POST /v1/recall', 'svc_recall', 'svc:read', 'read', false, 100),
];

/**
 * Issuance and revocation of installation credentials and service keys (interface
 * Authentication 12 leaves them "not shown"; docs/semantics.md fixes them): workspace admins only.
 */
const CREDENTIAL_ADMIN: Row[] = [
  row(
    'installations.list',
    'GET /v1/installations',
    'svc_installations_list',
    'svc:admin',
    'workspace_admin',
    false,
    100,
  ),
  row(
    'installations.create',
    'POST /v1/installations',
    'svc_installations_create',
    'svc:admin',
    'workspace_admin',
    true,
    1,
  ),
  row(
    'installations.revoke',
    'POST /v1/installations/{id}/revoke',
    'svc_installations_revoke',
    'svc:admin',
    'workspace_admin',
    true,
    1,
  ),
  row('credentials.list', 'GET /v1/credentials', 'svc_credentials_list', 'svc:admin', 'workspace_admin', false, 100),
  row('credentials.create', 'POST /v1/credentials', 'svc_credentials_create', 'svc:admin', 'workspace_admin', true, 1),
  row(
    'credentials.revoke',
    'POST /v1/credentials/{id}/revoke',
    'svc_credentials_revoke',
    'svc:admin',
    'workspace_admin',
    true,
    1,
  ), // decisions §10: webhooks.
  row('webhooks.list', 'GET /v1/webhooks', 'svc_webhooks_list', 'svc:admin', 'workspace_admin', false, 100),
  row('webhooks.create', 'POST /v1/webhooks', 'svc_webhooks_create', 'svc:admin', 'workspace_admin', true, 1),
  row('webhooks.delete', 'DELETE /v1/webhooks/{id}', 'svc_webhooks_delete', 'svc:admin', 'workspace_admin', true, 1),
];

/** Issue 29: the grants on a namespace are readable by its admins, beside their replacement. */
const GRANT_READS: Row[] = [
  row(
    'namespaces.grants.list',
    'GET /v1/namespaces/{id}/grants',
    'svc_namespaces_grants_list',
    'svc:read',
    'admin',
    false,
    100,
  ),
];

/** Issue 32: the ledger's hash chain (docs/ledger-proofs.md). */
const LEDGER_PROOFS: Row[] = [
  row('ledger.head', 'GET /v1/ledger/head', 'svc_ledger_head', 'svc:read', null, false, 1),
  row('ledger.proof', 'GET /v1/ledger/proofs/{id}', 'svc_ledger_proof', 'svc:read', 'read', false, 1),
];

/** decisions.md §10: the change feed. */
const CHANGE_FEED: Row[] = [row('changes.list', 'GET /v1/changes', 'svc_changes_list', 'svc:read', 'read', false, 100)];

function row(
  name: string,
  methodAndPath: string,
  tool: string,
  scope: string | null,
  capability: string | null,
  idempotent: boolean,
  maxItems: number,
): Row {
  const [method, path] = methodAndPath.split(' ') as [string, string];
  return { name, method, path, tool, scope, capability, idempotent, maxItems };
}

function actual(name: string): Row | undefined {
  const op = OPERATIONS.find((o) => o.name === name);
  if (!op) return undefined;
  const { method, path, tool, scope, capability, idempotent, maxItems } = op;
  return { name, method, path, tool, scope, capability, idempotent, maxItems };
}

function dupes(values: string[]): string[] {
  return values.filter((v, i) => values.indexOf(v) !== i);
}

describe('catalog identity', () => {
  it('names, tool names and method+path pairs are unique', () => {
    expect(dupes(OPERATIONS.map((op) => op.name))).toEqual([]);
    expect(dupes(OPERATIONS.map((op) => op.tool))).toEqual([]);
    expect(dupes(OPERATIONS.map((op) => `${op.method} ${op.path}`))).toEqual([]);
  });

  it('tool names are svc_ + the name with dots as underscores', () => {
    for (const op of OPERATIONS) expect(op.tool).toBe(`svc_${op.name.replace(/\./g, '_')}`);
  });

  it.each(
    [
      ...INTERFACE_ENDPOINTS,
      ...DECISIONS_CORE,
      ...CREDENTIAL_ADMIN,
      ...CHANGE_FEED,
      ...GRANT_READS,
      ...LEDGER_PROOFS,
    ].map((r) => [r.name, r] as const),
  )('core operation %s matches the spec', (name, expected) => {
    expect(actual(name)).toEqual(expected);
  });

  it.each(DECISIONS_LIFECYCLE.map((r) => [r.name, r] as const))(
    'lifecycle operation %s matches if present',
    (name, expected) => {
      const found = actual(name);
      if (found) expect(found).toEqual(expected);
    },
  );

  it('has no operation the spec does not list', () => {
    const known = new Set(
      [
        ...INTERFACE_ENDPOINTS,
        ...DECISIONS_CORE,
        ...DECISIONS_LIFECYCLE,
        ...CREDENTIAL_ADMIN,
        ...CHANGE_FEED,
        ...GRANT_READS,
        ...LEDGER_PROOFS,
      ].map((r) => r.name),
    );
    expect(OPERATIONS.map((op) => op.name).filter((n) => !known.has(n))).toEqual([]);
  });

  it('writes are exactly the idempotent operations; workspace sources follow the spec', () => {
    for (const op of OPERATIONS) expect(op.mutates, op.name).toBe(op.idempotent);
    const directory = OPERATIONS.filter((op) => op.workspace === 'directory').map((op) => op.name);
    expect(directory.sort()).toEqual(['me.get', 'workspaces.create', 'workspaces.list']);
    expect(OPERATIONS.filter((op) => op.workspace === 'path').map((op) => op.name)).toEqual(['workspaces.members.put']);
  });
});

describe('field descriptions', () => {
  it('every input field of every operation has one sentence (agents read them in tools/list)', () => {
    const missing: string[] = [];
    for (const op of OPERATIONS) {
      for (const part of [op.input.params, op.input.query, op.input.body]) {
        for (const field of Object.keys(part?.shape ?? {})) {
          const description = fieldDescription(op, field);
          if (!description || !/^\S[^\n]*\.$/.test(description) || description.length > 200)
            missing.push(`${op.name}.${field}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

const ok = (schema: z.ZodType, value: unknown) => expect(schema.safeParse(value).success).toBe(true);
const bad = (schema: z.ZodType, value: unknown) => expect(schema.safeParse(value).success).toBe(false);

const HASH = 'a'.repeat(64);
const GRINNING = '\u{1F600}'; // one code point, two UTF-16 code units
const ids = (n: number, prefix = 'id') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

const memoryBody = memoriesCreate.input.body;
const memory = (over: Record<string, unknown>) => ({
  namespace_id: 'ns_1',
  kind: 'claim',
  text: 'Ana prefers tea.',
  valid_from: 1700000000,
  ...over,
});
const evidenceBody = evidenceCreate.input.body;
const evidence = (over: Record<string, unknown>) => ({
  namespace_id: 'ns_1',
  source_locator: 'chat://demo/1',
  content_root_sha256: HASH,
  excerpt: 'Ana prefers tea.',
  ...over,
});
const grantsBody = namespacesGrantsPut.input.body;
const grant = (capabilities: string[], n = 0) => ({
  target: { kind: 'actor', actor_id: `act_${n}` },
  capabilities,
  inherit: true,
});

describe('bounds', () => {
  it('ids: 1-200 chars, pattern', () => {
    ok(idSchema, 'a'.repeat(200));
    bad(idSchema, 'a'.repeat(201));
    bad(idSchema, '');
    ok(idSchema, 'A0._:-z');
    bad(idSchema, '-abc');
    bad(idSchema, '.abc');
    bad(idSchema, 'a b');
    bad(idSchema, 'a/b');
    bad(idSchema, `a${GRINNING}`);
  });

  it('names: 1-160 code points, astral characters count as one', () => {
    ok(nameSchema, 'n'.repeat(160));
    bad(nameSchema, 'n'.repeat(161));
    ok(nameSchema, GRINNING.repeat(160));
    bad(nameSchema, GRINNING.repeat(161));
    ok(nameSchema, `${GRINNING.repeat(80)}${'n'.repeat(80)}`);
    bad(nameSchema, '');
    bad(nameSchema, '\uD800');
    bad(nameSchema, 'abc\uDFFF');
  });

  it('evidence excerpt: 1-65536 code points', () => {
    ok(evidenceBody, evidence({ excerpt: 'e'.repeat(65536) }));
    bad(evidenceBody, evidence({ excerpt: 'e'.repeat(65537) }));
    ok(evidenceBody, evidence({ excerpt: GRINNING.repeat(65536) }));
    bad(evidenceBody, evidence({ excerpt: GRINNING.repeat(65537) }));
    bad(evidenceBody, evidence({ excerpt: '' }));
  });

  it('source_locator: 1-2048', () => {
    ok(evidenceBody, evidence({ source_locator: 's'.repeat(2048) }));
    bad(evidenceBody, evidence({ source_locator: 's'.repeat(2049) }));
    bad(evidenceBody, evidence({ source_locator: '' }));
  });

  it('memory text: 1-32768', () => {
    ok(memoryBody, memory({ text: 't'.repeat(32768) }));
    bad(memoryBody, memory({ text: 't'.repeat(32769) }));
    ok(memoryBody, memory({ text: GRINNING.repeat(32768) }));
    bad(memoryBody, memory({ text: GRINNING.repeat(32769) }));
    bad(memoryBody, memory({ text: '' }));
  });

  it('sha256: 64 lowercase hex digits', () => {
    ok(sha256Schema, HASH);
    ok(sha256Schema, '0123456789abcdef'.repeat(4));
    bad(sha256Schema, 'A'.repeat(64));
    bad(sha256Schema, `${'a'.repeat(63)}F`);
    bad(sha256Schema, 'a'.repeat(63));
    bad(sha256Schema, 'a'.repeat(65));
    bad(sha256Schema, 'g'.repeat(64));
    bad(evidenceBody, evidence({ content_root_sha256: HASH.toUpperCase() }));
  });

  it('text: a lone surrogate is refused, U+0000 is accepted', () => {
    bad(memoryBody, memory({ text: 'tea \uD83D' }));
    bad(memoryBody, memory({ text: '\uDE00 tea' }));
    bad(evidenceBody, evidence({ excerpt: 'x\uD800y' }));
    ok(memoryBody, memory({ text: 'tea\u0000cake' }));
    ok(memoryBody, memory({ text: '\u0000' }));
    ok(evidenceBody, evidence({ excerpt: '\u0000' }));
  });

  it('memory key: optional, 1-256 code points, no control character (Cc), no lone surrogate; the list filter alike', () => {
    ok(memoryBody, memory({}));
    expect(memoryBody.parse(memory({}))).not.toHaveProperty('key');
    ok(memoryBody, memory({ key: 'k'.repeat(256) }));
    ok(memoryBody, memory({ key: GRINNING.repeat(256) }));
    ok(memoryBody, memory({ key: 'crm:contact/42 \u2013 Ana \u200b\u00a0\u00e9' }));
    bad(memoryBody, memory({ key: '' }));
    bad(memoryBody, memory({ key: null }));
    bad(memoryBody, memory({ key: 'k'.repeat(257) }));
    bad(memoryBody, memory({ key: GRINNING.repeat(257) }));
    for (const control of ['\u0000', '\u0009', '\u000a', '\u001f', '\u007f', '\u0080', '\u009f']) {
      bad(memoryBody, memory({ key: `a${control}b` }));
    }
    bad(memoryBody, memory({ key: 'a\uD83D' }));
    bad(memoryBody, memory({ key: '\uDE00a' }));
    const listQuery = memoriesList.input.query;
    ok(listQuery, { namespace_id: 'ns_1', key: 'crm:1' });
    bad(listQuery, { namespace_id: 'ns_1', key: 'a\u0000' });
    bad(listQuery, { namespace_id: 'ns_1', key: '' });
  });

  it('evidence_ids: up to 32, no duplicates', () => {
    ok(memoryBody, memory({ evidence_ids: ids(32) }));
    bad(memoryBody, memory({ evidence_ids: ids(33) }));
    bad(memoryBody, memory({ evidence_ids: ['e1', 'e1'] }));
    ok(memoryBody, memory({ support_revision_ids: ids(32) }));
    bad(memoryBody, memory({ support_revision_ids: ids(33) }));
    const parsed = memoryBody.parse(memory({}));
    expect(parsed.evidence_ids).toEqual([]);
    expect(parsed.support_revision_ids).toEqual([]);
    expect(parsed.valid_to).toBeNull();
  });

  it('grants: up to 100 per put; up to 6 capabilities per grant, no duplicates', () => {
    const all = ['read', 'observe', 'verify', 'correct', 'forget', 'admin'];
    ok(grantsBody, { grants: Array.from({ length: 100 }, (_, i) => grant(['read'], i)) });
    bad(grantsBody, { grants: Array.from({ length: 101 }, (_, i) => grant(['read'], i)) });
    ok(grantsBody, { grants: [grant(all)] });
    bad(grantsBody, { grants: [grant([...all, 'read'])] });
    bad(grantsBody, { grants: [grant(['read', 'read'])] });
    bad(grantsBody, { grants: [grant(['write'])] });
    ok(grantsBody, { grants: [] });
  });

  it('members: up to 100, unique actors, workspace id path starts ws_', () => {
    const body = workspacesMembersPut.input.body;
    const members = (n: number) => ids(n, 'act_').map((actor_id) => ({ actor_id, role: 'member' }));
    ok(body, { members: members(100) });
    bad(body, { members: members(101) });
    bad(body, { members: [...members(1), ...members(1)] });
    ok(workspacesMembersPut.input.params, { id: 'ws_1' });
    bad(workspacesMembersPut.input.params, { id: 'wsx' });
  });

  it('page limit: 1-100, default 50, integers only', () => {
    const query = namespacesList.input.query;
    expect(query.parse({}).limit).toBe(50);
    for (const limit of [1, 50, 100]) ok(query, { limit });
    for (const limit of [0, 101, 1.5, -1]) bad(query, { limit });
    bad(query, { unknown: 'x' });
  });

  it('timestamps: Unix seconds in the years 0001-9999 (fractions, negatives); anything else refused', () => {
    const lastInstant = TIMESTAMP_LIMIT - 2 ** -15; // the largest double below the limit
    for (const t of [0, -1, 1700000000.123456, 2 ** -40, MIN_TIMESTAMP, lastInstant, 253402300799]) {
      ok(timestampSchema, t);
      ok(memoryBody, memory({ valid_from: t }));
    }
    const refused = [TIMESTAMP_LIMIT, MIN_TIMESTAMP - 0.001, 1e15, -1e15, Date.now(), Number.MAX_VALUE];
    for (const t of [...refused, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN, '1', null]) {
      bad(timestampSchema, t);
      bad(memoryBody, memory({ valid_from: t }));
    }
  });

  it('an out-of-range time says seconds are expected, and hints at milliseconds when it reads as one', () => {
    const detail = (t: number) => {
      const result = timestampSchema.safeParse(t);
      return result.success ? null : result.error.issues[0]?.message;
    };
    expect(detail(Date.now())).toBe('must be Unix seconds between year 0001 and 9999 (got a value in milliseconds?)');
    expect(detail(-1e15)).toBe('must be Unix seconds between year 0001 and 9999');
    expect(timestampProblem(TIMESTAMP_LIMIT - 1)).toBeNull();
    // The bounds reach OpenAPI, and so the generated client.
    expect(z.toJSONSchema(timestampSchema)).toMatchObject({
      minimum: MIN_TIMESTAMP,
      exclusiveMaximum: TIMESTAMP_LIMIT,
    });
  });

  it('valid_to must be after valid_from (half-open interval)', () => {
    ok(memoryBody, memory({ valid_from: 10, valid_to: 10.5 }));
    ok(memoryBody, memory({ valid_from: 10, valid_to: null }));
    bad(memoryBody, memory({ valid_from: 10, valid_to: 10 }));
    bad(memoryBody, memory({ valid_from: 10, valid_to: 9 }));
    bad(memoryBody, memory({ valid_from: -1, valid_to: -2 }));
  });

  it('request bodies refuse unknown fields', () => {
    bad(memoryBody, memory({ extra: true }));
    bad(evidenceBody, evidence({ excerpt_sha256: HASH }));
  });
});
