import { createRequire } from 'node:module';
import { activeTracing } from '@tms/telemetry';
import type { DocumentNode, ExecutionResult, FieldNode, GraphQLSchema } from 'graphql';
import type * as GraphQLJit from 'graphql-jit';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import type { CompiledOperation, CompiledRun, GraphQLContext } from './context';
import { RecentlyUsed } from './document-caches';
import { GraphQLError, getOperationAST, visit } from './graphql-js';
import { requestRefusals } from './limits';

// graphql-jit loaded as Node resolves it (its CommonJS build), so that it shares graphql-js
// with Yoga and Pothos (see `graphql-js.ts`).
const { compileQuery, isCompiledQuery } = createRequire(import.meta.url)('graphql-jit') as typeof GraphQLJit;

/**
 * A query is compiled on its second execution: one sent once (an admin exploring in
 * GraphiQL) never pays for a compilation, which costs far more than one execution.
 */
export const COMPILE_ON_EXECUTION = 2;

/**
 * Documents whose operations are tracked (executions, compiled code), least recently executed
 * dropped first: a client sending ever new documents cannot grow this, and a dropped document
 * is compiled again on its second execution after.
 */
export const MAX_TRACKED_DOCUMENTS = 500;

/**
 * Compilation time grows with the document (here about 2.5 ms for the 56 tokens of a memory
 * view, about 20 ms for 600 tokens), and a client could send ever new documents twice each.
 * So a document longer than this (characters of its text) is never compiled...
 */
export const MAX_COMPILED_DOCUMENT_LENGTH = 2000;

/**
 * ...and compiling takes at most this share of the process's time: a budget of milliseconds,
 * refilled at `msPerSecond` up to `burstMs`. A query that finds it spent runs on graphql-js's
 * executor and is compiled at a later execution.
 */
export const COMPILE_BUDGET = { msPerSecond: 50, burstMs: 250 } as const;

/** Milliseconds of compilation allowed now, refilled with the passing time (`now` in ms). */
export class CompileBudget {
  private available: number;
  private refilledAt: number;

  constructor(
    private readonly limits: { msPerSecond: number; burstMs: number } = COMPILE_BUDGET,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.available = limits.burstMs;
    this.refilledAt = now();
  }

  /** Whether a compilation may start now. */
  allows(): boolean {
    const now = this.now();
    this.available = Math.min(
      this.limits.burstMs,
      this.available + ((now - this.refilledAt) * this.limits.msPerSecond) / 1000,
    );
    this.refilledAt = now;
    return this.available > 0;
  }

  /** Charge a compilation that took `ms`. */
  spend(ms: number): void {
    this.available -= ms;
  }
}

export type Executor = 'compiled' | 'standard';

/** Per operation of a document: how often it ran, or its compiled code (null: not a compiled kind). */
type Entry = { executions: number } | { run: CompiledRun | null };

export interface CompiledQueriesOptions {
  /** False: every operation runs on graphql-js's executor (tests compare the two). */
  enabled: boolean;
  onExecution?: (executor: Executor) => void;
}

/**
 * Queries executed by code compiled for their document (graphql-jit) instead of graphql-js's
 * executor walking the document field by field on every request: gateway CPU per memory view
 * from about 0.30 to 0.23 ms (`tsx bench/profile.ts graphql`, see docs/performance.md).
 *
 * Only queries of at most MAX_COMPILED_DOCUMENT_LENGTH characters, compiled within the
 * COMPILE_BUDGET: mutations and subscriptions keep graphql-js's executor. Parsing, validation,
 * limits and every other plugin run as before (`plugin()`); this swaps the executor only, keyed
 * by the parsed document Yoga's cache hands out. An answer cannot change:
 * - Variables graphql-jit refuses were refused before any field ran; the standard executor then
 *   runs the request, so the errors are graphql-js's own.
 * - A field error is rebuilt as graphql-js builds it (`asGraphqlJsError`), and a result with
 *   errors lists them before its data, as graphql-js does.
 * `graphql-compiled-queries.test.ts` holds both executors' answers against each other.
 *
 * The known path (see `plugin()`) goes one step further, inside the same pipeline: a query text
 * whose operation already ran on compiled code runs that code at once, after only the checks
 * that depend on the request.
 */
