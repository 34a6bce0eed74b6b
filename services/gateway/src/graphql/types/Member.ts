import { MemberRoleEnum } from '../enums';
import { MemberRef } from '../refs';

MemberRef.implement({
  description: 'A member of a workspace.',
  fields: (t) => ({
    actorId: t.exposeID('actor_id'),
    role: t.expose('role', { type: MemberRoleEnum }),
  }),
});
