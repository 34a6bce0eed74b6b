import { z } from 'zod';
import { defineOperation } from './operation';
import {
  boundedText,
  commitSchema,
  cursorSchema,
  idSchema,
  pageLimitSchema,
  sequenceSchema,
  timestampSchema,
} from './primitives';
import { nextCursorSchema } from './resources';

/**
 * Signed webhooks (decisions §10): a workspace admin registers an endpoint, and the indexer
 * POSTs the workspace's changes to it in sequence order, signed with a secret shown once.
 */

/** An absolute URL; the scheme and address rules (https only, private targets) are the domain's. */
export const webhookUrlSchema = boundedText(1, 2048);

export const webhookStateSchema = z.enum(['active', 'disabled', 'deleted']);

export const webhookSchema = z.strictObject({
  id: idSchema,
  workspace_id: idSchema,
  url: webhookUrlSchema,
  /** Only changes in this namespace and its descendants are delivered; null for the whole workspace. */
  namespace_id: idSchema.nullable(),
  description: boundedText(0, 500).nullable(),
  /** `disabled`: deliveries failed for the whole retry window and stopped; `deleted`: removed by `webhooks.delete`. */
  state: webhookStateSchema,
  /** Why deliveries stopped, when `disabled`. */
  disabled_reason: boundedText(0, 2048).nullable(),
  /** When it was disabled or deleted. */
  state_since: timestampSchema.nullable(),
  /** The last sequence the endpoint acknowledged with a 2xx (or skipped as outside its namespace). */
  delivered_sequence: sequenceSchema,
  last_delivered_at: timestampSchema.nullable(),
  /** The last failed attempt: a status, a timeout or a connection error. */
  last_error: boundedText(0, 2048).nullable(),
  last_error_at: timestampSchema.nullable(),
  /** The first failure since the last success: the retry window is counted from it. */
  failing_since: timestampSchema.nullable(),
  next_attempt_at: timestampSchema.nullable(),
  created_at: timestampSchema,
});

export type Webhook = z.infer<typeof webhookSchema>;

const noParams = z.strictObject({});
const noQuery = z.strictObject({});

export const webhooksList = defineOperation({
  name: 'webhooks.list',
  summary: 'List the webhooks of the workspace with their delivery state, oldest first (workspace admins only).',
  method: 'GET',
  path: '/v1/webhooks',
  tool: 'svc_webhooks_list',
  scope: 'svc:admin',
  capability: 'workspace_admin',
  idempotent: false,
  workspace: 'selected',
  maxItems: 100,
  mutates: false,
  input: {
    params: noParams,
    query: z.strictObject({ limit: pageLimitSchema, cursor: cursorSchema.optional() }),
    body: null,
  },
  output: z.strictObject({ webhooks: z.array(webhookSchema).max(100), next_cursor: nextCursorSchema }),
});

export const webhooksCreate = defineOperation({
  name: 'webhooks.create',
  summary:
    'Register an endpoint for signed deliveries of the workspace changes; the answer shows its signing secret this once (workspace admins only).',
  method: 'POST',
  path: '/v1/webhooks',
  tool: 'svc_webhooks_create',
  scope: 'svc:admin',
  capability: 'workspace_admin',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  revealsSecret: true,
  input: {
    params: noParams,
    query: noQuery,
    body: z.strictObject({
      url: webhookUrlSchema,
      namespace_id: idSchema.optional(),
      description: boundedText(0, 500).optional(),
    }),
  },
  output: z.strictObject({
    webhook: webhookSchema,
    /** The HMAC-SHA256 signing secret: shown in this answer only; a replay of the request answers null. */
    secret: z.string().nullable(),
    commit: commitSchema,
  }),
});

export const webhooksDelete = defineOperation({
  name: 'webhooks.delete',
  summary: 'Delete a webhook: no delivery starts after this answer. Deleting it again answers `commit: null`.',
  method: 'DELETE',
  path: '/v1/webhooks/{id}',
  tool: 'svc_webhooks_delete',
  scope: 'svc:admin',
  capability: 'workspace_admin',
  idempotent: true,
  workspace: 'selected',
  maxItems: 1,
  mutates: true,
  input: { params: z.strictObject({ id: idSchema }), query: noQuery, body: null },
  output: z.strictObject({ webhook: webhookSchema, commit: commitSchema.nullable() }),
});
