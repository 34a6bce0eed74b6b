import { CallerKindEnum } from '../enums';
import { ActorRef, MeRef } from '../refs';

MeRef.implement({
  description: 'Who the server resolved the caller to (`me.get`).',
  fields: (t) => ({
    actor: t.expose('actor', { type: ActorRef }),
    callerKind: t.expose('caller_kind', { type: CallerKindEnum }),
    workspaceId: t.exposeID('workspace_id', { nullable: true }),
    scopes: t.exposeStringList('scopes'),
  }),
});
