import { z } from 'zod';
import { defineOperation } from './operation';
import { changesList } from './operations-changes';
import {
  credentialsCreate,
  credentialsList,
  credentialsRevoke,
  installationsCreate,
  installationsList,
  installationsRevoke,
} from './operations-credentials';
import { ledgerHead, ledgerProof } from './operations-ledger';
import { evidenceForget, memoriesAttest, memoriesCorrect, memoriesForget, memoriesList } from './operations-lifecycle';
import { recall } from './operations-recall';
import { webhooksCreate, webhooksDelete, webhooksList } from './operations-webhooks';
import {
  boundedText,
  capabilitySchema,
  commitSchema,
  cursorSchema,
  distinctIds,
  distinctList,
  idSchema,
  memoryKeySchema,
  memoryKindSchema,
  nameSchema,
  pageLimitSchema,
  sha256Schema,
  timestampSchema,
  workspaceIdSchema,
} from './primitives';
import {
  actorSchema,
  callerKindSchema,
  evidenceSchema,
  grantSchema,
  memberSchema,
  memorySchema,
  memoryViewSchema,
  namespaceSchema,
  nextCursorSchema,
  revisionSchema,
  verdictSchema,
  verificationSchema,
  workspaceSchema,
} from './resources';

const none = z.strictObject({});
const idParams = z.strictObject({ id: idSchema });
const pageQuery = { limit: pageLimitSchema, cursor: cursorSchema.optional() };

export const workspacesList = defineOperation({
  name: 'workspaces.list',
  summary: 'List the workspaces the caller belongs to, and whether it may create one.',
  method: 'GET',
  path: '/v1/workspaces',
  tool: 'svc_workspaces_list',
  scope: 'svc:read',
  capability: null,
  idempotent: false,
  workspace: 'directory',
  maxItems: 100,
  mutates: false,
  input: { params: none, query: z.strictObject(pageQuery), body: null },
  output: z.strictObject({
    workspaces: z.array(workspaceSchema).max(100),
    next_cursor: nextCursorSchema,
    enrollment: z.strictObject({
      can_create_workspace: z.boolean(),
      policy: z.literal('admin_managed_pilot'),
    }),
  }),
});

export const workspacesCreate = defineOperation({
  name: 'workspaces.create',
  summary: 'Create a workspace; the enrolled human caller becomes its first admin.',
  method: 'POST',
  path: '/v1/workspaces',
  tool: 'svc_workspaces_create',
  scope: null,
  capability: null,
  idempotent: true,
  workspace: 'directory',
  maxItems: 1,
  mutates: true,
  input: { params: none, query: none, body: z.strictObject({ name: nameSchema }) },
  output: z.strictObject({ workspace: workspaceSchema }),
});

export const workspacesMembersPut = defineOperation({
  name: 'workspaces.members.put',
  summary: 'Replace the member list of a workspace (workspace admins only).',
  method: 'PUT',
  path: '/v1/workspaces/{id}/members',
  tool: 'svc_workspaces_members_put',
  scope: 'svc:admin',
  capability: 'workspace_admin',
  idempotent: true,
  workspace: 'path',
  maxItems: 100,
  mutates: true,
  input: {
    params: z.strictObject({ id: workspaceIdSchema }),
    query: none,
    body: z.strictObject({
      members: z
        .array(memberSchema)
        .max(100)
        .refine((ms) => new Set(ms.map((m) => m.actor_id)).size === ms.length, { message: 'duplicate actor' }),
    }),
  },
  output: z.strictObject({
    workspace_id: idSchema,
    members: z.array(memberSchema).max(100),
    commit: commitSchema,
  }),
});

export const meGet = defineOperation({
  name: 'me.get',
  summary: 'Who the server resolved the caller to: actor, caller kind, workspace and scopes.',
  method: 'GET',
  path: '/v1/me',
  tool: 'svc_me_get',
  scope: null,
  capability: null,
  idempotent: false,
  workspace: 'directory',
  maxItems: 1,
  mutates: false,
  input: { params: none, query: none, body: null },
  output: z.strictObject({
    actor: actorSchema,
    caller_kind: callerKindSchema,
    workspace_id: idSchema.nullable(),
    scopes: z.array(z.string()),
  }),
});

