import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS } from '../../../services/gateway/test/harness';
import { type PackedProject, packedProject } from '../../agent-memory/test/packed-project';

/*
 * @tms/langchain as a user gets it: packed with `pnpm pack` (its prepack builds it), installed with
 * npm beside @tms/client's tarball and the framework versions the workspace pins into one fresh
 * project outside the workspace. The programs of test/programs run there, against a gateway on
 * PGlite (the embedded default) and one on Postgres, both indexing as `pnpm start` does.
 */

const SLOW = { timeout: 300_000 };
let packed: PackedProject;

beforeAll(async () => {
  packed = await packedProject(
    'langchain',
    ['@langchain/core', '@langchain/langgraph', '@langchain/langgraph-checkpoint', 'zod'],
    path.join(import.meta.dirname, 'programs'),
  );
}, 300_000);

afterAll(() => packed?.close());

const isoDate = expect.stringMatching(/^\d{4}-\d\d-\d\dT/);

it(
  'typechecks against its declarations in a strict TypeScript project (NodeNext, skipLibCheck false)',
  SLOW,
  async () => {
    const source = `import { InMemoryStore, type BaseStore } from '@langchain/langgraph';
import { createClient } from '@tms/client';
import { memoryTools, TmsRetriever, TmsStore, type TmsItem } from '@tms/langchain';

const client = createClient({ baseUrl: 'http://localhost:8080', workspace: 'ws_x' });
const store: BaseStore = new TmsStore({ client, asOf: 1700000000 });
const inMemory: BaseStore = new InMemoryStore();
// @ts-expect-error asOf takes Unix seconds
void new TmsStore({ client, asOf: 'yesterday' });
export async function main() {
  const item = (await store.get(['a'], 'b')) as TmsItem | null;
  const sequence: number | null = item?.sequence ?? null;
  const documents = await new TmsRetriever({ client, namespaceIds: ['ns_1'] }).invoke('tea');
  const status: 'complete' | 'partial' | 'degraded' | 'pending' | undefined = documents[0]?.metadata.status;
  const tools = memoryTools({ client, namespaceId: 'ns_1' });
  // @ts-expect-error remember takes a text
  await tools.remember.invoke({ txt: 'x' });
  return [sequence, status, inMemory];
}
`;
    expect(await packed.typecheck({ 'check.ts': source })).toEqual([]);
  },
);

