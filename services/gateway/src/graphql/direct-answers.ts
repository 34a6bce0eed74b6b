import type { ExecutionResult } from 'graphql';
import type { GraphQLParams } from 'graphql-yoga';
import type { CompiledQueries } from './compiled-queries';
import type { GraphQLContext } from './context';
import { decodePostedParams } from './strict-request';
import type { GraphQLServer } from './yoga';

/**
 * The media type Yoga answers a plain (non-streamed) result with, for the `Accept` values the
 * direct path serves; null for any other value (Yoga negotiates those itself). Yoga takes the
 * last of its result types that the header matches, so no header, an empty one and the
 * wildcard all get `application/json`.
 */
export function directMediaType(accept: string | null): string | null {
  switch (accept) {
    case null:
    case '':
    case '*/*':
    case 'application/json':
      return 'application/json';
    case 'application/graphql-response+json':
      return 'application/graphql-response+json';
    default:
      return null;
  }
}

/**
 * What stands in for the Fetch API request on this path. Yoga's operation plugins read only its
 * method (no mutation over GET) and use it as a key (a subscription's media types, which Yoga
 * negotiates itself when handed the result); nothing of ours reads it.
 */
const POSTED = Object.freeze({ method: 'POST' }) as unknown as Request;

/**
 * What executed a request the direct path answers: the known path of compiled queries
 * (`known`, see `CompiledQueries.runKnown`) or Yoga's operation pipeline (`direct`).
 */
export type ExecutedBy = 'direct' | 'known';

export type DirectOutcome =
  /** The answer body: an error-free result, serialized as Yoga serializes it. */
  | { kind: 'answered'; body: Buffer; path: ExecutedBy }
  /** Executed, but the answer needs Yoga's formatting (errors, a stream): hand it the result. */
  | { kind: 'executed'; result: ExecutionResult | AsyncIterable<ExecutionResult> }
  /** Refused before anything executed: Yoga handles the request from the start. */
  | { kind: 'not_run' };

/** Only `data`: no errors and no extensions, so no status or header of Yoga's depends on it. */
function isPlainData(result: unknown): result is ExecutionResult {
  if (result === null || typeof result !== 'object' || Symbol.asyncIterator in result) return false;
  for (const key in result) if (key !== 'data') return false;
  return true;
}

/**
 * Runs a POSTed GraphQL request through Yoga's own operation pipeline (`getResultForParams`:
 * its parameter checks, the enveloped parse, validation, limit and execution plugins, and
 * caches) without building a Fetch API request and response around it, which costs as much
 * CPU as the whole `/v1` read. The body is decoded as Yoga's request parser decodes it
 * (`decodePostedParams`), so a body either decodes the same on both paths or is left to Yoga.
 *
 * Only what cannot differ from Yoga's answer is written here: an error-free result for a
 * request whose `Accept` is one of `directMediaType`'s. Everything refused before execution
 * (an undecodable body, a bad parameter) is `not_run`, and so is a subscription; everything
 * executed whose answer Yoga formats (errors, their HTTP status) is handed back as `executed`,
 * so nothing runs twice. A query text already run here on compiled code skips the pipeline
 * too (the known path, `CompiledQueries.runKnown`), unless that path declines it.
 */
export async function answerDirectly(
  server: GraphQLServer,
  compiledQueries: CompiledQueries,
  contentType: string | null,
  bytes: Uint8Array,
  context: GraphQLContext,
): Promise<DirectOutcome> {
  let params: GraphQLParams;
  try {
    params = decodePostedParams(contentType, bytes);
  } catch {
    return { kind: 'not_run' };
  }
  const known = await compiledQueries.runKnown(params, context);
  if (known !== null) return outcomeOf(known, 'known');

  let result: Awaited<ReturnType<GraphQLServer['getResultForParams']>>;
  const directPath: NonNullable<GraphQLContext['directPath']> = { metSubscription: false };
  context.directPath = directPath;
  try {
    result = await server.getResultForParams({ params, request: POSTED }, context as never);
  } catch {
    // Thrown only by the parameter checks (`onParams`), which run before any execution;
    // execution errors come back in the result.
    return { kind: 'not_run' };
  } finally {
    context.directPath = undefined;
  }
  // Stopped before it started (`subscriptionsToYoga` in yoga.ts).
  if (directPath.metSubscription) return { kind: 'not_run' };
  // Yoga's type allows no result; its handler always returns one.
  if (result === undefined) return { kind: 'not_run' };
  // Parsed, validated and run on compiled code: the known path takes this text from now on.
  if (directPath.compiled && typeof params.query === 'string') {
    compiledQueries.remember(params.query, params.operationName ?? undefined, directPath.compiled);
  }
  return outcomeOf(result, 'direct');
}

function outcomeOf(result: ExecutionResult | AsyncIterable<ExecutionResult>, path: ExecutedBy): DirectOutcome {
  if (!isPlainData(result)) return { kind: 'executed', result };
  return { kind: 'answered', body: Buffer.from(JSON.stringify(result)), path };
}
