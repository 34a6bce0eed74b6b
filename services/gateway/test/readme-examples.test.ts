import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quickstartScript } from '../src/quickstart';
import { type Harness, startHarness } from './harness';

const README = path.resolve(import.meta.dirname, '../../../README.md');

function example(name: string): string {
  const text = fs.readFileSync(README, 'utf8');
  const match = new RegExp(
    `<!-- example:${name} -->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\`\\n<!-- /example:${name} -->`,
  ).exec(text);
  if (!match?.[1]) throw new Error(`README has no example block ${name}`);
  return match[1];
}

describe('README examples', () => {
  let h: Harness;
  beforeAll(async () => {
    // As `pnpm start` runs: the embedded indexer and the builtin embedder (the recall example matches by meaning).
    h = await startHarness({ driver: 'pglite', env: { INDEXER: 'embedded', EMBEDDER: 'builtin' } });
  });
  afterAll(() => h?.close());

  it('shows exactly the walk the dev quickstart prints', () => {
    expect(example('quickstart')).toBe(quickstartScript());
  });

  it('runs as written: quickstart, recall, changing memories, then a product credential', async () => {
    const human = await h.human();
    const script = [example('quickstart'), example('recall'), example('lifecycle'), example('credentials')].join('\n');
    const { stdout } = await promisify(execFile)('bash', ['-c', `set -euo pipefail\n${script}\n`], {
      env: { ...process.env, TMS_URL: h.url, TOKEN: await human.token() },
    });
    const lines = stdout.trim().split('\n');
    expect(stdout).toContain('"verified"');
    expect(stdout).toContain('"status": "complete"');
    expect(stdout).toContain('"Ana ordered mint tea at the cafe."');
    // "hot drinks" shares no word with the memories: they are found by meaning alone.
    expect(stdout).toMatch(/"lexical": null,\s*"semantic": 1\b/);
    expect(stdout).toMatch(/"retrieval": \{\s*"mode": "hybrid",\s*"lexical": "ok",\s*"semantic": "ok"/);
    expect(stdout).toContain('"status": "asserted"');
    expect(stdout).toContain('"text": "Ana prefers green tea."');
    expect(stdout).toContain('"commit": null');
    // The lifecycle walk ends on the purged memory, the credential walk on the revoked secret.
    expect(lines.slice(-5)).toEqual([
      'not_found',
      expect.stringMatching(/^\d+$/),
      '"candidate"',
      'true',
      'unauthenticated',
    ]);
  });
});
