import { DomainError, decodeJsonBody, parseStrictJson } from '@tms/domain';
import type { GraphQLParams } from 'graphql-yoga';
import { refusal } from './errors';
import { GraphQLError } from './graphql-js';

/** The GET parameters GraphQL over HTTP defines; the JSON ones are decoded like a body. */
const GET_PARAMETERS = new Set(['query', 'operationName', 'variables', 'extensions']);

function decodeComponent(text: string): string {
  try {
    // Throws on malformed escapes and on escapes that are not UTF-8 (encoded surrogates included).
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw new DomainError('invalid_input', 'query string: malformed percent-encoding or not UTF-8');
  }
}

/**
 * `GET /graphql?query=…&variables=…`: exact UTF-8, no repeated parameter, strict JSON. `afterPath`
 * is what follows the path in the parsed URL (its `search` and `hash`, as `URL` encodes them).
 */
function paramsFromQueryString(afterPath: string): GraphQLParams {
  const search = afterPath.startsWith('?') ? afterPath.slice(1) : afterPath;
  const raw = new Map<string, string>();
  for (const pair of search.split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = decodeComponent(eq < 0 ? pair : pair.slice(0, eq));
    const value = decodeComponent(eq < 0 ? '' : pair.slice(eq + 1));
    // Other parameters (a cache buster, say) are no concern of GraphQL's and are ignored.
    if (!GET_PARAMETERS.has(name)) continue;
    if (raw.has(name)) throw new DomainError('invalid_input', `query string: repeated parameter ${name}`);
    raw.set(name, value);
  }
  const params: GraphQLParams = {};
  const query = raw.get('query');
  if (query) params.query = query;
  const operationName = raw.get('operationName');
  if (operationName) params.operationName = operationName;
  const variables = raw.get('variables');
  if (variables) params.variables = parseStrictJson(variables, 'variables') as GraphQLParams['variables'];
  const extensions = raw.get('extensions');
  if (extensions) params.extensions = parseStrictJson(extensions, 'extensions') as GraphQLParams['extensions'];
  return params;
}

/**
 * Brackets (`{`, `[`, `(`) nested in a document past this are refused before GraphQL's
 * recursive parser sees them (10000 nested list literals overflow its stack). Selections nest
 * at most 12 deep (`GRAPHQL_LIMITS.maxDepth`) and input values a few levels more.
 */
export const MAX_DOCUMENT_NESTING = 64;

/**
 * Refuse a document whose brackets nest past `MAX_DOCUMENT_NESTING`: one linear pass that
 * skips strings, block strings and comments, where brackets mean nothing. Anything else wrong
 * with the document is left to GraphQL's parser.
 */
export function checkDocumentNesting(document: string): void {
  let depth = 0;
  let i = 0;
  const length = document.length;
  while (i < length) {
    const c = document.charCodeAt(i);
    if (c === 123 /* { */ || c === 91 /* [ */ || c === 40 /* ( */) {
      depth += 1;
      if (depth > MAX_DOCUMENT_NESTING) {
        throw new DomainError('invalid_input', `query: nesting deeper than ${MAX_DOCUMENT_NESTING}`);
      }
      i += 1;
    } else if (c === 125 /* } */ || c === 93 /* ] */ || c === 41 /* ) */) {
      depth -= 1;
      i += 1;
    } else if (c === 35 /* # */) {
      let j = i + 1;
      while (j < length && document.charCodeAt(j) !== 10 && document.charCodeAt(j) !== 13) j += 1;
      i = j;
    } else if (c === 34 /* " */) {
      if (document.startsWith('"""', i)) {
        // A block string ends at the first unescaped triple quote.
        let j = i + 3;
        for (;;) {
          const close = document.indexOf('"""', j);
          if (close < 0) return; // unterminated: the parser reports it
          if (document.charCodeAt(close - 1) === 92 /* \ */) j = close + 3;
          else {
            i = close + 3;
            break;
          }
        }
      } else {
        let j = i + 1;
        while (j < length) {
          const d = document.charCodeAt(j);
          if (d === 92 /* \ */) j += 2;
          else if (d === 34 || d === 10 || d === 13) break;
          else j += 1;
        }
        i = j + 1;
      }
    } else {
      i += 1;
    }
  }
}

/** A POSTed body's parameters, strictly decoded. Throws the decoder's DomainError. */
function decodePostedParams(contentType: string | null, bytes: Uint8Array): GraphQLParams {
  return withBoundedNesting(decodeJsonBody(contentType, bytes) as GraphQLParams);
}

function withBoundedNesting(params: GraphQLParams): GraphQLParams {
  if (typeof params?.query === 'string') checkDocumentNesting(params.query);
  return params;
}

/**
 * A request's GraphQL parameters, read by the gateway's strict decoder (decisions §7) in place of
 * Yoga's parsers, which decode bytes leniently (U+FFFD), keep the last of duplicate keys, and
 * accept any charset, `application/graphql` and form bodies: the query string of a GET, the JSON
 * body of a POST. A refusal is thrown as a request error, `invalid_input` with the decoder's
 * detail as its message; a list of operations (batching, which this server does not take) as
 * Yoga refuses it.
 */
export function requestParams(
  method: 'GET' | 'POST',
  afterPath: string,
  contentType: string | null,
  bytes: Uint8Array,
): GraphQLParams {
  let params: GraphQLParams;
  try {
    params =
      method === 'GET' ? withBoundedNesting(paramsFromQueryString(afterPath)) : decodePostedParams(contentType, bytes);
  } catch (error) {
    if (error instanceof DomainError) throw refusal(error.code, error.detail ?? error.code);
    throw error;
  }
  if (Array.isArray(params)) {
    throw new GraphQLError('Batching is not supported.', {
      extensions: { http: { status: 400 }, code: 'BAD_REQUEST' },
    });
  }
  return params;
}
