// The AI SDK's own mock language model drives generateText through the memory tools against the
// service: what the tools answer (or refuse) is what the model gets back in its next prompt.
import { memoryTools, recallContext } from '@tms/ai-sdk';
import { createClient } from '@tms/client';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

const client = createClient({
  baseUrl: process.env.TMS_URL,
  token: process.env.TMS_TOKEN,
  workspace: process.env.TMS_WORKSPACE,
});
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};
const toolCalls = (...calls) => ({
  content: calls.map(([toolCallId, toolName, input]) => ({
    type: 'tool-call',
    toolCallId,
    toolName,
    input: JSON.stringify(input),
  })),
  finishReason: { unified: 'tool-calls', raw: undefined },
  usage,
  warnings: [],
});
const text = (words) => ({
  content: [{ type: 'text', text: words }],
  finishReason: { unified: 'stop', raw: undefined },
  usage,
  warnings: [],
});

/** Run generateText over a scripted model; what each later prompt carried back from the tools. */
async function drive(tools, turns) {
  const model = new MockLanguageModelV3({ doGenerate: turns });
  const result = await generateText({
    model,
    tools,
    prompt: 'Keep track of what Ana drinks.',
    stopWhen: stepCountIs(10),
  });
  const toolParts = model.doGenerateCalls.flatMap((call) =>
    call.prompt.filter((message) => message.role === 'tool').flatMap((message) => message.content),
  );
  // The last prompt holds every tool result so far, once each.
  const last = model.doGenerateCalls.at(-1).prompt.filter((message) => message.role === 'tool');
  return {
    text: result.text,
    steps: result.steps.length,
    results: last.flatMap((message) => message.content).map((part) => ({ id: part.toolCallId, output: part.output })),
    errors: result.steps.flatMap((step) =>
      step.content
        .filter((part) => part.type === 'tool-error')
        .map((part) => ({
          id: part.toolCallId,
          message: part.error.message,
          code: part.error.code,
          cause: part.error.cause?.name,
        })),
    ),
    toolParts: toolParts.length,
  };
}

const { namespace } = await client.namespaces.create({ parent_id: null, name: 'assistant' });
const tools = memoryTools({ client, namespaceId: namespace.id });

const first = await drive(tools, [
  toolCalls(['c1', 'remember', { text: 'Ana ordered mint tea at the cafe.', kind: 'episode', valid_from: 1700000000 }]),
  toolCalls(['c2', 'recall', { query: 'tea' }]),
  text('Ana drinks mint tea.'),
]);
const stored = await client.memories.list({ namespace_id: namespace.id });

const memoryId = stored.items[0].memory.id;
const second = await drive(tools, [
  toolCalls(
    ['c3', 'correct', { memory_id: memoryId, text: 'Ana ordered green tea at the cafe.' }],
    ['c4', 'remember', { text: 'A time in milliseconds.', valid_from: Date.now() }],
    ['c5', 'recall', { query: 'tea', known_at: Date.now() }],
    ['c6', 'remember', { text: 42 }],
  ),
  toolCalls(['c7', 'forget', { memory_id: memoryId }]),
  text('Noted.'),
]);

const unreachable = await drive(memoryTools({ client, namespaceId: 'ns_out_of_reach' }), [
  toolCalls(['u1', 'remember', { text: 'Somewhere I cannot write.' }], ['u2', 'recall', { query: 'tea' }]),
  text('I could not.'),
]);
const afterAll = await client.memories.list({ namespace_id: namespace.id });
const history = await client.memories.history({ id: memoryId });

// recallContext: the items for a prompt, the status said in words
const { commit } = await client.memories.create({
  namespace_id: namespace.id,
  kind: 'claim',
  text: 'Ana prefers oat milk in her tea.',
  valid_from: 1700000000,
});
const context = await recallContext({
  client,
  namespaceIds: [namespace.id],
  query: 'tea',
  minSequence: commit.sequence,
});
const empty = await recallContext({ client, namespaceIds: [namespace.id], query: 'coffee' });
const contextError = await recallContext({ client, namespaceIds: [namespace.id], query: 'tea', asOf: Date.now() }).then(
  () => 'no error',
  (error) => ({ name: error.name, code: error.code, detail: error.detail }),
);

process.stdout.write(
  `${JSON.stringify({
    namespaceId: namespace.id,
    first,
    stored: stored.items.map((item) => item.revision.text),
    second,
    unreachable,
    afterAll: afterAll.items.map((item) => item.revision.text),
    history: history.revisions.map((revision) => revision.text),
    context: { text: context.text, status: context.status, items: context.items.length },
    empty: { text: empty.text, status: empty.status },
    contextError,
  })}\n`,
);
