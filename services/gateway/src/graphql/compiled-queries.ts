import { createRequire } from 'node:module';
import type { DocumentNode, ExecutionResult, FieldNode, GraphQLSchema } from 'graphql';
import type * as GraphQLJit from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from './context';
import { RecentlyUsed } from './document-caches';
import { GraphQLError, getOperationAST, visit } from './graphql-js';

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

type CompiledRun = (root: unknown, context: unknown, variables: unknown) => ExecutionResult | Promise<ExecutionResult>;

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
 * from about 0.30 to 0.23 ms (`tsx bench/profile.ts graphql`, see the README's "Performance").
 *
 * Only queries of at most MAX_COMPILED_DOCUMENT_LENGTH characters, compiled within the
 * COMPILE_BUDGET: mutations and subscriptions keep graphql-js's executor. Parsing, validation,
 * limits and every other plugin run as before; this swaps the executor only, keyed by the
 * parsed document Yoga's cache hands out. An answer cannot change:
 * - Variables graphql-jit refuses were refused before any field ran; the standard executor then
 *   runs the request, so the errors are graphql-js's own.
 * - A field error is rebuilt as graphql-js builds it (`asGraphqlJsError`), and a result with
 *   errors lists them before its data, as graphql-js does.
 * `graphql-compiled-queries.test.ts` holds both executors' answers against each other.
 */
export function compiledQueries(options: CompiledQueriesOptions): Plugin<GraphQLContext> {
  const documents = new RecentlyUsed<DocumentNode, Map<string, Entry>>(MAX_TRACKED_DOCUMENTS);
  const budget = new CompileBudget();
  const counted = (executor: Executor) => options.onExecution?.(executor);

  /** The compiled code of this operation, compiling it on its COMPILE_ON_EXECUTION-th execution. */
  const compiledRun = (schema: GraphQLSchema, document: DocumentNode, operationName: string | null) => {
    let operations = documents.get(document);
    if (!operations) {
      operations = new Map();
      documents.set(document, operations);
    }

    const key = operationName ?? '';
    const entry = operations.get(key) ?? { executions: 0 };
    if ('run' in entry) return entry.run;
    if (!compilable(document, operationName ?? undefined)) {
      operations.set(key, { run: null });
      return null;
    }
    const executions = entry.executions + 1;
    if (executions < COMPILE_ON_EXECUTION || !budget.allows()) {
      operations.set(key, { executions });
      return null;
    }
    const started = performance.now();
    const compiled = compileQuery(schema, document, operationName ?? undefined, {
      // The error a field threw keeps its stack; graphql-jit's own errors need none.
      disablingCapturingStackErrors: true,
    });
    budget.spend(performance.now() - started);
    const run = isCompiledQuery(compiled) ? (compiled.query as CompiledRun) : null;
    operations.set(key, { run });
    return run;
  };

  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const run = options.enabled ? compiledRun(args.schema, args.document, args.operationName ?? null) : null;
      if (run === null) {
        counted('standard');
        return;
      }
      setExecuteFn(async (executeArgs) => {
        const result = await run(executeArgs.rootValue, executeArgs.contextValue, executeArgs.variableValues);
        if (result.errors && !('data' in result)) {
          // The variables were refused and nothing ran: graphql-js answers with its own errors.
          counted('standard');
          return executeFn(executeArgs);
        }
        counted('compiled');
        if (!result.errors) return result;
        const fields = fieldsByLocation(executeArgs.document);
        // graphql-js's key order: `errors` before `data`.
        return { errors: result.errors.map((error) => asGraphqlJsError(error, fields)), data: result.data };
      });
    },
  };
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
