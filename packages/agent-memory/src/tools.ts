import type { TmsClient } from '@tms/client';
import { z } from 'zod';
import { MemoryToolError, toToolError } from './errors';
import { recallResult } from './recall';

/** Unix seconds, said where a model reads it: the service refuses milliseconds with a detail saying so. */
const SECONDS = 'Unix seconds (not milliseconds)';

const kind = z
  .enum(['claim', 'episode', 'procedure'])
  .describe('claim: a fact or preference; episode: something that happened; procedure: how to do something');
const memoryId = z.string().describe('The memory id (mem_...) that remember or recall answered');
const expectedGeneration = z
  .number()
  .int()
  .optional()
  .describe('The generation recall showed; the call is refused if the memory changed since. Default: the current one');

export const rememberInput = z.object({
  text: z.string().describe('What to remember: one self-contained statement'),
  kind: kind.optional().describe('Default claim'),
  valid_from: z.number().optional().describe(`When it became true, ${SECONDS}. Default now`),
  valid_to: z.number().nullable().optional().describe(`When it stopped being true, ${SECONDS}. Default open`),
});

export const recallInput = z.object({
  query: z.string().describe('What to look for, in words'),
  max_items: z.number().int().optional().describe('At most this many memories (1-100, default 10)'),
  mode: z.enum(['hybrid', 'lexical', 'semantic']).optional().describe('Default hybrid: by words and by meaning'),
  as_of: z.number().optional().describe(`What held at this time, ${SECONDS}. Default now`),
  known_at: z.number().optional().describe(`As the memory knew it at this time, ${SECONDS}. Default now`),
});

export const correctInput = z.object({
  memory_id: memoryId,
  text: z.string().optional().describe('The corrected statement'),
  valid_from: z.number().optional().describe(`When it became true, ${SECONDS}`),
  valid_to: z.number().nullable().optional().describe(`When it stopped being true, ${SECONDS}; null for open`),
  expected_generation: expectedGeneration,
});

export const forgetInput = z.object({ memory_id: memoryId, expected_generation: expectedGeneration });

export type RememberInput = z.infer<typeof rememberInput>;
export type RecallInput = z.infer<typeof recallInput>;
export type CorrectInput = z.infer<typeof correctInput>;
export type ForgetInput = z.infer<typeof forgetInput>;

export interface MemoryToolsOptions {
  /** A `@tms/client` client bound to a workspace (`createClient({ ..., workspace })` or `withWorkspace`). */
  client: TmsClient;
  /** The namespace the tools remember into and recall from (with the namespaces below it). */
  namespaceId: string;
}

/** Each tool's description and input schema, as both frameworks take them. */
export const MEMORY_TOOLS = {
  remember: {
    description: 'Store a memory: a fact, an event or a procedure worth keeping across conversations.',
    inputSchema: rememberInput,
  },
  recall: {
    description:
      'Find memories relevant to a query. The answer has a status: anything but complete means memories may be missing.',
    inputSchema: recallInput,
  },
  correct: {
    description: 'Correct a memory recalled earlier: its text or when it held. The history keeps the earlier version.',
    inputSchema: correctInput,
  },
  forget: {
    description: 'Retract a memory that is no longer true or wanted. It stops being recalled; its history is kept.',
    inputSchema: forgetInput,
  },
} as const;

/**
 * The four operations behind the memory tools of both frameworks, bound to a client and a namespace.
 * Each answers a small JSON object for the model or throws a `MemoryToolError` carrying the
 * service's code and detail.
 */
export function memoryOperations({ client, namespaceId }: MemoryToolsOptions) {
  let boundPath: Promise<string[]> | null = null;
  /** The newest commit these tools wrote: recall waits (up to 10 s) for the index to hold it. */
  let lastWritten = 0;
  const wrote = (commit: { sequence: number } | null) => {
    if (commit) lastWritten = Math.max(lastWritten, commit.sequence);
    return commit?.sequence ?? null;
  };

  /** The memory's current identity, refused unless it lies in the bound namespace or below it. */
  async function memoryInReach(id: string) {
    const { view } = await client.memories.get({ id });
    if (view.memory.namespace_id === namespaceId) return view.memory;
    boundPath ??= client.namespaces.get({ id: namespaceId }).then(({ namespace }) => namespace.display_path);
    const [bound, { namespace }] = await Promise.all([
      boundPath,
      client.namespaces.get({ id: view.memory.namespace_id }),
    ]);
    const below =
      bound.length < namespace.display_path.length && bound.every((n, i) => namespace.display_path[i] === n);
    if (!below) throw new MemoryToolError('not_found', `memory_id: ${id} is not in this tool's namespace`);
    return view.memory;
  }

  const guarded =
    <I, O>(run: (input: I) => Promise<O>) =>
    async (input: I): Promise<O> => {
      try {
        return await run(input);
      } catch (error) {
        throw toToolError(error);
      }
    };

  return {
    remember: guarded(async (input: RememberInput) => {
      const { memory, revision, commit } = await client.memories.create({
        namespace_id: namespaceId,
        kind: input.kind ?? 'claim',
        text: input.text,
        valid_from: input.valid_from ?? Date.now() / 1000,
        ...(input.valid_to === undefined ? {} : { valid_to: input.valid_to }),
      });
      return {
        memory_id: memory.id,
        generation: memory.generation,
        status: revision.status,
        commit_sequence: wrote(commit),
      };
    }),
    recall: guarded(async (input: RecallInput) => {
      const answer = await client.recall({
        namespace_ids: [namespaceId],
        query: input.query,
        budget: { max_items: input.max_items ?? 10 },
        ...(input.mode === undefined ? {} : { mode: input.mode }),
        ...(input.as_of === undefined ? {} : { as_of: input.as_of }),
        ...(input.known_at === undefined ? {} : { known_at: input.known_at }),
        ...(lastWritten > 0 ? { min_sequence: lastWritten, wait_ms: 10_000 } : {}),
      });
      return recallResult(answer);
    }),
    correct: guarded(async ({ memory_id, expected_generation, ...changes }: CorrectInput) => {
      const current = await memoryInReach(memory_id);
      const { memory, commit } = await client.memories.correct({
        id: memory_id,
        expected_generation: expected_generation ?? current.generation,
        ...Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)),
      });
      return { memory_id: memory.id, generation: memory.generation, commit_sequence: wrote(commit) };
    }),
    forget: guarded(async ({ memory_id, expected_generation }: ForgetInput) => {
      const current = await memoryInReach(memory_id);
      const answer = await client.memories.forget({
        id: memory_id,
        mode: 'retract',
        expected_generation: expected_generation ?? current.generation,
      });
      return { memory_id, retracted: true, commit_sequence: wrote(answer.commit) };
    }),
  };
}

export type MemoryOperations = ReturnType<typeof memoryOperations>;
