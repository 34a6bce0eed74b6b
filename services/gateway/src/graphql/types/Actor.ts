import { ActorRef } from '../refs';

ActorRef.implement({
  description: 'An actor as the server resolved it from (issuer, subject).',
  fields: (t) => ({
    id: t.exposeID('id'),
    issuer: t.exposeString('issuer'),
    subject: t.exposeString('subject'),
  }),
});
