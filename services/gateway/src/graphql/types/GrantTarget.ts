import { builder } from '../builder';
import { GrantTargetKindEnum } from '../enums';
import { ActorGrantTargetRef, CredentialGrantTargetRef, InstallationGrantTargetRef } from '../refs';

ActorGrantTargetRef.implement({
  description: 'A grant to a member of the workspace.',
  fields: (t) => ({
    kind: t.expose('kind', { type: GrantTargetKindEnum }),
    actorId: t.exposeID('actor_id'),
  }),
});

InstallationGrantTargetRef.implement({
  description: 'A grant to a product installation.',
  fields: (t) => ({
    kind: t.expose('kind', { type: GrantTargetKindEnum }),
    productInstallationId: t.exposeID('product_installation_id'),
  }),
});

CredentialGrantTargetRef.implement({
  description: 'A grant to one credential.',
  fields: (t) => ({
    kind: t.expose('kind', { type: GrantTargetKindEnum }),
    credentialId: t.exposeID('credential_id'),
  }),
});

export const GrantTargetUnion = builder.unionType('GrantTarget', {
  description: 'Whom a grant names.',
  types: [ActorGrantTargetRef, InstallationGrantTargetRef, CredentialGrantTargetRef],
  resolveType: (target) =>
    target.kind === 'actor'
      ? ActorGrantTargetRef
      : target.kind === 'installation'
        ? InstallationGrantTargetRef
        : CredentialGrantTargetRef,
});
