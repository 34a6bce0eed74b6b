import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS } from '../../../services/gateway/test/harness';
import { type PackedProject, packedProject } from '../../agent-memory/test/packed-project';

/*
 * @tms/ai-sdk as a user gets it: packed with `pnpm pack`, installed with npm beside @tms/client's
 * tarball and the `ai` and zod versions the workspace pins into a fresh project outside the
 * workspace, run there against a gateway on PGlite and one on Postgres.
 */

const SLOW = { timeout: 300_000 };
let packed: PackedProject;

beforeAll(async () => {
  packed = await packedProject('ai-sdk', ['ai', 'zod'], path.join(import.meta.dirname, 'programs'));
}, 300_000);

afterAll(() => packed?.close());

const MILLIS = 'must be Unix seconds between year 0001 and 9999 (got a value in milliseconds?)';

it(
  'typechecks against its declarations in a strict TypeScript project (NodeNext, skipLibCheck false)',
  SLOW,
  async () => {
    const source = `import { memoryTools, recallContext } from '@tms/ai-sdk';
import { createClient } from '@tms/client';

const client = createClient({ baseUrl: 'http://localhost:8080', workspace: 'ws_x' });
const tools = memoryTools({ client, namespaceId: 'ns_1' });
export async function main() {
  const remembered = await tools.remember.execute?.({ text: 'x' }, { toolCallId: 'c', messages: [] });
  const sequence: number | null | undefined =
    remembered && 'commit_sequence' in remembered ? remembered.commit_sequence : undefined;
  // @ts-expect-error recall takes a query
  await tools.recall.execute?.({ q: 'tea' }, { toolCallId: 'c', messages: [] });
  const context = await recallContext({ client, namespaceIds: ['ns_1'], query: 'tea' });
  const status: 'complete' | 'partial' | 'degraded' | 'pending' = context.status;
  return [sequence, status, context.text.length];
}
`;
    expect(await packed.typecheck({ 'check.ts': source })).toEqual([]);
  },
);

describe.each(DRIVERS)('@tms/ai-sdk from its tarball, on %s', (driver) => {
  it(
    "MockLanguageModelV3 drives generateText through the memory tools: writes commit, recall's answer reaches the model, refusals come back as tool errors; recallContext says the status",
    SLOW,
    async () => {
      const out = await packed.runProgram(driver, 'tools.mjs');
      // remember, then recall: both results went back to the model in its next prompt.
      expect(out.first).toMatchObject({ text: 'Ana drinks mint tea.', steps: 3, errors: [] });
      const [remembered, recalled] = out.first.results;
      expect(remembered).toEqual({
        id: 'c1',
        output: {
          type: 'json',
          value: {
            memory_id: expect.stringMatching(/^mem_/),
            generation: 1,
            status: 'candidate',
            commit_sequence: expect.any(Number),
          },
        },
      });
      expect(recalled.output.type).toBe('json');
      expect(recalled.output.value).toMatchObject({
        status: 'complete',
        status_note: expect.stringMatching(/^complete: /),
        items: [
          { memory_id: remembered.output.value.memory_id, text: 'Ana ordered mint tea at the cafe.', kind: 'episode' },
        ],
      });
      // The memory is committed: the client reads it back.
      expect(out.stored).toEqual(['Ana ordered mint tea at the cafe.']);
      // One step of four calls: the correction lands; a time in milliseconds, twice, and a text that
      // is no string are tool errors the model reads; generateText carries on to the next step.
      expect(out.second.text).toBe('Noted.');
      expect(out.second.results).toEqual([
        { id: 'c3', output: { type: 'json', value: expect.objectContaining({ generation: 2 }) } },
        { id: 'c4', output: { type: 'error-text', value: `invalid_input: body.valid_from: ${MILLIS}` } },
        { id: 'c5', output: { type: 'error-text', value: `invalid_input: body.known_at: ${MILLIS}` } },
        { id: 'c6', output: { type: 'error-text', value: expect.stringContaining('Invalid input for tool remember') } },
        { id: 'c7', output: { type: 'json', value: expect.objectContaining({ retracted: true }) } },
      ]);
      expect(out.second.errors).toEqual(
        expect.arrayContaining([
          { id: 'c4', message: `invalid_input: body.valid_from: ${MILLIS}`, code: 'invalid_input', cause: 'TmsError' },
          { id: 'c5', message: `invalid_input: body.known_at: ${MILLIS}`, code: 'invalid_input', cause: 'TmsError' },
        ]),
      );
      // A namespace out of reach: the service's not_found, as tool errors.
      expect(out.unreachable).toMatchObject({
        text: 'I could not.',
        results: [
          { id: 'u1', output: { type: 'error-text', value: 'not_found: The resource was not found.' } },
          { id: 'u2', output: { type: 'error-text', value: 'not_found: The resource was not found.' } },
        ],
      });
      // Nothing else was written: the corrected memory was retracted, its history kept.
      expect(out.afterAll).toEqual([]);
      expect(out.history).toEqual(['Ana ordered green tea at the cafe.', 'Ana ordered mint tea at the cafe.']);
      expect(out.context).toEqual({
        status: 'complete',
        items: 1,
        text: expect.stringMatching(
          /^Memories recalled for "tea" \(complete: [^)]*\):\n- \[mem_\S+, claim, valid from 2023-11-14T22:13:20\.000Z\] Ana prefers oat milk in her tea\.$/,
        ),
      });
      expect(out.empty).toEqual({
        status: 'complete',
        text: expect.stringMatching(/^No memories were recalled for "coffee" \(complete: /),
      });
      expect(out.contextError).toEqual({ name: 'TmsError', code: 'invalid_input', detail: `body.as_of: ${MILLIS}` });
    },
  );

  it('runs the AI SDK example of docs/integrations.md as written', SLOW, async () => {
    expect(await packed.runExample(driver, 'ai-sdk')).toEqual([
      'Ana drinks mint tea. ["remember","recall"]',
      expect.stringMatching(/^Memories recalled for "tea" \(complete: [^)]*\):$/),
      expect.stringMatching(/^- \[mem_\S+, episode, valid from \S+\] Ana ordered mint tea at the cafe\.$/),
    ]);
  });
});
