// LangChain: a fake chat model from @langchain/core calls the memory tools against the service,
// each tool message goes back to it; then the retriever's Documents.
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { memoryTools, TmsRetriever } from '@tms/langchain';
import { client, failure, print, sleep } from './common.mjs';

const { namespace } = await client.namespaces.create({ parent_id: null, name: 'agent' });
const tools = memoryTools({ client, namespaceId: namespace.id });
const call = (name, args, id) => new AIMessage({ content: '', tool_calls: [{ name, args, id, type: 'tool_call' }] });

/**
 * The agent loop: the model's turns are scripted, one fake model per turn (FakeStreamingChatModel
 * answers its one response, with that response's tool calls); bound to the tools, it gets every
 * message so far; each tool call it makes runs, and the tool message goes back to it.
 */
async function converse(turns, prompt) {
  const messages = [new HumanMessage(prompt)];
  for (const turn of turns) {
    const model = new FakeStreamingChatModel({ responses: [turn], chunks: [turn] }).bindTools(Object.values(tools));
    const reply = await model.invoke(messages);
    messages.push(reply);
    for (const toolCall of reply.tool_calls ?? []) messages.push(await tools[toolCall.name].invoke(toolCall));
  }
  return messages;
}

const toolMessages = (messages) =>
  messages
    .filter((message) => message.type === 'tool')
    .map((message) => ({ status: message.status, content: message.content }));

// remember, then recall: the recall waits for the index to hold the tools' own write
const first = await converse(
  [
    call('remember', { text: 'Ana ordered mint tea at the cafe.', kind: 'episode', valid_from: 1700000000 }, 'c1'),
    call('recall', { query: 'tea' }, 'c2'),
    new AIMessage('Ana likes mint tea.'),
  ],
  'What does Ana drink?',
);
const remembered = JSON.parse(first.find((message) => message.type === 'tool').content);

// correct it, recall the correction, forget it: three tool calls in one turn, then a recall
await sleep(20);
const beforeCorrection = Date.now() / 1000;
await sleep(20);
const second = await converse(
  [
    call('correct', { memory_id: remembered.memory_id, text: 'Ana ordered green tea at the cafe.' }, 'c3'),
    call('recall', { query: 'green tea' }, 'c4'),
    call('forget', { memory_id: remembered.memory_id, expected_generation: 1 }, 'c5'),
    call('forget', { memory_id: remembered.memory_id }, 'c6'),
    call('recall', { query: 'tea' }, 'c7'),
    new AIMessage('Done.'),
  ],
  'She ordered green tea, not mint; then forget it.',
);

// refused calls come back to the model as tool messages with status "error", not a crash
const { namespace: other } = await client.namespaces.create({ parent_id: null, name: 'elsewhere' });
const { memory: outside } = await client.memories.create({
  namespace_id: other.id,
  kind: 'claim',
  text: 'Not the agent namespace.',
  valid_from: 0,
});
const refused = await converse(
  [
    call('remember', { text: 'A time in milliseconds.', valid_from: Date.now() }, 'e1'),
    call('recall', { query: 'tea', as_of: Date.now() }, 'e2'),
    call('forget', { memory_id: outside.id }, 'e3'),
    call('correct', { memory_id: remembered.memory_id, text: 'after it was retracted' }, 'e4'),
    new AIMessage('Sorry.'),
  ],
  'Remember with a bad time.',
);
const unreachable = memoryTools({ client, namespaceId: 'ns_out_of_reach' });
const unreachableCall = await unreachable.remember.invoke({
  name: 'remember',
  args: { text: 'x' },
  id: 'e5',
  type: 'tool_call',
});
const directCall = await failure(() => tools.remember.invoke({ text: 'x', valid_from: Date.now() }));
const outsideKept = await client.memories.get({ id: outside.id });

// the retriever: Documents of recall, now and as known before the correction
const { commit } = await client.memories.create({
  namespace_id: namespace.id,
  kind: 'claim',
  text: 'Ana prefers oat milk in her tea.',
  valid_from: 1700000000,
});
await client.recallWhenIndexed({ namespace_ids: [namespace.id], query: 'tea' }, commit);
const documents = await new TmsRetriever({ client, namespaceIds: [namespace.id], k: 3 }).invoke('tea');
const earlier = await new TmsRetriever({ client, namespaceIds: [namespace.id], knownAt: beforeCorrection }).invoke(
  'tea',
);
const retrieverError = await failure(() =>
  new TmsRetriever({ client, namespaceIds: [namespace.id], asOf: Date.now() }).invoke('tea'),
);

print({
  namespaceId: namespace.id,
  first: toolMessages(first),
  second: toolMessages(second),
  refused: toolMessages(refused),
  unreachable: { status: unreachableCall.status, content: unreachableCall.content },
  directCall,
  outsideText: outsideKept.view.revision.text,
  documents: documents.map((document) => ({
    id: document.id,
    pageContent: document.pageContent,
    metadata: document.metadata,
  })),
  earlier: earlier.map((document) => document.pageContent),
  retrieverError,
});
