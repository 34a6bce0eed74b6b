import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { withBuildLock } from './staleness.mjs';

// Two `pnpm start` / `pnpm svc` that find dist/ stale at once must not rebuild it together: the
// lock `scripts/ensure-built.mjs` takes serializes them, as separate processes.
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-build-lock-'));
const staleness = pathToFileURL(path.join(import.meta.dirname, 'staleness.mjs')).href;

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** A process that holds the lock for `holdMs`, writing `start <name>` and `end <name>` to `journal`. */
function contender(name: string, lock: string, journal: string, holdMs: number): Promise<number | null> {
  const script = `
    import fs from 'node:fs';
    import { withBuildLock } from ${JSON.stringify(staleness)};
    withBuildLock(${JSON.stringify(lock)}, () => {
      fs.appendFileSync(${JSON.stringify(journal)}, 'start ${name}\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${holdMs});
      fs.appendFileSync(${JSON.stringify(journal)}, 'end ${name}\\n');
    });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('the dist/ build lock', () => {
  it('lets one process build at a time, and releases the lock after', async () => {
    const lock = path.join(scratch, 'contended.lock');
    const journal = path.join(scratch, 'journal');
    const codes = await Promise.all(['a', 'b', 'c'].map((name) => contender(name, lock, journal, 300)));
    expect(codes).toEqual([0, 0, 0]);
    const lines = fs.readFileSync(journal, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(6);
    // Each start is followed by its own end: no two held the lock at once.
    for (let i = 0; i < lines.length; i += 2) {
      expect(lines[i]?.replace('start', 'end')).toBe(lines[i + 1]);
    }
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('releases the lock when the work throws', () => {
    const lock = path.join(scratch, 'thrown.lock');
    expect(() =>
      withBuildLock(lock, () => {
        throw new Error('build failed');
      }),
    ).toThrow('build failed');
    expect(fs.existsSync(lock)).toBe(false);
    expect(withBuildLock(lock, () => 'again')).toBe('again');
  });

  it('takes over a lock left by a build that died long ago', () => {
    const lock = path.join(scratch, 'abandoned.lock');
    fs.writeFileSync(lock, '999999');
    const longAgo = new Date(Date.now() - 60 * 60_000);
    fs.utimesSync(lock, longAgo, longAgo);
    expect(withBuildLock(lock, () => 'built')).toBe('built');
  });
});
