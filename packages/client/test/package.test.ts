import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../../services/gateway/test/harness';

/*
 * @tms/client as a user gets it: `npm pack` (which builds it), then the tarball installed with
 * npm, offline, into four fresh projects outside the workspace: Node ESM, CommonJS, TypeScript
 * with `moduleResolution: NodeNext` (an ESM file and a CommonJS `.cts` file) and with `Bundler`,
 * each typechecked by the workspace's tsc against the package's own declarations
 * (`skipLibCheck: false`) and run against a real gateway on loopback.
 */

const ROOT = path.resolve(import.meta.dirname, '../../..');
const CLIENT_DIR = path.join(ROOT, 'packages/client');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const run = promisify(execFile);
const SLOW = { timeout: 300_000 };

let h: Harness;
let work: string;
let tarball: string;
let runEnv: Record<string, string>;

/** What every project prints: the caller it was answered for and the code of a refused read. */
interface Report {
  actor: string;
  code: string;
  resolved?: string;
}

const JS_BODY = `
const client = createClient({
  baseUrl: process.env.TMS_URL,
  token: process.env.TMS_TOKEN,
  workspace: process.env.TMS_WORKSPACE,
});
const me = await client.me.get();
let code = 'no error';
try {
  await client.memories.get({ id: 'mem_absent' });
} catch (error) {
  code = error instanceof TmsError ? error.code : 'not a TmsError: ' + String(error);
}`;

/** TypeScript that only compiles if the declarations are real: TmsError a class, inputs typed. */
const TS_BODY = `
declare const process: { env: Record<string, string | undefined> };
type IsAny<T> = 0 extends 1 & T ? true : false;
const tmsErrorIsAClass: IsAny<TmsError> = false;
const client: TmsClient = createClient({
  baseUrl: process.env.TMS_URL ?? '',
  token: process.env.TMS_TOKEN,
  workspace: process.env.TMS_WORKSPACE,
});
// @ts-expect-error memories.get takes an id
void (() => client.memories.get({ identifier: 'mem_x' }));
async function main(): Promise<Report> {
  const me = await client.me.get();
  const actor: string = me.actor.id;
  let code = 'no error';
  try {
    await client.memories.get({ id: 'mem_absent' });
  } catch (error) {
    if (!(error instanceof TmsError)) throw error;
    const status: number = error.status;
    code = status === 404 ? error.code : 'status ' + status;
  }
  return { actor, code: tmsErrorIsAClass ? 'any' : code };
}
interface Report { actor: string; code: string }
`;

