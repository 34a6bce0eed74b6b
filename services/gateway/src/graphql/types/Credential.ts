import { CapabilityEnum, CredentialKindEnum } from '../enums';
import { CredentialRef } from '../refs';

CredentialRef.implement({
  description:
    'An installation credential or a service key: its metadata only. The secret is shown once, by `createCredential`.',
  fields: (t) => ({
    id: t.exposeID('id'),
    workspaceId: t.exposeID('workspace_id'),
    kind: t.expose('kind', { type: CredentialKindEnum }),
    productInstallationId: t.exposeID('product_installation_id', { nullable: true }),
    name: t.exposeString('name'),
    actorId: t.exposeID('actor_id'),
    capabilities: t.expose('capabilities', { type: [CapabilityEnum] }),
    namespaceIds: t.exposeIDList('namespace_ids', { nullable: true }),
    expiresAt: t.exposeFloat('expires_at', { nullable: true }),
    createdAt: t.exposeFloat('created_at'),
    revokedAt: t.exposeFloat('revoked_at', { nullable: true }),
  }),
});
