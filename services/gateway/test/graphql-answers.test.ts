import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DomainError } from '@tms/domain';
import type { ExecutionResult } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GraphQLResult, writeAnswer } from '../src/graphql/answer';
import type { GraphQLContext } from '../src/graphql/context';
import { asGraphQLError, refusal, shapeError } from '../src/graphql/errors';
import { GraphQLError } from '../src/graphql/graphql-js';
import { RequestScope } from '../src/http/request-scope';

/*
 * Every `/graphql` answer is written by `answer.ts` from the result Yoga's pipeline returns,
 * with Yoga's own result processors but without Yoga's Fetch API handler. The bytes must be the
 * ones that handler writes: for each result and `Accept` header below, the status, the headers
 * Yoga sets (names, values, order) and the body are held against Yoga's own handler answering
 * the same result (handed to it on `onParams`, errors already shaped as `answer.ts` shapes
 * them). `answer.ts` adds only the length and the headers every gateway answer carries.
 *
 * Left out on purpose: an `Accept` only `multipart/mixed` matches, which Yoga answers with its
 * incremental-delivery format and this gateway with 406 (docs/graphql.md, "Requests").
 */

const REQUEST_ID = 'req_answers_test';
const logger = pino({ level: 'silent' });
const context = { requestId: REQUEST_ID, logger } as unknown as GraphQLContext;
const shapedOnce = (result: ExecutionResult): ExecutionResult =>
  result.errors ? { ...result, errors: result.errors.map((e) => shapeError(e, REQUEST_ID, logger)) } : result;

const fieldError = () =>
  new GraphQLError('no such memory', { path: ['memory'], originalError: new DomainError('not_found') });

const RESULTS: Record<string, () => ExecutionResult> = {
  data: () => ({ data: { memory: { id: 'mem_1', text: 'é and \u2028' } } }),
  'a field error beside data': () => ({ data: { memory: null }, errors: [fieldError()] }),
  'a held key naming its holder': () => ({
    data: { createMemory: null },
    errors: [
      new GraphQLError('conflict', {
        path: ['createMemory'],
        originalError: new DomainError('conflict', 'idempotency key held by req_other'),
      }),
    ],
  }),
  'introspection refused (403)': () => ({ errors: [refusal('forbidden', 'Introspection is not allowed.', 403)] }),
  'a validation error (400, spec)': () => ({
    errors: [new GraphQLError('Cannot query field "nope".', { extensions: { http: { status: 400, spec: true } } })],
  }),
  'a missing query (Allow header)': () => ({
    errors: [
      new GraphQLError('Must provide query string.', {
        extensions: { http: { spec: true, status: 400, headers: { Allow: 'GET, POST' } }, code: 'BAD_REQUEST' },
      }),
    ],
  }),
  'batching refused (400, not spec)': () => ({
    errors: [new GraphQLError('Batching is not supported.', { extensions: { http: { status: 400 } } })],
  }),
  'a mutation over GET (405)': () => ({
    errors: [
      new GraphQLError('Can only perform a mutation operation from a POST request.', {
        extensions: { http: { status: 405, headers: { Allow: 'POST' } } },
      }),
    ],
  }),
  'a thrown defect': () => ({ errors: [asGraphQLError(new TypeError('x is undefined'))] }),
  'a budget refusal': () => ({ errors: [refusal('budget_exceeded', 'Query complexity of 30000 exceeds 25000.')] }),
};

const ACCEPTS: (string | null)[] = [
  null,
  '',
  '*/*',
  'application/json',
  'application/graphql-response+json',
  'application/graphql-response+json, application/json',
  'application/json; q=0.9',
  // Apollo Client's default, and urql's for a query.
  'application/graphql-response+json,application/json;q=0.9',
  'application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed',
  'text/event-stream',
  'text/html',
  'application/json; charset=iso-8859-1',
  'application/*',
];

/** A subscription's events: the gateway's answer holds them against Yoga's subscription path. */
const EVENTS = [{ s: 1 }, { s: 2 }];

let current: () => GraphQLResult = () => ({ data: null });

const yoga = createYoga({
  schema: createSchema({
    typeDefs: 'type Query { a: Int } type Subscription { s: Int }',
    resolvers: {
      Subscription: {
        s: {
          subscribe: async function* () {
            for (const event of EVENTS) yield event;
          },
        },
      },
    },
  }),
  logging: false,
  maskedErrors: false,
  plugins: [
    {
      onParams({ params, setResult }) {
        if (!params.query?.startsWith('subscription')) setResult(shapedOnce(current() as ExecutionResult));
      },
    },
  ],
});

interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

/**
 * The headers Yoga's processors set (names in lower case, sorted: the two Fetch API
 * implementations list them in different orders); those the route or Node adds are left out.
 */
const ADDED = new Set([
  'content-length',
  'transfer-encoding',
  'cache-control',
  'x-request-id',
  'x-accel-buffering',
  'x-error-detail',
  'date',
  'connection',
  'keep-alive',
]);
async function answerOf(response: Response): Promise<Answer> {
  const headers = [...response.headers]
    .map(([name, value]): [string, string] => [name.toLowerCase(), value])
    .filter(([name]) => !ADDED.has(name))
    .sort(([a], [b]) => a.localeCompare(b));
  return { status: response.status, headers, body: await response.text() };
}

/** A 406 lists the types this gateway answers with: Yoga's list without its `multipart/mixed`. */
const withoutMultipart = (answer: Answer): Answer => ({
  ...answer,
  headers: answer.headers.map(([name, value]) => [name, value.replaceAll('multipart/mixed; charset=utf-8, ', '')]),
});

describe('GraphQL answers are written as Yoga writes them', () => {
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const scope = new RequestScope(req);
      const accept = req.headers['x-test-accept'];
      Promise.resolve(writeAnswer(res, scope, typeof accept === 'string' ? accept : null, current(), context)).catch(
        (error) => {
          res.destroy(error as Error);
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** Yoga's own answer, and the gateway's, for the current result and an `Accept` header. */
  async function both(accept: string | null, query = '{ a }'): Promise<[Answer, Answer]> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (accept !== null) headers.accept = accept;
    const byYoga = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers,
      body: JSON.stringify({ query }),
    });
    const ours = await fetch(url, {
      method: 'POST',
      headers: accept === null ? {} : { 'x-test-accept': accept },
    });
    return [await answerOf(byYoga), await answerOf(ours)];
  }

  for (const [name, result] of Object.entries(RESULTS)) {
    it(`${name}: every Accept header`, async () => {
      current = result;
      for (const accept of ACCEPTS) {
        const [byYoga, ours] = await both(accept);
        expect(ours, `Accept ${JSON.stringify(accept)}`).toEqual(
          byYoga.status === 406 ? withoutMultipart(byYoga) : byYoga,
        );
      }
    });
  }

  it('a subscription stream, as server-sent events (and refused as JSON)', async () => {
    const accepts = ['text/event-stream', 'text/event-stream, multipart/mixed', '*/*', 'application/json'];
    for (const accept of accepts) {
      current = () =>
        (async function* () {
          for (const event of EVENTS) yield { data: event };
        })();
      const [byYoga, ours] = await both(accept, 'subscription { s }');
      expect(ours, `Accept ${accept}`).toEqual(byYoga);
    }
  });

  it('the cases above are meaningful: statuses and media types differ among them', async () => {
    const seen = new Set<string>();
    for (const result of Object.values(RESULTS)) {
      current = result;
      for (const accept of ACCEPTS) {
        const [, ours] = await both(accept);
        seen.add(`${ours.status} ${ours.headers.find(([name]) => name === 'content-type')?.[1] ?? '-'}`);
      }
    }
    for (const expected of [
      '200 application/json; charset=utf-8',
      '200 application/graphql-response+json; charset=utf-8',
      '400 application/graphql-response+json; charset=utf-8',
      '400 application/json; charset=utf-8',
      '403 application/graphql-response+json; charset=utf-8',
      '405 application/json; charset=utf-8',
      '200 text/event-stream',
      '406 -',
    ]) {
      expect(seen).toContain(expected);
    }
  });

  it('adds the detail of an error that states one, and writes the 406 Yoga would write but for multipart', async () => {
    current = RESULTS['a budget refusal'] as () => ExecutionResult;
    const detailed = await fetch(url, { method: 'POST', headers: { 'x-test-accept': 'application/json' } });
    expect(detailed.headers.get('x-error-detail')).toBe('Query complexity of 30000 exceeds 25000.');
    current = RESULTS.data as () => ExecutionResult;
    const [byYoga, ours] = await both('text/html');
    expect(byYoga.headers).toEqual([
      [
        'accept',
        'text/event-stream; charset=utf-8, multipart/mixed; charset=utf-8, application/graphql-response+json; charset=utf-8, application/json',
      ],
    ]);
    expect(ours.headers).toEqual([
      [
        'accept',
        'text/event-stream; charset=utf-8, application/graphql-response+json; charset=utf-8, application/json',
      ],
    ]);
  });
});
