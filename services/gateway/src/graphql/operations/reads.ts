import {
  changesList,
  type Evidence,
  evidenceGet,
  fieldDescription,
  type MemoryView,
  meGet,
  memoriesGet,
  memoriesHistory,
  memoriesList,
  type Namespace,
  namespacesGet,
  namespacesList,
  type Revision,
  type Verification,
  type Workspace,
  workspacesList,
} from '@tms/catalog';
import { END_OF_TIME } from '@tms/domain';
import { builder } from '../builder';
import { at, atAll, connectionComplexity, connectionOf, pageQuery, present, runOperation, selects } from '../context';
import { MemoryKindEnum } from '../enums';
import {
  type EnrollmentModel,
  EvidenceRef,
  type MeModel,
  MemoryListConnection,
  type MemoryListItemModel,
  MemoryReadRef,
  MemoryRevisionConnection,
  MeRef,
  NamespaceConnection,
  NamespaceRef,
  WorkspaceConnection,
} from '../refs';

/**
 * The read operations, each one query field running the catalog operation through the domain
 * (so scopes, validation, bounds and `asOf`/`knownAt` are exactly `/v1`'s). Lists are Relay
 * connections over the domain's cursors: `first` is `limit`, `after` is `cursor`.
 * Top-level fields are nullable so that one failing field leaves the others' data.
 */
export const HANDWRITTEN_READS: ReadonlySet<string> = new Set([
  // `changes` (and its subscription) lives in `changes.ts`.
  changesList.name,
  meGet.name,
  workspacesList.name,
  namespacesList.name,
  namespacesGet.name,
  evidenceGet.name,
  memoriesGet.name,
  memoriesHistory.name,
  memoriesList.name,
]);

builder.queryFields((t) => ({
  me: t.field({
    type: MeRef,
    nullable: true,
    description: 'Who the server resolved the caller to (`me.get`).',
    resolve: (_root, _args, ctx) => runOperation<MeModel>(ctx, meGet, {}),
  }),

  workspaces: t.field({
    type: WorkspaceConnection,
    nullable: true,
    description: 'The workspaces the caller belongs to, and whether it may create one (`workspaces.list`).',
    args: { first: t.arg.int(), after: t.arg.string() },
    complexity: connectionComplexity,
    resolve: async (_root, args, ctx) => {
      const page = await runOperation<{
        workspaces: Workspace[];
        next_cursor: string | null;
        enrollment: EnrollmentModel;
      }>(ctx, workspacesList, { query: pageQuery(args) });
      return { ...connectionOf(atAll(page.workspaces, END_OF_TIME), page.next_cursor), enrollment: page.enrollment };
    },
  }),

  namespaces: t.field({
    type: NamespaceConnection,
    nullable: true,
    description:
      'Readable namespaces in display-path order, or the readable children of `parentId` (`namespaces.list`).',
    args: { parentId: t.arg.id(), first: t.arg.int(), after: t.arg.string() },
    complexity: connectionComplexity,
    resolve: async (_root, args, ctx) => {
      const page = await runOperation<{ namespaces: Namespace[]; next_cursor: string | null }>(ctx, namespacesList, {
        query: { ...pageQuery(args), ...present({ parent_id: args.parentId }) },
      });
      return connectionOf(atAll(page.namespaces, END_OF_TIME), page.next_cursor);
    },
  }),

  namespace: t.field({
    type: NamespaceRef,
    nullable: true,
    description: 'One namespace (`namespaces.get`).',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const out = await runOperation<{ namespace: Namespace }>(ctx, namespacesGet, { params: { id: args.id } });
      return at(out.namespace, END_OF_TIME);
    },
  }),

  evidence: t.field({
    type: EvidenceRef,
    nullable: true,
    description: 'Evidence with its verifications, oldest first, 32 a page (`evidence.get`).',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const out = await runOperation<{ evidence: Evidence; verifications: Verification[]; next_cursor: string | null }>(
        ctx,
        evidenceGet,
        { params: { id: args.id } },
      );
      return {
        ...at(out.evidence, END_OF_TIME),
        $page: { verifications: out.verifications, next_cursor: out.next_cursor },
      };
    },
  }),

  memory: t.field({
    type: MemoryReadRef,
    nullable: true,
    description:
      'A memory as it held at `asOf` and as the service knew it at `knownAt`, both defaulting to now (`memories.get`). Evidence is read when `view.evidence` or `view.verifications` is selected.',
    args: { id: t.arg.id({ required: true }), asOf: t.arg.float(), knownAt: t.arg.float() },
    resolve: async (_root, args, ctx, info) => {
      const includeEvidence = selects(info, [
        ['view', 'evidence'],
        ['view', 'verifications'],
      ]);
      const out = await runOperation<{ view: MemoryView; as_of: number; known_at: number }>(ctx, memoriesGet, {
        params: { id: args.id },
        query: { ...present({ as_of: args.asOf, known_at: args.knownAt }), include_evidence: includeEvidence },
      });
      return { view: at(out.view, out.known_at), as_of: out.as_of, known_at: out.known_at };
    },
  }),

  memoryHistory: t.field({
    type: MemoryRevisionConnection,
    nullable: true,
    description: 'The revisions of a memory, newest generation first, as known at `knownAt` (`memories.history`).',
    args: { id: t.arg.id({ required: true }), knownAt: t.arg.float(), first: t.arg.int(), after: t.arg.string() },
    complexity: connectionComplexity,
    resolve: async (_root, args, ctx) => {
      const page = await runOperation<{ revisions: Revision[]; next_cursor: string | null }>(ctx, memoriesHistory, {
        params: { id: args.id },
        query: { ...pageQuery(args), ...present({ known_at: args.knownAt }) },
      });
      return connectionOf(atAll(page.revisions, args.knownAt ?? END_OF_TIME), page.next_cursor);
    },
  }),

  memories: t.field({
    type: MemoryListConnection,
    nullable: true,
    description:
      'The memories of one namespace current at `knownAt` and valid at `asOf`, by memory id; with `key`, the one holding that key (`memories.list`).',
    args: {
      namespaceId: t.arg.id({ required: true }),
      kind: t.arg({ type: MemoryKindEnum }),
      key: t.arg.string({ description: fieldDescription(memoriesList, 'key') }),
      asOf: t.arg.float(),
      knownAt: t.arg.float(),
      first: t.arg.int(),
      after: t.arg.string(),
    },
    complexity: connectionComplexity,
    resolve: async (_root, args, ctx) => {
      const page = await runOperation<{ items: MemoryListItemModel[]; next_cursor: string | null }>(ctx, memoriesList, {
        query: {
          ...pageQuery(args),
          ...present({ kind: args.kind, key: args.key, as_of: args.asOf, known_at: args.knownAt }),
          namespace_id: args.namespaceId,
        },
      });
      return connectionOf(atAll(page.items, args.knownAt ?? END_OF_TIME), page.next_cursor);
    },
  }),
}));
