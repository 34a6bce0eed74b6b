import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../../services/gateway/test/harness';

const ROOT = join(import.meta.dirname, '../../..');

function example(file: string, name: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const match = new RegExp(
    `<!-- example:${name} -->\\n\`\`\`ts\\n([\\s\\S]*?)\\n\`\`\`\\n<!-- /example:${name} -->`,
  ).exec(text);
  if (!match?.[1]) throw new Error(`${file} has no example block ${name}`);
  return match[1];
}

describe('TypeScript client examples', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'pglite', env: { INDEXER: 'embedded' } });
  });
  afterAll(() => h?.close());

  it('the main README and the package README show the same example', () => {
    expect(example('packages/client/README.md', 'client')).toBe(example('README.md', 'client'));
  });

  it('runs as written against a gateway', async () => {
    const dir = join(ROOT, 'packages/client/test-output');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'readme-example.ts');
    const source = example('README.md', 'client').replace(
      "from '@tms/client'",
      `from '${join(ROOT, 'packages/client/src/index.ts')}'`,
    );
    expect(source).not.toBe(example('README.md', 'client'));
    writeFileSync(file, source);
    const human = await h.human();
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file], {
      cwd: ROOT,
      env: { ...process.env, TMS_URL: h.url, TOKEN: await human.token() },
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('complete ["Ana ordered mint tea at the cafe."]');
    expect(lines[1]).toMatch(/^mem_\S+ Ana ordered mint tea at the cafe\.$/);
    expect(lines[2]).toMatch(/^not_found 404 \S+$/);
    expect(lines).toHaveLength(3);
  });
});