export class CompiledQueries {
  private readonly documents = new RecentlyUsed<DocumentNode, Map<string, Entry>>(MAX_TRACKED_DOCUMENTS);
  /** Query texts whose operations ran on compiled code, by operation name ('' for none): the known path. */
  private readonly known = new RecentlyUsed<string, Map<string, CompiledOperation>>(MAX_TRACKED_DOCUMENTS);
  private readonly budget = new CompileBudget();

  constructor(private readonly options: CompiledQueriesOptions) {}

  private counted(executor: Executor): void {
    this.options.onExecution?.(executor);
  }

  /** The compiled code of this operation, compiling it on its COMPILE_ON_EXECUTION-th execution. */
  private compiledRun(schema: GraphQLSchema, document: DocumentNode, operationName: string | null): CompiledRun | null {
    let operations = this.documents.get(document);
    if (!operations) {
      operations = new Map();
      this.documents.set(document, operations);
    }

    const key = operationName ?? '';
    const entry = operations.get(key) ?? { executions: 0 };
    if ('run' in entry) return entry.run;
    if (!compilable(document, operationName ?? undefined)) {
      operations.set(key, { run: null });
      return null;
    }
    const executions = entry.executions + 1;
    if (executions < COMPILE_ON_EXECUTION || !this.budget.allows()) {
      operations.set(key, { executions });
      return null;
    }
    const started = performance.now();
    const compiled = compileQuery(schema, document, operationName ?? undefined, {
      // The error a field threw keeps its stack; graphql-jit's own errors need none.
      disablingCapturingStackErrors: true,
    });
    this.budget.spend(performance.now() - started);
    const run = isCompiledQuery(compiled) ? (compiled.query as CompiledRun) : null;
    operations.set(key, { run });
    return run;
  }

  /**
   * The result of compiled code as graphql-js's executor would have returned it, or null when
   * graphql-jit refused the variables (nothing ran: graphql-js must answer with its own errors).
   */
  private asExecuted(result: ExecutionResult, document: DocumentNode): ExecutionResult | null {
    if (result.errors && !('data' in result)) return null;
    this.counted('compiled');
    if (!result.errors) return result;
    const fields = fieldsByLocation(document);
    // graphql-js's key order: `errors` before `data`.
    return { errors: result.errors.map((error) => asGraphqlJsError(error, fields)), data: result.data };
  }