export const namespacesList = defineOperation({
  name: 'namespaces.list',
  summary: 'List readable namespaces by display path, or the readable children of parent_id.',
  method: 'GET',
  path: '/v1/namespaces',
  tool: 'svc_namespaces_list',
  scope: 'svc:read',
  capability: 'read',
  idempotent: false,
  workspace: 'selected',
  maxItems: 100,
  mutates: false,
  input: { params: none, query: z.strictObject({ ...pageQuery, parent_id: idSchema.optional() }), body: null },
  output: z.strictObject({ namespaces: z.array(namespaceSchema).max(100), next_cursor: nextCursorSchema }),
});

export const namespacesCreate = defineOperation({
  name: 'namespaces.create',
  summary: 'Create a namespace at the root (workspace admins) or under a parent (admin on the parent).',
  method: 'POST',
  path: '/v1/namespaces',
  tool: 'svc_namespaces_create',
  scope: 'svc:admin',
  capability: 'admin',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: {
    params: none,
    query: none,
    body: z.strictObject({ parent_id: idSchema.nullable(), name: nameSchema }),
  },
  output: z.strictObject({ namespace: namespaceSchema, commit: commitSchema }),
});

export const namespacesGet = defineOperation({
  name: 'namespaces.get',
  summary: 'Read one namespace.',
  method: 'GET',
  path: '/v1/namespaces/{id}',
  tool: 'svc_namespaces_get',
  scope: 'svc:read',
  capability: 'read',
  idempotent: false,
  workspace: 'selected',
  maxItems: 1,
  mutates: false,
  input: { params: idParams, query: none, body: null },
  output: z.strictObject({ namespace: namespaceSchema }),
});

export const namespacesUpdate = defineOperation({
  name: 'namespaces.update',
  summary: 'Rename a namespace.',
  method: 'PATCH',
  path: '/v1/namespaces/{id}',
  tool: 'svc_namespaces_update',
  scope: 'svc:admin',
  capability: 'admin',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: { params: idParams, query: none, body: z.strictObject({ name: nameSchema }) },
  output: z.strictObject({ namespace: namespaceSchema, commit: commitSchema }),
});

export const namespacesGrantsList = defineOperation({
  name: 'namespaces.grants.list',
  summary: 'Read the grants on a namespace, in their stored order (admins of the namespace only).',
  method: 'GET',
  path: '/v1/namespaces/{id}/grants',
  tool: 'svc_namespaces_grants_list',
  scope: 'svc:read',
  capability: 'admin',
  idempotent: false,
  workspace: 'selected',
  maxItems: 100,
  mutates: false,
  input: { params: idParams, query: none, body: null },
  output: z.strictObject({
    namespace_id: idSchema,
    grants: z.array(grantSchema).max(100),
  }),
});

export const namespacesGrantsPut = defineOperation({
  name: 'namespaces.grants.put',
  summary: 'Replace the grants on a namespace; omitted grants are revoked at once.',
  method: 'PUT',
  path: '/v1/namespaces/{id}/grants',
  tool: 'svc_namespaces_grants_put',
  scope: 'svc:admin',
  capability: 'admin',
  idempotent: true,
  workspace: 'selected',
  maxItems: 100,
  mutates: true,
  input: {
    params: idParams,
    query: none,
    body: z.strictObject({
      grants: z
        .array(
          grantSchema.extend({
            capabilities: distinctList(capabilitySchema, 0, 6),
          }),
        )
        .max(100),
    }),
  },
  output: z.strictObject({
    namespace_id: idSchema,
    grants: z.array(grantSchema).max(100),
    commit: commitSchema,
  }),
});

export const evidenceCreate = defineOperation({
  name: 'evidence.create',
  summary: 'Record an exact source excerpt; deduplicated per namespace by its SHA-256.',
  method: 'POST',
  path: '/v1/evidence',
  tool: 'svc_evidence_create',
  scope: 'svc:observe',
  capability: 'observe',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: {
    params: none,
    query: none,
    body: z.strictObject({
      namespace_id: idSchema,
      source_locator: boundedText(1, 2048),
      content_root_sha256: sha256Schema,
      excerpt: boundedText(1, 65536),
    }),
  },
  output: z.strictObject({ evidence: evidenceSchema, commit: commitSchema }),
});

export const evidenceGet = defineOperation({
  name: 'evidence.get',
  summary: 'Read evidence with a page of its verifications (oldest first, 32 a page).',
  method: 'GET',
  path: '/v1/evidence/{id}',
  tool: 'svc_evidence_get',
  scope: 'svc:read',
  capability: 'read',
  idempotent: false,
  workspace: 'selected',
  maxItems: 1,
  mutates: false,
  input: { params: idParams, query: z.strictObject({ cursor: cursorSchema.optional() }), body: null },
  output: z.strictObject({
    evidence: evidenceSchema,
    verifications: z.array(verificationSchema).max(32),
    next_cursor: nextCursorSchema,
  }),
});

