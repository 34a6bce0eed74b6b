import { WebhookStateEnum } from '../enums';
import { WebhookRef } from '../refs';

WebhookRef.implement({
  description:
    'An endpoint that receives the workspace changes, signed, and its delivery state. The signing secret is shown once, by `createWebhook`.',
  fields: (t) => ({
    id: t.exposeID('id'),
    workspaceId: t.exposeID('workspace_id'),
    url: t.exposeString('url'),
    namespaceId: t.exposeID('namespace_id', { nullable: true }),
    description: t.exposeString('description', { nullable: true }),
    state: t.expose('state', { type: WebhookStateEnum }),
    disabledReason: t.exposeString('disabled_reason', { nullable: true }),
    stateSince: t.exposeFloat('state_since', { nullable: true }),
    deliveredSequence: t.expose('delivered_sequence', { type: 'SafeInt' }),
    lastDeliveredAt: t.exposeFloat('last_delivered_at', { nullable: true }),
    lastError: t.exposeString('last_error', { nullable: true }),
    lastErrorAt: t.exposeFloat('last_error_at', { nullable: true }),
    failingSince: t.exposeFloat('failing_since', { nullable: true }),
    nextAttemptAt: t.exposeFloat('next_attempt_at', { nullable: true }),
    createdAt: t.exposeFloat('created_at'),
  }),
});
