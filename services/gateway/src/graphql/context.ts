import type { Operation } from '@tms/catalog';
import type { Caller, Deadline, Domain, RequestLoaders } from '@tms/domain';
import type {
  DocumentNode,
  ExecutionResult,
  FieldNode,
  GraphQLResolveInfo,
  GraphQLSchema,
  SelectionSetNode,
} from 'graphql';
import type { GraphQLParams } from 'graphql-yoga';
import type { Logger } from 'pino';
import { Kind } from './graphql-js';
import type { StreamSlots } from './streams';

/** The code graphql-jit compiled for one operation of a document. */
export type CompiledRun = (
  root: unknown,
  context: unknown,
  variables: unknown,
) => ExecutionResult | Promise<ExecutionResult>;

/** A document's operation compiled, as the known path keeps it (`compiled-queries.ts`). */
export interface CompiledOperation {
  schema: GraphQLSchema;
  document: DocumentNode;
  run: CompiledRun;
}

/** Everything a resolver may use; built afresh for each HTTP request (loaders included). */
export interface GraphQLContext {
  domain: Domain;
  caller: Caller;
  requestId: string;
  /** `X-Service-Workspace` as sent, or null (the same selection as `/v1`). */
  selectedWorkspaceId: string | null;
  /** Per-request batch loaders for nested fields (never shared across requests). */
  loaders: RequestLoaders;
  /** Whether this caller may introspect the schema (admins, unless configured off). */
  introspection: boolean;
  logger: Logger;
  /** The request's deadline, handed to every operation (writes roll back past it). */
  deadline: Deadline;
  /** Authenticate the request's bearer token again (each batch of a subscription does). */
  reauthenticate(): Promise<Caller>;
  /** The operation deadline in ms, for work a subscription starts after the request's own deadline. */
  timeoutMs: number;
  /** Open subscription streams of this process (bounded). */
  streams: StreamSlots;
  /** The request's parameters, set by Yoga as it runs the operation (`YogaInitialContext`). */
  params?: GraphQLParams;
  /** Set when the known path of compiled queries answered the request (`tms_graphql_answers_total`). */
  answeredByKnownPath?: boolean;
}

/**
 * A resource as the domain answered it (snake_case JSON), tagged with the record time it was
 * read at, so that nested fields mask what was recorded later exactly like `/v1` does.
 */
export type At<T> = T & { readonly $knownAt: number };

export function at<T extends object>(value: T, knownAt: number): At<T> {
  return { ...value, $knownAt: knownAt };
}

export function atOrNull<T extends object>(value: T | null | undefined, knownAt: number): At<T> | null {
  return value ? at(value, knownAt) : null;
}

export function atAll<T extends object>(values: readonly T[], knownAt: number): At<T>[] {
  return values.map((value) => at(value, knownAt));
}

/** Drop null and undefined: GraphQL's "no value" for an optional argument is either. */
export function present(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in values) {
    const value = values[key];
    if (value !== undefined && value !== null) out[key] = value;
  }
  return out;
}

/**
 * Run one catalog operation through the domain exactly as `/v1` does (validation, scope,
 * workspace, idempotency, transaction) and take its answer: a read's as the domain built it,
 * a write's parsed from its JSON (a replay has nothing else).
 */
export async function runOperation<T = Record<string, unknown>>(
  ctx: GraphQLContext,
  operation: Operation,
  raw: { params?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown },
  idempotencyKey: string | null = null,
): Promise<T> {
  const result = await ctx.domain.execute(
    operation,
    { params: raw.params ?? {}, query: raw.query ?? {}, body: raw.body },
    {
      caller: ctx.caller,
      requestId: ctx.requestId,
      selectedWorkspaceId: ctx.selectedWorkspaceId,
      idempotencyKey,
      deadline: ctx.deadline,
    },
  );
  return (result.value ?? JSON.parse(result.json)) as T;
}

/** The shape a connection field resolves to: one domain page. */
export interface ConnectionPage<T> {
  edges: { node: T; cursor: string }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

/**
 * A Relay connection over one domain page. The domain issues a single opaque cursor per page
 * (`next_cursor`), so it is the page's `endCursor` and the cursor of its last edge; the other
 * edges have none.
 */
export function connectionOf<T>(nodes: readonly T[], nextCursor: string | null): ConnectionPage<T> {
  return {
    edges: nodes.map((node, i) => ({ node, cursor: (i === nodes.length - 1 ? nextCursor : null) as string })),
    pageInfo: { hasNextPage: nextCursor !== null, hasPreviousPage: false, startCursor: null, endCursor: nextCursor },
  };
}

function selectionHas(info: GraphQLResolveInfo, set: SelectionSetNode | undefined, name: string): FieldNode[] {
  if (!set) return [];
  const found: FieldNode[] = [];
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === name) found.push(selection);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      found.push(...selectionHas(info, selection.selectionSet, name));
    } else {
      found.push(...selectionHas(info, info.fragments[selection.name.value]?.selectionSet, name));
    }
  }
  return found;
}

/**
 * Answers of `selects` per field nodes (they belong to one parsed document, which the executor
 * hands out again for every request sending the same document) and path.
 */
const selected = new WeakMap<readonly FieldNode[], Map<string, boolean>>();

/** Whether the current field's selection reaches `path` (through fragments too). */
export function selects(info: GraphQLResolveInfo, path: readonly (readonly string[])[]): boolean {
  const key = path.map((alternative) => alternative.join('.')).join('|');
  let answers = selected.get(info.fieldNodes);
  if (!answers) {
    answers = new Map();
    selected.set(info.fieldNodes, answers);
  }
  let answer = answers.get(key);
  if (answer === undefined) {
    answer = reaches(info, path);
    answers.set(key, answer);
  }
  return answer;
}

function reaches(info: GraphQLResolveInfo, path: readonly (readonly string[])[]): boolean {
  return path.some((alternative) => {
    let nodes: readonly FieldNode[] = info.fieldNodes;
    for (const name of alternative) {
      nodes = nodes.flatMap((node) => selectionHas(info, node.selectionSet, name));
      if (nodes.length === 0) return false;
    }
    return true;
  });
}

/** Connection arguments in `/v1` terms. */
export function pageQuery(args: { first?: number | null; after?: string | null }) {
  return present({ limit: args.first, cursor: args.after });
}

/** Complexity of a connection field: its selection counts once per requested item (default page 50). */
export const connectionComplexity = (args: { first?: number | null }) => ({
  field: 1,
  multiplier: Math.max(1, args.first ?? 50),
});

/** Complexity of a list bounded by `max` items (evidence of a revision, grants, ...). */
export const boundedList = (max: number) => ({ field: 1, multiplier: max });
