import { CapabilityEnum } from '../enums';
import { GrantRef } from '../refs';
import { GrantTargetUnion } from './GrantTarget';

GrantRef.implement({
  description: 'Capabilities granted on a namespace to one target, optionally inherited by its subtree.',
  fields: (t) => ({
    target: t.field({ type: GrantTargetUnion, resolve: (grant) => grant.target }),
    capabilities: t.field({ type: [CapabilityEnum], resolve: (grant) => grant.capabilities }),
    inherit: t.exposeBoolean('inherit'),
  }),
});
