import { at } from '../context';
import { MemoryListItemRef, MemoryRef, MemoryRevisionRef } from '../refs';

MemoryListItemRef.implement({
  description: 'A listed memory: its identity, its revision at (asOf, knownAt), and whether it is stale.',
  fields: (t) => ({
    memory: t.field({ type: MemoryRef, resolve: (item) => at(item.memory, item.$knownAt) }),
    revision: t.field({ type: MemoryRevisionRef, resolve: (item) => at(item.revision, item.$knownAt) }),
    stale: t.exposeBoolean('stale'),
  }),
});
