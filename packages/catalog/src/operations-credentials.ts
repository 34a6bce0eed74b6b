import { z } from 'zod';
import { defineOperation } from './operation';
import {
  capabilitySchema,
  commitSchema,
  cursorSchema,
  distinctIds,
  distinctList,
  idSchema,
  nameSchema,
  pageLimitSchema,
  timestampSchema,
} from './primitives';
import { nextCursorSchema } from './resources';

/**
 * Product installations, their credentials and workspace-bound service keys (interface
 * Authentication 2-5). Issuance and revocation are workspace-admin operations; a secret is
 * shown once, in the answer to `credentials.create`, and never stored or shown again.
 */

export const credentialKindSchema = z.enum(['installation', 'service_key']);

export const installationSchema = z.strictObject({
  id: idSchema,
  workspace_id: idSchema,
  name: nameSchema,
  created_at: timestampSchema,
  revoked_at: timestampSchema.nullable(),
});

export const credentialSchema = z.strictObject({
  id: idSchema,
  workspace_id: idSchema,
  kind: credentialKindSchema,
  /** The installation it belongs to; null for a service key. */
  product_installation_id: idSchema.nullable(),
  name: nameSchema,
  /** The actor its writes are recorded under. */
  actor_id: idSchema,
  /** Ceiling on the capabilities its grants can give it (and its OAuth-style scopes). */
  capabilities: z.array(capabilitySchema).min(1).max(6),
  /** Ceiling on where: these namespaces and their subtrees; null for the whole workspace. */
  namespace_ids: z.array(idSchema).max(32).nullable(),
  expires_at: timestampSchema.nullable(),
  created_at: timestampSchema,
  revoked_at: timestampSchema.nullable(),
});

export type Installation = z.infer<typeof installationSchema>;
export type Credential = z.infer<typeof credentialSchema>;

const idParams = z.strictObject({ id: idSchema });
const pageQuery = { limit: pageLimitSchema, cursor: cursorSchema.optional() };
/** Revoking what is already revoked changes nothing and answers `commit: null`. */
const maybeCommit = commitSchema.nullable();

export const installationsList = defineOperation({
  name: 'installations.list',
  summary: 'List the product installations of the workspace, oldest first (workspace admins only).',
  method: 'GET',
  path: '/v1/installations',
  tool: 'svc_installations_list',
  scope: 'svc:admin',
  capability: 'workspace_admin',
  idempotent: false,
  workspace: 'selected',
  maxItems: 100,
  mutates: false,
  input: { params: z.strictObject({}), query: z.strictObject(pageQuery), body: null },
  output: z.strictObject({ installations: z.array(installationSchema).max(100), next_cursor: nextCursorSchema }),
});

export const installationsCreate = defineOperation({
  name: 'installations.create',
  summary: 'Install a product into the workspace; grants may then target it (workspace admins only).',
  method: 'POST',
  path: '/v1/installations',
  tool: 'svc_installations_create',
  scope: 'svc:admin',
  capability: 'workspace_admin',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: { params: z.strictObject({}), query: z.strictObject({}), body: z.strictObject({ name: nameSchema }) },
  output: z.strictObject({ installation: installationSchema, commit: commitSchema }),
});

export const installationsRevoke = defineOperation({
  name: 'installations.revoke',
  summary: 'Revoke an installation and every credential issued for it, effective on the next request.',
  method: 'POST',
  path: '/v1/installations/{id}/revoke',
  tool: 'svc_installations_revoke',
  scope: 'svc:admin',
  capability: 'workspace_admin',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: { params: idParams, query: z.strictObject({}), body: z.strictObject({}) },
  output: z.strictObject({ installation: installationSchema, commit: maybeCommit }),
});

export const credentialsList = defineOperation({
  name: 'credentials.list',
  summary: 'List installation credentials and service keys of the workspace (never their secrets).',
  method: 'GET',
  path: '/v1/credentials',
  tool: 'svc_credentials_list',
  scope: 'svc:admin',
  capability: 'workspace_admin',
  idempotent: false,
  workspace: 'selected',
  maxItems: 100,
  mutates: false,
  input: {
    params: z.strictObject({}),
    query: z.strictObject({ ...pageQuery, product_installation_id: idSchema.optional() }),
    body: null,
  },
  output: z.strictObject({ credentials: z.array(credentialSchema).max(100), next_cursor: nextCursorSchema }),
});

export const credentialsCreate = defineOperation({
  name: 'credentials.create',
  summary:
    'Issue an installation credential or a service key; the answer shows its secret this once (workspace admins only).',
  method: 'POST',
  path: '/v1/credentials',
  tool: 'svc_credentials_create',
  scope: 'svc:admin',
  capability: 'workspace_admin',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  revealsSecret: true,
  input: {
    params: z.strictObject({}),
    query: z.strictObject({}),
    body: z.strictObject({
      kind: credentialKindSchema,
      /** Required for `installation`, absent for `service_key`. */
      product_installation_id: idSchema.optional(),
      name: nameSchema,
      capabilities: distinctList(capabilitySchema, 1, 6),
      namespace_ids: distinctIds(1, 32).nullable().default(null),
      expires_at: timestampSchema.nullable().default(null),
    }),
  },
  output: z.strictObject({
    credential: credentialSchema,
    /** The bearer secret: shown in this answer only; a replay of the request answers null. */
    secret: z.string().nullable(),
    commit: commitSchema,
  }),
});

export const credentialsRevoke = defineOperation({
  name: 'credentials.revoke',
  summary: 'Revoke an installation credential or a service key, effective on the next request.',
  method: 'POST',
  path: '/v1/credentials/{id}/revoke',
  tool: 'svc_credentials_revoke',
  scope: 'svc:admin',
  capability: 'workspace_admin',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: { params: idParams, query: z.strictObject({}), body: z.strictObject({}) },
  output: z.strictObject({ credential: credentialSchema, commit: maybeCommit }),
});
