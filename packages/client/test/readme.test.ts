import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClient } from '../../../scripts/build-client';
import { type Harness, startHarness } from '../../../services/gateway/test/harness';

const ROOT = join(import.meta.dirname, '../../..');
const DIR = join(ROOT, 'packages/client/test-output');
const run = promisify(execFile);

function example(file: string, name: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const match = new RegExp(
    `<!-- example:${name} -->\\n\`\`\`ts\\n([\\s\\S]*?)\\n\`\`\`\\n<!-- /example:${name} -->`,
  ).exec(text);
  if (!match?.[1]) throw new Error(`${file} has no example block ${name}`);
  return match[1];
}

/** The README's example as a file importing the client's source, with a tsconfig extending the project's. */
function writeExample(): string {
  mkdirSync(DIR, { recursive: true });
  const file = join(DIR, 'readme-example.ts');
  const written = example('README.md', 'client');
  const source = written.replace("from '@tms/client'", `from '${join(ROOT, 'packages/client/src/index.ts')}'`);
  expect(source).not.toBe(written);
  writeFileSync(file, source);
  const tsconfig = {
    extends: join(ROOT, 'tsconfig.json'),
    compilerOptions: { allowImportingTsExtensions: true },
    include: ['readme-example.ts'],
  };
  writeFileSync(join(DIR, 'tsconfig.json'), JSON.stringify(tsconfig));
  return file;
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

  /** What the example prints, whichever way it ran. */
  function expectItsOutput(stdout: string): void {
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('complete ["Ana ordered mint tea at the cafe."]');
    expect(lines[1]).toMatch(/^mem_\S+ Ana ordered mint tea at the cafe\.$/);
    expect(lines[2]).toMatch(/^not_found 404 \S+$/);
    expect(lines).toHaveLength(3);
  }

  it('type-checks (strict, as the project does) and runs as written against a gateway', async () => {
    const file = writeExample();
    await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(DIR, 'tsconfig.json'), '--noEmit'], { cwd: ROOT });

    const human = await h.human();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', file], {
      cwd: ROOT,
      env: { ...process.env, TMS_URL: h.url, TOKEN: await human.token() },
    });
    expectItsOutput(stdout);
  });

  it('runs pasted unchanged into a CommonJS project and into an ES module one (`npx tsx first-call.ts`)', async () => {
    // The package as npm installs it: its manifest and its build (package.test.ts packs the real tarball).
    const built = join(DIR, 'built-client');
    await buildClient(join(built, 'dist'));
    const token = await (await h.human()).token();
    for (const type of ['commonjs', 'module']) {
      const project = join(DIR, `first-call-${type}`);
      rmSync(project, { recursive: true, force: true });
      const installed = join(project, 'node_modules/@tms/client');
      mkdirSync(installed, { recursive: true });
      cpSync(join(ROOT, 'packages/client/package.json'), join(installed, 'package.json'));
      cpSync(join(built, 'dist'), join(installed, 'dist'), { recursive: true });
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: `first-call-${type}`, private: true, type }));
      writeFileSync(join(project, 'first-call.ts'), example('README.md', 'client'));
      // tsx compiles a .ts file of a CommonJS project to CommonJS: top-level await would not compile there.
      const { stdout } = await run(process.execPath, ['--import', 'tsx', 'first-call.ts'], {
        cwd: project,
        env: { ...process.env, TMS_URL: h.url, TOKEN: token },
      });
      expectItsOutput(stdout);
    }
  });
});
