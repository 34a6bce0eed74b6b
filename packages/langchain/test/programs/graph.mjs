// A StateGraph whose nodes use the store LangGraph hands them (config.store), compiled with a
// TmsStore; then a graph over a TmsStore reading the past, after later puts and deletes.
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { TmsStore } from '@tms/langchain';
import { client, failure, itemJson, print, sleep } from './common.mjs';

const user = `u${Date.now()}`;
const State = Annotation.Root({
  drink: Annotation(),
  item: Annotation(),
  hits: Annotation(),
  listed: Annotation(),
  refused: Annotation(),
});

// LangGraph 1.7 hands nodes its batching wrapper of the store, which passes get, search, put and
// delete through but not listNamespaces: that is called on the store itself.
function buildGraph(store, { write }) {
  return new StateGraph(State)
    .addNode('remember', async (state, config) => {
      if (write) await config.store.put(['users', user, 'preferences'], 'drink', { drink: state.drink });
      return {};
    })
    .addNode('read', async (_state, config) => {
      const item = await config.store.get(['users', user, 'preferences'], 'drink');
      const hits = await config.store.search(['users', user], { query: 'tea' });
      const listed = await config.store.search(['users', user]);
      const refused = write
        ? null
        : await failure(() => config.store.put(['users', user, 'preferences'], 'x', { x: 1 }));
      return {
        item: itemJson(item),
        hits: hits.map(itemJson),
        listed: listed.map((found) => [found.key, found.value]),
        refused,
      };
    })
    .addEdge(START, 'remember')
    .addEdge('remember', 'read')
    .addEdge('read', END)
    .compile({ store });
}

const first = await buildGraph(new TmsStore({ client }), { write: true }).invoke({ drink: 'mint tea' });

// More of the store, then T, then later puts and deletes.
const live = new TmsStore({ client });
await live.put(['users', user, 'preferences'], 'food', { food: 'bagel' });
await sleep(50);
const at = Date.now() / 1000;
await sleep(50);
await live.put(['users', user, 'preferences'], 'drink', { drink: 'black coffee' });
await live.delete(['users', user, 'preferences'], 'food');
await live.put(['users', user, 'history'], 'snack', { snack: 'almonds' });

const pastStore = new TmsStore({ client, asOf: at });
const past = await buildGraph(pastStore, { write: false }).invoke({});
const now = await buildGraph(live, { write: false }).invoke({});
const namespaces = {
  past: await pastStore.listNamespaces({ prefix: ['users', user] }),
  now: await live.listNamespaces({ prefix: ['users', user] }),
};
// The memory behind the item, read with the client: the latest value as canonical JSON, history kept.
const { view } = await client.memories.get({ id: first.item.memoryId });
const history = await client.memories.history({ id: first.item.memoryId });
const memory = { key: view.memory.key, text: view.revision.text, texts: history.revisions.map((r) => r.text) };

print({ user, first, past, now, at, namespaces, memory });
