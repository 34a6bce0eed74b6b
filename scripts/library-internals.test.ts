import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findInternalAccesses, sourceFiles } from './library-internals';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURE = path.join(ROOT, 'packages/ledger/test/fixtures/library-internals.ts');

/**
 * No code of the project reaches a library's private members (an upgrade could change them
 * silently): what it needs of Drizzle, postgres.js and PGlite it takes from their public API.
 */
describe("no library's internals", () => {
  it('finds each way of reaching them, and nothing public', { timeout: 300_000 }, () => {
    expect(findInternalAccesses(ROOT, [FIXTURE]).map(({ file, line, member }) => ({ file, line, member }))).toEqual([
      { file: 'packages/ledger/test/fixtures/library-internals.ts', line: 11, member: 'session' },
      { file: 'packages/ledger/test/fixtures/library-internals.ts', line: 12, member: 'shouldDisableInsert' },
      { file: 'packages/ledger/test/fixtures/library-internals.ts', line: 14, member: 'buildWithCTE' },
    ]);
  });

  it('packages and services reach none', { timeout: 300_000 }, () => {
    expect(findInternalAccesses(ROOT, sourceFiles(ROOT))).toEqual([]);
  });
});
