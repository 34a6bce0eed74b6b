import { EnrollmentRef } from '../refs';

EnrollmentRef.implement({
  description: 'Whether the caller may create workspaces (admin-managed pilot enrollment).',
  fields: (t) => ({
    canCreateWorkspace: t.exposeBoolean('can_create_workspace'),
    policy: t.exposeString('policy'),
  }),
});
