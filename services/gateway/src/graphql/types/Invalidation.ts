import { atOrNull } from '../context';
import { InvalidationReasonEnum } from '../enums';
import { InvalidationRef, MemoryRevisionRef } from '../refs';

InvalidationRef.implement({
  description: 'Why a revision went stale: a revision it rested on was superseded, retracted or purged.',
  fields: (t) => ({
    recordedAt: t.exposeFloat('recorded_at'),
    causeRevisionId: t.exposeID('cause_revision_id'),
    reason: t.expose('reason', { type: InvalidationReasonEnum }),
    causeRevision: t.field({
      type: MemoryRevisionRef,
      nullable: true,
      description: 'The revision that changed; null once purged or when unreadable.',
      resolve: async (i, _args, ctx) =>
        atOrNull(await ctx.loaders.revision(i.cause_revision_id, i.$knownAt), i.$knownAt),
    }),
  }),
});
