/**
 * Packages as a user gets them, for tests: each packed into a tarball and installed with npm into
 * a fresh project outside the workspace.
 *
 * The client is built into a staging folder of its own and packed there, so that tests packing it
 * at the same time (packages/client/test/package.test.ts packs it with `npm pack`) never share a
 * build folder. An integration is packed with `pnpm pack` in its folder (its `prepack` builds it),
 * by the one test file of that package.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { buildClient, CLIENT_DIR } from './build-client';

const run = promisify(execFile);
const REPO_ROOT = path.resolve(import.meta.dirname, '..');

function tarballIn(dir: string, stdout: string): string {
  const name = stdout.trim().split('\n').at(-1)?.trim() ?? '';
  const file = path.isAbsolute(name) ? name : path.join(dir, name);
  if (!fs.existsSync(file)) throw new Error(`no tarball in the pack's output: ${stdout}`);
  return file;
}

/** `@tms/client`'s tarball, written into `destination`. */
export async function packClient(destination: string): Promise<string> {
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-client-staging-'));
  try {
    await buildClient(path.join(staging, 'dist'));
    const { scripts: _scripts, ...manifest } = JSON.parse(
      fs.readFileSync(path.join(CLIENT_DIR, 'package.json'), 'utf8'),
    );
    fs.writeFileSync(path.join(staging, 'package.json'), JSON.stringify(manifest, null, 2));
    for (const file of ['README.md', 'LICENSE']) fs.copyFileSync(path.join(CLIENT_DIR, file), path.join(staging, file));
    const { stdout } = await run('npm', ['pack', '--pack-destination', destination], { cwd: staging });
    return tarballIn(destination, stdout);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** An integration's tarball (`langchain`, `ai-sdk`), packed by `pnpm pack`, written into `destination`. */
export async function packIntegration(name: string, destination: string): Promise<string> {
  const { stdout } = await run('npx', ['-y', 'pnpm@10', 'pack', '--pack-destination', destination], {
    cwd: path.join(REPO_ROOT, 'packages', name),
  });
  const line = stdout
    .trim()
    .split('\n')
    .find((text) => text.trim().endsWith('.tgz'));
  return tarballIn(destination, line ?? '');
}

/** The version of a dependency as the workspace installed it for a package: what its tests pin. */
export function installedVersion(packageDir: string, dependency: string): string {
  const manifest = path.join(REPO_ROOT, 'packages', packageDir, 'node_modules', dependency, 'package.json');
  return JSON.parse(fs.readFileSync(manifest, 'utf8')).version;
}

/**
 * A fresh ESM project in `dir` with the tarballs and the registry packages (`name@version`)
 * installed by npm, as a user installs them.
 */
export async function freshProject(dir: string, tarballs: string[], registryPackages: string[]): Promise<string> {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: path.basename(dir), private: true, type: 'module' }),
  );
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs, ...registryPackages], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  return dir;
}
