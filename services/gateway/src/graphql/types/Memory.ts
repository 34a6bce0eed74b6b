import { memoriesHistory, type Revision } from '@tms/catalog';
import { atAll, atOrNull, connectionComplexity, connectionOf, pageQuery, present, runOperation } from '../context';
import { MemoryKindEnum } from '../enums';
import { MemoryRef, MemoryRevisionConnection, NamespaceRef } from '../refs';

MemoryRef.implement({
  description: 'A memory’s identity; `generation` is the latest as known at the read’s `known_at`.',
  fields: (t) => ({
    id: t.exposeID('id'),
    namespaceId: t.exposeID('namespace_id'),
    kind: t.expose('kind', { type: MemoryKindEnum }),
    generation: t.expose('generation', { type: 'SafeInt' }),
    key: t.exposeString('key', {
      nullable: true,
      description:
        'The caller’s own name for the memory, unique among its namespace’s current memories; null when none.',
    }),
    namespace: t.field({
      type: NamespaceRef,
      nullable: true,
      resolve: async (memory, _args, ctx) =>
        atOrNull(await ctx.loaders.namespace(memory.namespace_id), memory.$knownAt),
    }),
    history: t.field({
      nullable: true,
      type: MemoryRevisionConnection,
      description: 'The revisions, newest generation first, as known at `knownAt` (`memories.history`).',
      args: { knownAt: t.arg.float(), first: t.arg.int(), after: t.arg.string() },
      complexity: connectionComplexity,
      resolve: async (memory, args, ctx) => {
        const page = await runOperation<{ revisions: Revision[]; next_cursor: string | null }>(ctx, memoriesHistory, {
          params: { id: memory.id },
          query: { ...pageQuery(args), ...present({ known_at: args.knownAt }) },
        });
        return connectionOf(atAll(page.revisions, args.knownAt ?? memory.$knownAt), page.next_cursor);
      },
    }),
  }),
});
