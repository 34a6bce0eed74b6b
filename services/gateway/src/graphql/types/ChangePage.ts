import { boundedList } from '../context';
import { ChangePageRef, ChangeRef } from '../refs';

ChangePageRef.implement({
  description:
    'Changes after a sequence (`changes.list`). Pass `nextAfter` as `after` to continue: it moves past commits the caller may not see as well.',
  fields: (t) => ({
    changes: t.field({ type: [ChangeRef], complexity: boundedList(100), resolve: (page) => page.changes }),
    nextAfter: t.expose('next_after', { type: 'SafeInt' }),
    headSequence: t.expose('head_sequence', { type: 'SafeInt' }),
  }),
});
