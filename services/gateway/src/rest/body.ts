import type { IncomingMessage } from 'node:http';
import { type Deadline, deadlinePassed, overLimit } from '@tms/domain';

/**
 * Read the whole body, counting bytes as they arrive (chunked or not); past `limit` the
 * request is refused with `budget_exceeded` without buffering the rest. With a deadline, a body
 * still arriving when it passes is `unavailable`, and nothing is executed.
 */
export function readBody(req: IncomingMessage, limit: number, deadline: Deadline | null = null): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(overLimit('request', 'the body', limit));
  }
  if (deadline?.passed) return Promise.reject(deadlinePassed());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      stopWatching?.();
      settle();
    };
    const stopWatching = deadline?.onPassed(() => finish(() => reject(deadlinePassed())));
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        req.resume();
        finish(() => reject(overLimit('request', 'the body', limit)));
        return;
      }
      chunks.push(chunk);
    });
    // The last chunk may arrive just as the deadline passes: the deadline wins.
    req.on('end', () => finish(() => (deadline?.passed ? reject(deadlinePassed()) : resolve(Buffer.concat(chunks)))));
    req.on('error', (error) => finish(() => reject(error)));
  });
}
