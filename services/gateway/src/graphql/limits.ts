import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { createComplexityRule } from '@pothos/plugin-complexity';
import type {
  DocumentNode,
  GraphQLError,
  OperationDefinitionNode,
  SelectionSetNode,
  VariableDefinitionNode,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from './context';
import { markOverLimit, refusal } from './errors';
import { getOperationAST, Kind, validate } from './graphql-js';

/**
 * What one GraphQL request may ask, checked before anything executes. A query over a limit is
 * refused whole with `budget_exceeded` (the same 262144-byte request cap as `/v1` applies to
 * the HTTP body first).
 */
export const GRAPHQL_LIMITS = {
  /** Nesting of selections (introspection's own nesting excepted). */
  maxDepth: 12,
  /** Aliased fields in one document. */
  maxAliases: 20,
  /** Lexical tokens in one document (GraphiQL's introspection query has about 200). */
  maxTokens: 2000,
  /**
   * Estimated cost: every field 1, a connection's selection times `first` (default 50), a list
   * of references times its bound (32). A page of 100 memories with their evidence (and the
   * evidence's namespace) costs about 15000; the same page with every evidence item's
   * verifications, about 300000.
   */
  maxComplexity: 25000,
} as const;

/** What the per-request checks read: the arguments of an execution. */
export interface RequestCheckArgs {
  contextValue: unknown;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: unknown;
  schema: Parameters<typeof validate>[0];
}

const onReject = [(_context: unknown, error: GraphQLError) => markOverLimit(error)];

/** Depth, alias and token limits (graphql-armor), and no field suggestions in production. */
export function armorPlugins(options: { production: boolean }): Plugin[] {
  return [
    maxTokensPlugin({ n: GRAPHQL_LIMITS.maxTokens, onReject }),
    maxDepthPlugin({ n: GRAPHQL_LIMITS.maxDepth, ignoreIntrospection: true, flattenFragments: true, onReject }),
    maxAliasesPlugin({ n: GRAPHQL_LIMITS.maxAliases, onReject }),
    ...(options.production ? [blockFieldSuggestionsPlugin()] : []),
  ] as Plugin[];
}

function reachesIntrospection(
  document: DocumentNode,
  set: SelectionSetNode | undefined,
  seen: Set<string> = new Set(),
): boolean {
  if (!set) return false;
  return set.selections.some((selection) => {
    if (selection.kind === Kind.FIELD) return selection.name.value === '__schema' || selection.name.value === '__type';
    if (selection.kind === Kind.INLINE_FRAGMENT) return reachesIntrospection(document, selection.selectionSet, seen);
    if (seen.has(selection.name.value)) return false;
    seen.add(selection.name.value);
    const fragment = document.definitions.find(
      (d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === selection.name.value,
    );
    return fragment?.kind === Kind.FRAGMENT_DEFINITION && reachesIntrospection(document, fragment.selectionSet, seen);
  });
}

/** Variables whose values cannot change a cost: strings given for `ID` or `String` variables. */
function costFreeVariable(definition: VariableDefinitionNode, value: unknown): boolean {
  const type = definition.type.kind === Kind.NON_NULL_TYPE ? definition.type.type : definition.type;
  return (
    type.kind === Kind.NAMED_TYPE &&
    (type.name.value === 'ID' || type.name.value === 'String') &&
    typeof value === 'string'
  );
}

/**
 * What the cost check of one operation depends on besides its document: the operation name and
 * the variables that can change the cost or fail coercion. Field complexities read only
 * arguments (`first`, see `connectionComplexity`), never the caller; an `ID` or `String`
 * variable cannot feed a `first` (validation refuses it), and a string always coerces to it,
 * so the ids a view names do not count.
 */
function costKey(
  operation: OperationDefinitionNode,
  operationName: string | null | undefined,
  variables: unknown,
): string {
  const values = (variables ?? {}) as Record<string, unknown>;
  const parts = (operation.variableDefinitions ?? []).map((definition) => {
    const value = values[definition.variable.name.value];
    return costFreeVariable(definition, value) ? 's' : JSON.stringify(value ?? null);
  });
  return `${operationName ?? ''}\u0000${parts.join(',')}`;
}

/** Per parsed document (Yoga's parse cache hands out the same object), the cost keys that passed. */
const costsPassed = new WeakMap<DocumentNode, Set<string>>();
/** Keys kept per document: a document asked with many page sizes is checked afresh past this. */
const MAX_COST_KEYS = 64;

/**
 * Checks that depend on the caller or the variables, so they run per request just before
 * execution (never cached with the parsed and validated document): introspection only for
 * callers allowed it, and the cost limit computed from the schema's field complexities.
 * No errors, or the errors the request is refused with. Run by `requestChecks` in Yoga's
 * pipeline and by the known path of compiled queries (`compiled-queries.ts`).
 */
export function requestRefusals(args: RequestCheckArgs): readonly GraphQLError[] {
  const context = args.contextValue as GraphQLContext;
  const operation: OperationDefinitionNode | null | undefined = getOperationAST(
    args.document,
    args.operationName ?? undefined,
  );
  if (!operation) return [];
  if (!context.introspection && reachesIntrospection(args.document, operation.selectionSet)) {
    return [refusal('forbidden', 'Introspection is not allowed for this caller.', 403)];
  }
  const key = costKey(operation, args.operationName, args.variableValues);
  if (costsPassed.get(args.document)?.has(key)) return [];
  const errors = validate(args.schema, args.document, [
    createComplexityRule({
      context,
      variableValues: (args.variableValues ?? {}) as Record<string, unknown>,
      operationName: args.operationName ?? undefined,
      validate: (result, report) => {
        if (result.complexity > GRAPHQL_LIMITS.maxComplexity) {
          report(
            refusal(
              'budget_exceeded',
              `Query complexity of ${result.complexity} exceeds the limit of ${GRAPHQL_LIMITS.maxComplexity}.`,
            ),
          );
        }
      },
    }),
  ]);
  // Only a pass is remembered: a refusal is built afresh, with this request's own errors.
  if (errors.length === 0) {
    const passed = costsPassed.get(args.document) ?? new Set<string>();
    if (passed.size < MAX_COST_KEYS) passed.add(key);
    costsPassed.set(args.document, passed);
  }
  return errors;
}

/** `requestRefusals` before every execution in Yoga's pipeline. */
export function requestChecks(): Plugin<GraphQLContext> {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const errors = requestRefusals(args);
      if (errors.length > 0) setResultAndStopExecution({ errors });
    },
    // Subscriptions do not pass `onExecute`: the same checks before a stream opens.
    onSubscribe({ args, setResultAndStopExecution }) {
      const errors = requestRefusals(args);
      if (errors.length > 0) setResultAndStopExecution({ errors });
    },
  };
}