describe.each(DRIVERS)('@tms/langchain from its tarball, on %s', (driver) => {
  it(
    'a StateGraph compiled with a TmsStore puts, gets and searches through the store its nodes get; one over new TmsStore({ client, asOf: T }) reads what the store held at T',
    SLOW,
    async () => {
      const { user, first, past, now, namespaces, memory } = await packed.runProgram(driver, 'graph.mjs');
      const path = ['users', user, 'preferences'];
      // The first run's node wrote the item, the next node read it back: value, clocks, ledger place.
      expect(first.item).toEqual({
        namespace: path,
        key: 'drink',
        value: { drink: 'mint tea' },
        createdAt: isoDate,
        updatedAt: first.item.createdAt,
        memoryId: expect.stringMatching(/^mem_/),
        revisionId: expect.stringMatching(/^rev_/),
        generation: 1,
        kind: 'claim',
        sequence: expect.any(Number),
        validFrom: 0,
        validTo: null,
        recordedAt: expect.any(Number),
        stale: false,
      });
      expect(Math.floor(first.item.recordedAt * 1000)).toBe(Date.parse(first.item.updatedAt));
      expect(first.hits).toEqual([
        expect.objectContaining({ key: 'drink', score: expect.any(Number), recallStatus: 'complete' }),
      ]);
      expect(first.hits[0].ranks.lexical).toBe(1);
      // At T: the drink before its correction, the food before its deletion, nothing put later.
      expect(past.item).toMatchObject({
        value: { drink: 'mint tea' },
        generation: 1,
        revisionId: first.item.revisionId,
      });
      expect(past.item.sequence).toBe(first.item.sequence);
      expect(past.hits.map((hit: { value: unknown }) => hit.value)).toEqual([{ drink: 'mint tea' }]);
      expect(past.listed.sort()).toEqual([
        ['drink', { drink: 'mint tea' }],
        ['food', { food: 'bagel' }],
      ]);
      expect(past.refused.message).toMatch(/read-only/);
      expect(namespaces.past).toEqual([path]);
      // Now: the correction, the deletion and the later namespace.
      expect(now.item).toMatchObject({
        value: { drink: 'black coffee' },
        generation: 2,
        memoryId: first.item.memoryId,
      });
      expect(now.item.createdAt).toBe(first.item.createdAt);
      expect(now.item.sequence).toBeGreaterThan(first.item.sequence);
      expect(now.hits).toEqual([]);
      // Namespace by namespace in path order: ["users", user, "history"] first.
      expect(now.listed).toEqual([
        ['snack', { snack: 'almonds' }],
        ['drink', { drink: 'black coffee' }],
      ]);
      expect(namespaces.now).toEqual([['users', user, 'history'], path]);
      // The memory behind the item: the key, the value as canonical JSON, both revisions kept.
      expect(memory).toEqual({
        key: 'drink',
        text: '{"drink":"black coffee"}',
        texts: ['{"drink":"black coffee"}', '{"drink":"mint tea"}'],
      });
    },
  );

  it(
    "keeps LangGraph's store contract: put, get, search, delete, listNamespaces, batch order, bad namespaces; filters, corrections, races and the service's errors",
    SLOW,
    async () => {
      const out = await packed.runProgram(driver, 'contract.mjs');
      expect(out.get).toMatchObject({ namespace: ['test'], key: '123', value: { value: 1 }, generation: 1 });
      expect(out.getMissing).toBeNull();
      expect(out.getNoNamespace).toBeNull();
      expect(out.search).toEqual([
        ['123', { value: 1 }],
        ['456', { nested: { deep: true }, tags: ['a', 'b'], value: 2 }],
      ]);
      expect(out.afterDelete).toBeNull();
      expect(out.deleteAbsent).toBe('no error');
      expect(out.correction).toEqual({
        sameMemory: true,
        generations: [1, 2],
        createdAtKept: true,
        updatedAtMoved: true,
        sequences: [expect.any(Number), expect.any(Number)],
        history: ['{"value":3}', '{"nested":{"deep":true},"tags":["a","b"],"value":2}'],
      });
      expect(out.correction.sequences[1]).toBeGreaterThan(out.correction.sequences[0]);
      expect(out.namespaces).toEqual({
        prefix: [
          ['a', 'b', 'c'],
          ['a', 'b', 'd', 'e'],
          ['a', 'b', 'd', 'i'],
          ['a', 'b', 'f'],
        ],
        suffix: [
          ['a', 'b', 'f'],
          ['a', 'c', 'f'],
          ['b', 'a', 'f'],
        ],
        both: [
          ['a', 'b', 'f'],
          ['a', 'c', 'f'],
        ],
        maxDepth: [
          ['a', 'b', 'c'],
          ['a', 'b', 'd'],
          ['a', 'b', 'f'],
        ],
        limit: [
          ['a', 'b', 'c'],
          ['a', 'b', 'd', 'e'],
        ],
        offset: [
          ['a', 'b', 'd', 'i'],
          ['a', 'b', 'f'],
        ],
        wildcard: [
          ['users', '123'],
          ['users', '456', 'settings'],
        ],
        wildcardSuffix: [['users', '456', 'settings']],
        // ["foo", "langgraph", "foo"] and ["batch"] are written later; ["test"] still holds "456".
        depthOne: [['a'], ['admin'], ['b'], ['test'], ['users']],
      });
      // A listing orders a namespace's items by memory id (random): sorted here.
      out.batch[3].sort();
      expect(out.batch).toEqual([
        null,
        { key: 'k1', value: { n: 1 } },
        null,
        [
          ['k1', { n: 1 }],
          ['k2', { n: 2 }],
        ],
        null,
        null,
        [['batch']],
      ]);
      expect(out.badNamespaces).toEqual({
        empty: true,
        period: true,
        emptyLabel: true,
        reservedRoot: true,
        inBatch: true,
        batchWroteNothing: true,
        isTheClass: expect.stringMatching(/cannot contain colons/),
      });
      expect(out.invalidNamespaceErrorName).toBe('InvalidNamespaceError');
      expect(out.reservedBelowRoot).toEqual({ foo: 'bar' });
      expect(out.filters).toEqual({
        exact: ['f1', 'f3'],
        gt: ['f1', 'f3'],
        combined: ['f1'],
        array: ['f2'],
        inList: ['f2', 'f4'],
        paged: 1,
        withQuery: ['f1', 'f3'],
      });
      // Six puts of one key at once, from two stores: each landed as a generation of one memory.
      expect(out.race).toEqual({ generation: 6, holders: 1 });
      expect(out.errors).toEqual({
        longKey: expect.objectContaining({
          code: 'invalid_input',
          detail: 'query.key: length must be 1-256 characters',
        }),
        longText: expect.objectContaining({
          code: 'invalid_input',
          detail: 'body.text: length must be 1-32768 characters',
        }),
        longLabel: expect.objectContaining({
          code: 'invalid_input',
          detail: 'body.name: length must be 1-160 characters',
        }),
        milliseconds: expect.objectContaining({
          code: 'invalid_input',
          detail: expect.stringContaining(
            'query.as_of: must be Unix seconds between year 0001 and 9999 (got a value in milliseconds?)',
          ),
        }),
        notJson: expect.objectContaining({
          name: 'TypeError',
          message: expect.stringMatching(/value\.when is a Date/),
        }),
        notFinite: expect.objectContaining({ name: 'TypeError', message: expect.stringMatching(/value\.n is NaN/) }),
        bigQueryPage: expect.objectContaining({ name: 'RangeError' }),
      });
      expect(out.nothingWritten).toEqual([null, null, null]);
    },
  );

  it(
    'LangChain: a fake chat model calls the memory tools; refusals come back to it as error tool messages; the retriever answers Documents',
    SLOW,
    async () => {
      const out = await packed.runProgram(driver, 'tools.mjs');
      const json = (message: { content: string }) => JSON.parse(message.content);
      const [remembered, recalled] = out.first;
      expect(json(remembered)).toEqual({
        memory_id: expect.stringMatching(/^mem_/),
        generation: 1,
        status: 'candidate',
        commit_sequence: expect.any(Number),
      });
      // The recall waited for the index to hold the remember's commit.
      expect(json(recalled)).toMatchObject({
        status: 'complete',
        items: [{ memory_id: json(remembered).memory_id, text: 'Ana ordered mint tea at the cafe.', kind: 'episode' }],
      });
      const [corrected, recalledAgain, stale, forgotten, afterForget] = out.second;
      expect(json(corrected)).toMatchObject({ generation: 2 });
      expect(json(recalledAgain).items.map((item: { text: string }) => item.text)).toEqual([
        'Ana ordered green tea at the cafe.',
      ]);
      // A forget naming a generation the memory no longer has is the service's conflict.
      expect(stale).toEqual({ status: 'error', content: 'conflict: The resource changed. Reload before retrying.' });
      expect(json(forgotten)).toMatchObject({ retracted: true });
      expect(json(afterForget)).toMatchObject({ status: 'complete', items: [] });
      const millis = 'must be Unix seconds between year 0001 and 9999 (got a value in milliseconds?)';
      expect(out.refused).toEqual([
        { status: 'error', content: `invalid_input: body.valid_from: ${millis}` },
        { status: 'error', content: `invalid_input: body.as_of: ${millis}` },
        {
          status: 'error',
          content: expect.stringMatching(/^not_found: memory_id: mem_\S+ is not in this tool's namespace$/),
        },
        { status: 'error', content: 'not_found: The resource was not found.' },
      ]);
      expect(out.outsideText).toBe('Not the agent namespace.');
      expect(out.unreachable).toEqual({ status: 'error', content: 'not_found: The resource was not found.' });
      expect(out.directCall).toMatchObject({
        name: 'MemoryToolError',
        code: 'invalid_input',
        detail: `body.valid_from: ${millis}`,
      });
      expect(out.documents).toEqual([
        {
          id: expect.stringMatching(/^mem_/),
          pageContent: 'Ana prefers oat milk in her tea.',
          metadata: {
            memoryId: expect.stringMatching(/^mem_/),
            revisionId: expect.stringMatching(/^rev_/),
            namespaceId: out.namespaceId,
            key: null,
            kind: 'claim',
            generation: 1,
            validFrom: 1700000000,
            validTo: null,
            recordedAt: expect.any(Number),
            recordedUntil: null,
            score: expect.any(Number),
            ranks: { lexical: 1, semantic: null },
            stale: false,
            status: 'complete',
            retrieval: { mode: 'hybrid', lexical: 'ok', semantic: 'off' },
          },
        },
      ]);
      expect(out.earlier).toEqual(['Ana ordered mint tea at the cafe.']);
      expect(out.retrieverError).toMatchObject({
        name: 'TmsError',
        code: 'invalid_input',
        detail: `body.as_of: ${millis}`,
      });
    },
  );

  it('runs the LangGraph and LangChain examples of docs/integrations.md as written', SLOW, async () => {
    const langgraph = await packed.runExample(driver, 'langgraph');
    expect(langgraph).toEqual([
      expect.stringMatching(/^ana drinks mint tea \(memory mem_\S+, commit \d+\)$/),
      'mint tea',
      JSON.stringify(['green tea']),
    ]);
    const langchain = await packed.runExample(driver, 'langchain');
    expect(langchain).toEqual([
      'complete ["Ana ordered green tea at the cafe."]',
      'Ana ordered green tea at the cafe. complete 2',
    ]);
  });
});