export const evidenceVerify = defineOperation({
  name: 'evidence.verify',
  summary: 'Record a verdict on evidence after comparing both expected hashes with the ledger.',
  method: 'POST',
  path: '/v1/evidence/{id}/verifications',
  tool: 'svc_evidence_verify',
  scope: 'svc:verify',
  capability: 'verify',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: {
    params: idParams,
    query: none,
    body: z.strictObject({
      expected_content_root_sha256: sha256Schema,
      expected_excerpt_sha256: sha256Schema,
      verdict: verdictSchema,
    }),
  },
  output: z.strictObject({ verification: verificationSchema, commit: commitSchema }),
});

export const memoriesCreate = defineOperation({
  name: 'memories.create',
  summary: 'Create a memory with its first revision (asserted when verified evidence backs it).',
  method: 'POST',
  path: '/v1/memories',
  tool: 'svc_memories_create',
  scope: 'svc:observe',
  capability: 'observe',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: {
    params: none,
    query: none,
    body: z
      .strictObject({
        namespace_id: idSchema,
        kind: memoryKindSchema,
        text: boundedText(1, 32768),
        valid_from: timestampSchema,
        valid_to: timestampSchema.nullable().default(null),
        evidence_ids: distinctIds(0, 32).default([]),
        support_revision_ids: distinctIds(0, 32).default([]),
        // Optional, not nullable with a default: a create without a key keeps the idempotency
        // fingerprint it had before keys existed.
        key: memoryKeySchema.optional(),
      })
      .refine((b) => b.valid_to === null || b.valid_to > b.valid_from, {
        message: 'valid_to must be after valid_from',
        path: ['valid_to'],
      }),
  },
  output: z.strictObject({ memory: memorySchema, revision: revisionSchema, commit: commitSchema }),
});

export const memoriesGet = defineOperation({
  name: 'memories.get',
  summary: 'Read a memory as it held at as_of and as the service knew it at known_at.',
  method: 'GET',
  path: '/v1/memories/{id}',
  tool: 'svc_memories_get',
  scope: 'svc:read',
  capability: 'read',
  idempotent: false,
  workspace: 'selected',
  maxItems: 1,
  mutates: false,
  input: {
    params: idParams,
    query: z.strictObject({
      as_of: timestampSchema.optional(),
      known_at: timestampSchema.optional(),
      include_evidence: z.boolean().default(false),
    }),
    body: null,
  },
  output: z.strictObject({ view: memoryViewSchema, as_of: timestampSchema, known_at: timestampSchema }),
});

export const memoriesHistory = defineOperation({
  name: 'memories.history',
  summary: 'List the revisions of a memory, newest generation first, as known at known_at.',
  method: 'GET',
  path: '/v1/memories/{id}/history',
  tool: 'svc_memories_history',
  scope: 'svc:read',
  capability: 'read',
  idempotent: false,
  workspace: 'selected',
  maxItems: 100,
  mutates: false,
  input: {
    params: idParams,
    query: z.strictObject({ ...pageQuery, known_at: timestampSchema.optional() }),
    body: null,
  },
  output: z.strictObject({ revisions: z.array(revisionSchema).max(100), next_cursor: nextCursorSchema }),
});

/** Every operation, in the order of the spec's Endpoints table followed by decisions §3. */
export const OPERATIONS = [
  workspacesList,
  workspacesCreate,
  namespacesList,
  namespacesCreate,
  namespacesGet,
  namespacesUpdate,
  namespacesGrantsPut,
  evidenceCreate,
  evidenceGet,
  evidenceVerify,
  memoriesCreate,
  memoriesGet,
  memoriesHistory,
  meGet,
  workspacesMembersPut,
  memoriesList,
  memoriesAttest,
  memoriesCorrect,
  memoriesForget,
  evidenceForget,
  recall,
  installationsList,
  installationsCreate,
  installationsRevoke,
  credentialsList,
  credentialsCreate,
  credentialsRevoke,
  changesList,

  webhooksList,
  webhooksCreate,
  webhooksDelete,
  namespacesGrantsList,
  ledgerHead,
  ledgerProof,
] as const;

export type Operation = (typeof OPERATIONS)[number];
export type OperationName = Operation['name'];

export const OPERATIONS_BY_NAME = new Map<string, Operation>(OPERATIONS.map((op) => [op.name, op]));
