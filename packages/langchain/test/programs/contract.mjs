// The store's contract, as LangGraph's own store tests put it to InMemoryStore, against the
// service: put/get/search/delete, listNamespaces, batch order, bad namespaces; then what the
// service adds: filters applied exactly, corrections and retractions kept in the history,
// concurrent puts of one key, and the service's errors for bad input.
import { InvalidNamespaceError } from '@langchain/langgraph-checkpoint';
import { TmsStore } from '@tms/langchain';
import { client, failure, itemJson, print } from './common.mjs';

const store = new TmsStore({ client });
const out = {};

// put / get / search / delete
await store.put(['test'], '123', { value: 1 });
await store.put(['test'], '456', { value: 2, tags: ['a', 'b'], nested: { deep: true } });
out.get = itemJson(await store.get(['test'], '123'));
out.getMissing = await store.get(['test'], 'absent');
out.getNoNamespace = await store.get(['no', 'such', 'path'], '123');
out.search = (await store.search(['test'])).map((item) => [item.key, item.value]).sort();
await store.delete(['test'], '123');
out.afterDelete = await store.get(['test'], '123');
out.deleteAbsent = await failure(() => store.delete(['test'], 'never-there'));

// a put of a held key corrects it; createdAt stays, updatedAt moves, the history keeps both
const before = await store.get(['test'], '456');
await store.put(['test'], '456', { value: 3 });
const after = await store.get(['test'], '456');
const history = await client.memories.history({ id: after.memoryId });
out.correction = {
  sameMemory: before.memoryId === after.memoryId,
  generations: [before.generation, after.generation],
  createdAtKept: before.createdAt.getTime() === after.createdAt.getTime(),
  updatedAtMoved: after.updatedAt > before.updatedAt,
  sequences: [before.sequence, after.sequence],
  history: history.revisions.map((revision) => revision.text),
};

// listNamespaces, as LangGraph's namespace tests put it
const paths = [
  ['a', 'b', 'c'],
  ['a', 'b', 'd', 'e'],
  ['a', 'b', 'd', 'i'],
  ['a', 'b', 'f'],
  ['a', 'c', 'f'],
  ['b', 'a', 'f'],
  ['users', '123'],
  ['users', '456', 'settings'],
  ['admin', 'users', '789'],
];
await Promise.all(paths.map((path, i) => store.put(path, `id_${i}`, { data: `value_${i}` })));
out.namespaces = {
  prefix: await store.listNamespaces({ prefix: ['a', 'b'] }),
  suffix: await store.listNamespaces({ suffix: ['f'] }),
  both: await store.listNamespaces({ prefix: ['a'], suffix: ['f'] }),
  maxDepth: await store.listNamespaces({ prefix: ['a', 'b'], maxDepth: 3 }),
  limit: await store.listNamespaces({ prefix: ['a', 'b'], limit: 2 }),
  offset: await store.listNamespaces({ prefix: ['a', 'b'], offset: 2 }),
  wildcard: await store.listNamespaces({ prefix: ['users', '*'] }),
  wildcardSuffix: await store.listNamespaces({ suffix: ['*', 'settings'] }),
  depthOne: await store.listNamespaces({ maxDepth: 1 }),
};

// batch: results in the order of the operations; a read sees the writes before it
out.batch = await store.batch([
  { namespace: ['batch'], key: 'k1', value: { n: 1 } },
  { namespace: ['batch'], key: 'k1' },
  { namespace: ['batch'], key: 'k2', value: { n: 2 } },
  { namespacePrefix: ['batch'], limit: 10, offset: 0 },
  { namespace: ['batch'], key: 'k1', value: null },
  { namespace: ['batch'], key: 'k1' },
  { matchConditions: [{ matchType: 'prefix', path: ['batch'] }], limit: 10, offset: 0 },
]);
out.batch = out.batch.map((result) =>
  Array.isArray(result)
    ? result.map((entry) => (Array.isArray(entry) ? entry : [entry.key, entry.value]))
    : result && { key: result.key, value: result.value },
);

