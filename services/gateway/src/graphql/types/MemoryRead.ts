import { MemoryReadRef, MemoryViewRef } from '../refs';

MemoryReadRef.implement({
  description: 'The answer of `memories.get`: the view and the two clocks it was read at.',
  fields: (t) => ({
    view: t.expose('view', { type: MemoryViewRef }),
    asOf: t.exposeFloat('as_of'),
    knownAt: t.exposeFloat('known_at'),
  }),
});