  /**
   * Both in Yoga's plugin chain. On `onParams`, the known path: a query text (and operation name)
   * whose operation already ran on compiled code in this pipeline has passed parsing and
   * validation, which depend on the text alone (the schema and the rules never change), so its
   * compiled code runs at once and its result is the pipeline's (`setResult`): Yoga's
   * parse and validation caches, context assembly, hooks and promise chain are skipped, about a
   * sixth of a memory view's gateway CPU (docs/performance.md). What depends on the request still
   * runs: the parameters' shape (anything but `query`, a string `operationName` and object
   * `variables` takes the full pipeline, and Yoga's own parameter checks run after this hook),
   * and the introspection and cost checks (`requestRefusals`, the pipeline's own). Nothing is
   * executed, and the pipeline answers, for an unknown text, a refusal, variables graphql-jit
   * refuses, or tracing on (the pipeline's operation span).
   *
   * On `onExecute`, the executor swap: compiled code for an operation on its
   * COMPILE_ON_EXECUTION-th execution, remembered for the known path by its text.
   */
  plugin(): Plugin<GraphQLContext> {
    return {
      onParams: ({ params, context, setResult }) => {
        if (!this.options.enabled || activeTracing().enabled || !isPlainParams(params)) return;
        const operation = this.known.get(params.query)?.get(params.operationName ?? '');
        if (!operation) return;
        const refusals = requestRefusals({
          contextValue: context,
          document: operation.document,
          operationName: params.operationName,
          variableValues: params.variables,
          schema: operation.schema,
        });
        if (refusals.length > 0) return;
        const answer = (result: ExecutionResult) => {
          const executed = this.asExecuted(result, operation.document);
          if (executed === null) return;
          (context as GraphQLContext).answeredByKnownPath = true;
          setResult(executed);
        };
        const ran = operation.run(undefined, context, params.variables);
        return ran instanceof Promise ? ran.then(answer) : answer(ran);
      },
      onExecute: ({ args, executeFn, setExecuteFn }) => {
        const run = this.options.enabled
          ? this.compiledRun(args.schema, args.document, args.operationName ?? null)
          : null;
        if (run === null) {
          this.counted('standard');
          return;
        }
        const params = (args.contextValue as GraphQLContext).params;
        if (params && isPlainParams(params)) {
          this.remember(params.query, params.operationName, { schema: args.schema, document: args.document, run });
        }
        setExecuteFn(async (executeArgs) => {
          const result = await run(executeArgs.rootValue, executeArgs.contextValue, executeArgs.variableValues);
          const executed = this.asExecuted(result, executeArgs.document);
          if (executed) return executed;
          this.counted('standard');
          return executeFn(executeArgs);
        });
      },
    };
  }

  /** Remember an operation run on compiled code, by its query text, for the known path. */
  private remember(query: string, operationName: string | undefined, operation: CompiledOperation): void {
    let operations = this.known.get(query);
    if (!operations) {
      operations = new Map();
      this.known.set(query, operations);
    }
    operations.set(operationName ?? '', operation);
  }
}

/** Parameters the known path takes: a string `query`, and only a string `operationName` and object `variables` besides. */
function isPlainParams(params: GraphQLParams): params is GraphQLParams & { query: string; operationName?: string } {
  // A body is any JSON value until Yoga's parameter checks refuse it (`null`, a list, a number).
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  for (const key in params) {
    if (key !== 'query' && key !== 'operationName' && key !== 'variables') return false;
  }
  if (typeof params.query !== 'string') return false;
  if (params.operationName !== undefined && typeof params.operationName !== 'string') return false;
  const variables = params.variables as unknown;
  return variables === undefined || (typeof variables === 'object' && variables !== null && !Array.isArray(variables));
}

/** A query short enough to compile; mutations and subscriptions never are. */
function compilable(document: DocumentNode, operationName: string | undefined): boolean {
  if ((document.loc?.end ?? Number.POSITIVE_INFINITY) > MAX_COMPILED_DOCUMENT_LENGTH) return false;
  return getOperationAST(document, operationName)?.operation === 'query';
}

/**
 * A field error of graphql-jit as graphql-js builds it (`locatedError`): the message, the
 * field's nodes (hence its locations), the path and the error it wraps (hence its extensions).
 * graphql-jit keeps the nodes' locations only; the nodes are found again by them.
 */
function asGraphqlJsError(error: GraphQLError, fields: FieldsByLocation): GraphQLError {
  const nodes = error.locations?.flatMap((location) => fields.get(`${location.line}:${location.column}`) ?? []);
  return new GraphQLError(error.message, {
    nodes: nodes?.length ? nodes : undefined,
    path: error.path,
    originalError: error.originalError,
  });
}

/** A document's field nodes by where they start (`line:column`), as graphql-jit locates errors. */
type FieldsByLocation = Map<string, FieldNode>;

function fieldsByLocation(document: DocumentNode): FieldsByLocation {
  const fields: FieldsByLocation = new Map();
  visit(document, {
    Field(node) {
      const start = node.loc?.startToken;
      if (start) fields.set(`${start.line}:${start.column}`, node);
    },
  });
  return fields;
}
