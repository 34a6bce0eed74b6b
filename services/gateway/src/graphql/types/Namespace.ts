import { fieldDescription, memoriesList, type Namespace, namespacesList } from '@tms/catalog';
import {
  at,
  atAll,
  atOrNull,
  boundedList,
  connectionComplexity,
  connectionOf,
  pageQuery,
  present,
  runOperation,
} from '../context';
import { MemoryKindEnum } from '../enums';
import { GrantRef, MemoryListConnection, type MemoryListItemModel, NamespaceConnection, NamespaceRef } from '../refs';

NamespaceRef.implement({
  description: 'A protected container of memories and evidence; namespaces nest up to 32 levels.',
  fields: (t) => ({
    id: t.exposeID('id'),
    workspaceId: t.exposeID('workspace_id'),
    parentId: t.exposeID('parent_id', { nullable: true }),
    name: t.exposeString('name'),
    displayPath: t.exposeStringList('display_path'),
    createdAt: t.exposeFloat('created_at'),
    updatedAt: t.exposeFloat('updated_at'),
    parent: t.field({
      type: NamespaceRef,
      nullable: true,
      description: 'The parent namespace; null for a root, or when the caller cannot read the parent.',
      resolve: async (ns, _args, ctx) =>
        ns.parent_id === null ? null : atOrNull(await ctx.loaders.namespace(ns.parent_id), ns.$knownAt),
    }),
    children: t.field({
      nullable: true,
      type: NamespaceConnection,
      description: 'The readable children, in display-path order (`namespaces.list` with `parent_id`).',
      args: { first: t.arg.int(), after: t.arg.string() },
      complexity: connectionComplexity,
      resolve: async (ns, args, ctx) => {
        const page = await runOperation<{ namespaces: Namespace[]; next_cursor: string | null }>(ctx, namespacesList, {
          query: { ...pageQuery(args), parent_id: ns.id },
        });
        return connectionOf(atAll(page.namespaces, ns.$knownAt), page.next_cursor);
      },
    }),
    grants: t.field({
      type: [GrantRef],
      nullable: true,
      description: 'The grants on this namespace, for callers holding `admin` on it (else a `forbidden` error).',
      complexity: boundedList(100),
      resolve: async (ns, _args, ctx) => atAll(await ctx.loaders.grants(ns.id), ns.$knownAt),
    }),
    memories: t.field({
      nullable: true,
      type: MemoryListConnection,
      description:
        'The memories of this namespace (not its descendants) current at `knownAt` and valid at `asOf`; with `key`, the one holding that key (`memories.list`).',
      args: {
        kind: t.arg({ type: MemoryKindEnum }),
        key: t.arg.string({ description: fieldDescription(memoriesList, 'key') }),
        asOf: t.arg.float(),
        knownAt: t.arg.float(),
        first: t.arg.int(),
        after: t.arg.string(),
      },
      complexity: connectionComplexity,
      resolve: async (ns, args, ctx) => {
        const page = await runOperation<{ items: MemoryListItemModel[]; next_cursor: string | null }>(
          ctx,
          memoriesList,
          {
            query: {
              ...pageQuery(args),
              ...present({ kind: args.kind, key: args.key, as_of: args.asOf, known_at: args.knownAt }),
              namespace_id: ns.id,
            },
          },
        );
        const knownAt = args.knownAt ?? ns.$knownAt;
        return connectionOf(
          page.items.map((item) => at(item, knownAt)),
          page.next_cursor,
        );
      },
    }),
  }),
});
