import { activeTracing, inSpan } from '@tms/telemetry';
import { getOperationAST } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { CompiledQueries } from './compiled-queries';
import type { GraphQLContext } from './context';
import { MAX_CACHED_DOCUMENTS, RecentlyUsed, validationResults } from './document-caches';
import { armorPlugins, requestChecks } from './limits';
import { graphqlSchema } from './schema';

export const GRAPHQL_PATH = '/graphql';

export interface YogaOptions {
  /** NODE_ENV=production: no field suggestions in validation messages. */
  production: boolean;
  /** Repeated queries' compiled code and the known path (`compiled-queries.ts`). */
  compiledQueries: CompiledQueries;
}

export type GraphQLServer = YogaServerInstance<GraphQLContext, Record<string, never>>;

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
 * The GraphQL server (graphql-yoga): one per gateway. The `/graphql` route (`http.ts`) enters it
 * once per request, at `getResultForParams`, with the request's strictly decoded parameters and
 * a per-request context, and writes the result it gets back (`answer.ts`); Yoga's Fetch API
 * request handler is not used. What runs, in this order (the plugin chain below, then Yoga's own):
 * - `onParams`: the known path of compiled queries (a text already run on compiled code runs it
 *   at once), then Yoga's parameter checks;
 * - the parse cache, graphql-armor's token limit, validation (its results per document,
 *   `document-caches.ts`; depth and alias limits, no field suggestions in production);
 * - `onExecute`/`onSubscribe`: the introspection and cost checks (`limits.ts`), the executor
 *   (compiled code or graphql-js, `compiled-queries.ts`), the operation's span when tracing.
 * Subscriptions (the change feed) come back as a stream, answered as server-sent events; no
 * WebSocket. No batching, no uploads. No CSRF check: every request authenticates with its bearer
 * header alone, which a cross-site request cannot carry (docs/graphql.md, "No CSRF header").
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
    // The /graphql route caps and decodes the body (262144 bytes) itself: Yoga never reads one.
    maxRequestBodySize: false,
    plugins: [
      validationResults(),
      ...armorPlugins(options),
      requestChecks(),
      // Its `onParams` (the known path) is the chain's first; its `onExecute` after the checks.
      options.compiledQueries.plugin(),
      operationSpans(),
    ],
  }) as unknown as GraphQLServer;
}
