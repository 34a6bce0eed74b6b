import { activeTracing, inSpan } from '@tms/telemetry';
import { type GraphQLError, getOperationAST } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { CompiledQueries } from './compiled-queries';
import type { GraphQLContext } from './context';
import { MAX_CACHED_DOCUMENTS, RecentlyUsed, validationResults } from './document-caches';
import { shapeError } from './errors';
import { armorPlugins, requestChecks } from './limits';
import { graphqlSchema } from './schema';
import { strictRequestParsing } from './strict-request';

export const GRAPHQL_PATH = '/graphql';

export interface YogaOptions {
  /** NODE_ENV=production: no field suggestions in validation messages. */
  production: boolean;
  /** Repeated queries' compiled code (`compiled-queries.ts`), shared with the direct path's known path. */
  compiledQueries: CompiledQueries;
}

export type GraphQLServer = YogaServerInstance<GraphQLContext, Record<string, never>>;

/** Every error of every answer as the spec's error object (see `errors.ts`). */
function errorShaping(): Plugin<GraphQLContext> {
  return {
    onResultProcess({ result, setResult, serverContext }) {
      const context = serverContext as unknown as GraphQLContext;
      const shape = <T extends { errors?: readonly GraphQLError[] }>(single: T): T =>
        single.errors?.length
          ? { ...single, errors: single.errors.map((e) => shapeError(e, context.requestId, context.logger)) }
          : single;
      if (Array.isArray(result)) setResult(result.map(shape));
      else if (!(Symbol.asyncIterator in (result as object))) setResult(shape(result as { errors?: GraphQLError[] }));
    },
    // Each event of a subscription stream is shaped the same way.
    onSubscribe() {
      return {
        onSubscribeResult() {
          return {
            onNext({ args, result, setResult }) {
              const context = args.contextValue as unknown as GraphQLContext;
              if (result.errors?.length) {
                setResult({
                  ...result,
                  errors: result.errors.map((e) => shapeError(e, context.requestId, context.logger)),
                });
              }
            },
          };
        },
      };
    },
  };
}

/**
 * A result the direct path (`direct-answers.ts`) already executed, answered by Yoga as if it had
 * executed it itself (its error formatting, statuses and content negotiation), without running
 * the operation a second time.
 */
function executedResults(): Plugin<GraphQLContext> {
  return {
    onParams({ context, setResult }) {
      const executed = (context as unknown as GraphQLContext).executed;
      if (executed) setResult(executed);
    },
  };
}

/** A subscription met on the direct path stops before it starts: Yoga streams it from the start. */
function subscriptionsToYoga(): Plugin<GraphQLContext> {
  return {
    onSubscribe({ args, setResultAndStopExecution }) {
      const directPath = (args.contextValue as GraphQLContext).directPath;
      if (directPath) {
        directPath.metSubscription = true;
        setResultAndStopExecution({ data: null });
      }
    },
  };
}

/**
 * A span per executed operation, a child of the request's server span (the statements it runs
 * are its children), named `graphql.<type> <name>`. Only while tracing is on: the no-op span
 * still cost each request an async wrapper around its execution.
 */
function operationSpans(): Plugin<GraphQLContext> {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      if (!activeTracing().enabled) return;
      const operation = getOperationAST(args.document, args.operationName);
      const type = operation?.operation ?? 'query';
      const name = operation?.name?.value ?? args.operationName ?? null;
      setExecuteFn((executeArgs) =>
        inSpan(
          name ? `graphql.${type} ${name}` : `graphql.${type}`,
          { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) },
          async () => executeFn(executeArgs),
        ),
      );
    },
  };
}

/**
 * The GraphQL server (graphql-yoga): one per gateway, fed one request at a time by the
 * `/graphql` route with a per-request context. Authentication, the request size cap and
 * GraphiQL are handled by that route, and so are plain POSTed queries (`direct-answers.ts`
 * runs them through this server's operation pipeline); here: the strict request decoder (the
 * one `/v1` and `/mcp` use), the query limits, the parser and validation caches
 * (`document-caches.ts`), compiled queries (`compiled-queries.ts`) and error shaping.
 * Subscriptions (the change feed) over server-sent events only (Yoga's own transport; no
 * WebSocket). No batching, no uploads. No CSRF check: every request authenticates with its
 * bearer header alone, which a cross-site request cannot carry (docs/graphql.md, "No CSRF header").
 */
export function createGraphQLServer(options: YogaOptions): GraphQLServer {
  return createYoga<GraphQLContext, Record<string, never>>({
    schema: graphqlSchema(),
    graphqlEndpoint: GRAPHQL_PATH,
    graphiql: false,
    landingPage: false,
    maskedErrors: false,
    batching: false,
    multipart: false,
    cors: false,
    logging: false,
    // Parsed documents in a cache of our own, validation results per document by our plugin.
    parserAndValidationCache: {
      documentCache: new RecentlyUsed(MAX_CACHED_DOCUMENTS),
      errorCache: new RecentlyUsed(MAX_CACHED_DOCUMENTS),
      validationCache: false,
    },
    // The /graphql route has capped the body (262144 bytes) before Yoga sees it.
    maxRequestBodySize: false,
    plugins: [
      validationResults(),
      strictRequestParsing(),
      ...armorPlugins(options),
      subscriptionsToYoga(),
      requestChecks(),
      options.compiledQueries.plugin(),
      operationSpans(),
      errorShaping(),
      executedResults(),
    ],
  }) as unknown as GraphQLServer;
}