// bad namespaces, refused as LangGraph's stores refuse them, before anything is written
const refused = async (work) => {
  const error = await failure(work);
  return error !== 'no error' && error.name === 'InvalidNamespaceError';
};
out.badNamespaces = {
  empty: await refused(() => store.put([], 'foo', { foo: 'bar' })),
  period: await refused(() => store.put(['the', 'thing.about'], 'foo', { foo: 'bar' })),
  emptyLabel: await refused(() => store.put(['some', 'fun', ''], 'foo', { foo: 'bar' })),
  reservedRoot: await refused(() => store.put(['langgraph', 'foo'], 'bar', { foo: 'bar' })),
  inBatch: await refused(() =>
    store.batch([
      { namespace: ['fine'], key: 'k', value: { a: 1 } },
      { namespace: ['not.fine'], key: 'k', value: { a: 1 } },
    ]),
  ),
  batchWroteNothing: (await store.get(['fine'], 'k')) === null,
  isTheClass: (await failure(() => store.put(['x:y'], 'k', { a: 1 }))).message,
};
out.invalidNamespaceErrorName = new InvalidNamespaceError('x').name;
await store.put(['foo', 'langgraph', 'foo'], 'bar', { foo: 'bar' });
out.reservedBelowRoot = (await store.get(['foo', 'langgraph', 'foo'], 'bar'))?.value;

// filters run on the values exactly, after the listing or the ranking
await Promise.all(
  [
    ['f1', { color: 'red', score: 4.5, tags: ['x'] }],
    ['f2', { color: 'blue', score: 3, tags: ['x', 'y'] }],
    ['f3', { color: 'red', score: 5.5, tags: ['y'] }],
    ['f4', { color: 'red tea', score: 1 }],
  ].map(([key, value]) => store.put(['filtered'], key, value)),
);
const keys = (items) => items.map((item) => item.key).sort();
out.filters = {
  exact: keys(await store.search(['filtered'], { filter: { color: 'red' } })),
  gt: keys(await store.search(['filtered'], { filter: { score: { $gt: 4 } } })),
  combined: keys(await store.search(['filtered'], { filter: { color: 'red', score: { $lte: 5 } } })),
  array: keys(await store.search(['filtered'], { filter: { tags: ['x', 'y'] } })),
  inList: keys(await store.search(['filtered'], { filter: { color: { $in: ['blue', 'red tea'] } } })),
  paged: keys(await store.search(['filtered'], { filter: { color: 'red' }, limit: 1, offset: 1 })).length,
  withQuery: keys(await store.search(['filtered'], { query: 'red', filter: { score: { $gt: 2 } } })),
};

// concurrent puts of one key from two stores: every put lands, one memory holds the key
const other = new TmsStore({ client });
await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? store : other).put(['race'], 'counter', { n: i })));
const raced = await store.get(['race'], 'counter');
const holders = await client.memories.list({
  namespace_id: (await client.memories.get({ id: raced.memoryId })).view.memory.namespace_id,
});
out.race = { generation: raced.generation, holders: holders.items.length };

// bad input gets the service's error (code and detail), or a TypeError before anything is written
out.errors = {
  longKey: await failure(() => store.get(['test'], 'k'.repeat(300))),
  longText: await failure(() => store.put(['test'], 'big', { text: 'x'.repeat(40_000) })),
  longLabel: await failure(() => store.put(['n'.repeat(161)], 'k', { a: 1 })),
  milliseconds: await failure(() => new TmsStore({ client, asOf: Date.now() }).get(['test'], '456')),
  notJson: await failure(() => store.put(['test'], 'date', { when: new Date() })),
  notFinite: await failure(() => store.put(['test'], 'nan', { n: Number.NaN })),
  bigQueryPage: await failure(() => store.search(['test'], { query: 'x', limit: 60, offset: 50 })),
};
out.nothingWritten = await Promise.all(['big', 'date', 'nan'].map((key) => store.get(['test'], key)));

print(out);
