import { InstallationRef } from '../refs';

InstallationRef.implement({
  description: 'A product installed into a workspace; grants may name it, and its credentials share them.',
  fields: (t) => ({
    id: t.exposeID('id'),
    workspaceId: t.exposeID('workspace_id'),
    name: t.exposeString('name'),
    createdAt: t.exposeFloat('created_at'),
    revokedAt: t.exposeFloat('revoked_at', { nullable: true }),
  }),
});