function writeProject(name: string, files: Record<string, string>): string {
  const dir = path.join(work, name);
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

async function install(dir: string): Promise<void> {
  // Offline: the client has no dependencies, so nothing may come from a registry.
  await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund'], { cwd: dir });
  const installed = JSON.parse(fs.readFileSync(path.join(dir, 'node_modules/@tms/client/package.json'), 'utf8'));
  expect(installed.name).toBe('@tms/client');
  // Nothing else was installed: no dependency came along.
  expect(fs.readdirSync(path.join(dir, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual(['@tms']);
}

async function runNode(dir: string, file: string): Promise<Report> {
  const { stdout } = await run(process.execPath, [file], { cwd: dir, env: runEnv });
  return JSON.parse(stdout.trim()) as Report;
}

async function typecheckAndEmit(dir: string): Promise<void> {
  const result = await run(process.execPath, [TSC, '-p', dir]).catch((error: { stdout?: string }) => error);
  expect('stdout' in result ? result.stdout : '').toBe('');
}

const tsconfig = (module: string, moduleResolution: string) =>
  JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module,
      moduleResolution,
      lib: ['ES2022', 'DOM'],
      types: [],
      strict: true,
      skipLibCheck: false,
      outDir: 'out',
      rootDir: 'src',
    },
    include: ['src'],
  });

beforeAll(async () => {
  h = await startHarness({ driver: 'postgres' });
  const { id, owner } = await h.workspace();
  runEnv = {
    PATH: process.env.PATH ?? '',
    TMS_URL: h.url,
    TMS_TOKEN: await owner.token(),
    TMS_WORKSPACE: id,
  };
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-client-pack-'));
  // `npm pack` runs the package's prepack script: the build of scripts/build-client.ts.
  const { stdout } = await run('npm', ['pack', '--pack-destination', work], { cwd: CLIENT_DIR });
  tarball = path.join(work, stdout.trim().split('\n').at(-1) ?? '');
  expect(fs.existsSync(tarball)).toBe(true);
}, 300_000);

afterAll(async () => {
  await h?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('@tms/client packed and installed from its tarball', SLOW, () => {
  it('is licensed, versioned and ships only its build, README and LICENSE', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball]);
    const files = stdout.trim().split('\n').sort();
    expect(files).toEqual(
      expect.arrayContaining([
        'package/LICENSE',
        'package/README.md',
        'package/package.json',
        'package/dist/index.js',
        'package/dist/index.cjs',
        'package/dist/index.d.ts',
        'package/dist/index.d.cts',
      ]),
    );
    expect(files.filter((file) => !/^package\/(dist\/|LICENSE$|README\.md$|package\.json$)/.test(file))).toEqual([]);
    const manifest = JSON.parse(fs.readFileSync(path.join(CLIENT_DIR, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ license: 'Apache-2.0', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(manifest.dependencies ?? {}).toEqual({});
  });

  it('leaves no untracked file where docs/client.md runs `npm pack`: git ignores the tarball', async () => {
    // This test packs into a folder of its own (removed afterwards); a user's `npm pack` writes here.
    const inPackage = path.join('packages/client', path.basename(tarball));
    const { stdout } = await run('git', ['check-ignore', '--verbose', inPackage], { cwd: ROOT });
    expect(stdout).toContain(`.gitignore`);
    expect(stdout.trim().endsWith(inPackage)).toBe(true);
    // The rule is not so wide that it hides the package's own files.
    await expect(run('git', ['check-ignore', 'packages/client/package.json'], { cwd: ROOT })).rejects.toThrow();
  });

  it("runs docs/client.md's first calls as written: the ES module one and the CommonJS one", async () => {
    const docs = fs.readFileSync(path.join(ROOT, 'docs/client.md'), 'utf8');
    const block = (name: string) => {
      const match = new RegExp(
        `<!-- example:${name} -->\\n\`\`\`js\\n([\\s\\S]*?)\\n\`\`\`\\n<!-- /example:${name} -->`,
      ).exec(docs);
      if (!match?.[1]) throw new Error(`docs/client.md has no example block ${name}`);
      return match[1];
    };
    // As the docs name the files: a .mjs beside the CommonJS default, a .js in a CommonJS project.
    const dir = writeProject('docs-first-call', {
      'package.json': JSON.stringify({ name: 'docs-user', private: true }),
      'first-call.mjs': block('first-call-esm'),
      'first-call.js': block('first-call-cjs'),
    });
    await install(dir);
    const env = { ...runEnv, TOKEN: runEnv.TMS_TOKEN as string };
    for (const file of ['first-call.mjs', 'first-call.js']) {
      const { stdout } = await run(process.execPath, [file], { cwd: dir, env });
      const lines = stdout.trim().split('\n');
      expect(lines[0], file).toMatch(/^act_\w+ session$/);
      expect(lines[1], file).toBe('invalid_input 400 X-Service-Workspace: is required');
      expect(lines, file).toHaveLength(2);
    }
  });

  it('runs from plain Node ESM', async () => {
    const dir = writeProject('esm', {
      'package.json': JSON.stringify({ name: 'esm-user', private: true, type: 'module' }),
      'index.mjs': `import { createClient, TmsError } from '@tms/client';\n${JS_BODY}\nconsole.log(JSON.stringify({ actor: me.actor.id, code, resolved: import.meta.resolve('@tms/client') }));\n`,
    });
    await install(dir);
    const report = await runNode(dir, 'index.mjs');
    expect(report).toMatchObject({ actor: expect.stringMatching(/^act_/), code: 'not_found' });
    expect(report.resolved).toMatch(/node_modules\/@tms\/client\/dist\/index\.js$/);
  });

  it('runs from CommonJS', async () => {
    const dir = writeProject('cjs', {
      'package.json': JSON.stringify({ name: 'cjs-user', private: true }),
      'index.js': `const { createClient, TmsError } = require('@tms/client');\n(async () => {${JS_BODY}\nconsole.log(JSON.stringify({ actor: me.actor.id, code, resolved: require.resolve('@tms/client') }));\n})();\n`,
    });
    await install(dir);
    const report = await runNode(dir, 'index.js');
    expect(report).toMatchObject({ actor: expect.stringMatching(/^act_/), code: 'not_found' });
    expect(report.resolved).toMatch(/node_modules\/@tms\/client\/dist\/index\.cjs$/);
  });

  it('typechecks and runs from TypeScript with moduleResolution NodeNext, as ESM and as CommonJS', async () => {
    const dir = writeProject('nodenext', {
      'package.json': JSON.stringify({ name: 'nodenext-user', private: true, type: 'module' }),
      'tsconfig.json': tsconfig('NodeNext', 'NodeNext'),
      'src/index.ts': `import { createClient, TmsError, type TmsClient } from '@tms/client';\n${TS_BODY}\nconsole.log(JSON.stringify(await main()));\n`,
      // A .cts file is CommonJS: it resolves the package's require condition and its .d.cts.
      'src/legacy.cts': `import { createClient, TmsError, type TmsClient } from '@tms/client';\n${TS_BODY}\nvoid main().then((report) => console.log(JSON.stringify(report)));\n`,
    });
    await install(dir);
    await typecheckAndEmit(dir);
    for (const file of ['out/index.js', 'out/legacy.cjs']) {
      expect(await runNode(dir, file), file).toEqual({ actor: expect.stringMatching(/^act_/), code: 'not_found' });
    }
  });

  it('typechecks and runs from TypeScript with moduleResolution Bundler', async () => {
    const dir = writeProject('bundler', {
      'package.json': JSON.stringify({ name: 'bundler-user', private: true, type: 'module' }),
      'tsconfig.json': tsconfig('ESNext', 'Bundler'),
      'src/index.ts': `import { createClient, TmsError, type TmsClient } from '@tms/client';\n${TS_BODY}\nconsole.log(JSON.stringify(await main()));\n`,
    });
    await install(dir);
    await typecheckAndEmit(dir);
    expect(await runNode(dir, 'out/index.js')).toEqual({ actor: expect.stringMatching(/^act_/), code: 'not_found' });
  });
});
