// A process that tries to take an embedded folder's lock when told to (embedded-lock.test.ts):
// it prints `ready`, waits for a line on stdin, tries once, prints `won <pid>` and holds the lock
// until stdin ends, or prints `refused <holder pid>` and exits 3.
import { acquireEmbeddedLock, EmbeddedLedgerLockedError } from '../src/embedded-lock';

const folder = process.argv[2] as string;
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  try {
    const lock = acquireEmbeddedLock(folder, 'racer');
    process.stdout.write(`won ${process.pid}\n`);
    process.stdin.once('end', () => {
      lock.release();
      process.exit(0);
    });
    process.stdin.resume();
  } catch (error) {
    if (!(error instanceof EmbeddedLedgerLockedError)) throw error;
    process.stdout.write(`refused ${error.holder?.pid ?? 'unknown'}\n`);
    process.exit(3);
  }
});
