import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, ApiError } from '../src/api';

/*
 * The console's subscription reader (graphql-sse's client) against a real server on loopback that
 * frames its events as a proxy may: CRLF line ends, comment lines (keep-alive pings), an event
 * split across writes. The gateway itself writes LF (console-browser.test.ts reads its feed).
 */

const events = [
  ':\r\n\r\n',
  'event: next\r\ndata: {"data":{"changes":{"nextAfter":1}}}\r\n\r\n',
  'event: next\r\ndata: {"data":{"changes":',
  '{"nextAfter":2}}}\r\n\r\nevent: next\r\ndata: {"errors":[{"message":"gone"}]}\r\n\r\n',
  'event: complete\r\ndata:\r\n\r\n',
];

describe('the console reads server-sent events with graphql-sse', () => {
  let server: http.Server;
  let origin: string;
  const seen: { authorization?: string; accept?: string; body: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', async () => {
        seen.push({ authorization: req.headers.authorization, accept: req.headers.accept, body });
        if (req.headers.authorization !== 'Bearer good') {
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'unauthenticated' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const part of events) {
          res.write(part);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        res.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('takes every event of a CRLF stream, in order, until it completes', async () => {
    const payloads: unknown[] = [];
    await new Api('good', 'ws_1', origin).subscribe(
      'subscription { changes { nextAfter } }',
      { after: 0 },
      (payload) => payloads.push(payload),
      new AbortController().signal,
    );
    expect(payloads).toEqual([
      { data: { changes: { nextAfter: 1 } } },
      { data: { changes: { nextAfter: 2 } } },
      { errors: [{ message: 'gone' }] },
    ]);
    expect(seen.at(-1)?.accept).toBe('text/event-stream');
    expect(JSON.parse(seen.at(-1)?.body ?? '{}')).toEqual({
      query: 'subscription { changes { nextAfter } }',
      variables: { after: 0 },
    });
  });

  it('rejects a refused subscription with the service error body, without retrying', async () => {
    const before = seen.length;
    const refused = new Api('bad', 'ws_1', origin).subscribe(
      'subscription { x }',
      {},
      () => {},
      new AbortController().signal,
    );
    const error = await refused.then(
      () => null,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(401);
    expect((error as ApiError).code).toBe('unauthenticated');
    expect(seen.length - before).toBe(1);
  });
});
