/**
 * Builds a framework integration (`@tms/langchain`, `@tms/ai-sdk`) into an installable package,
 * as `pnpm pack` packs it (its `prepack` script):
 *   dist/index.js  ESM bundle        dist/index.cjs   CommonJS bundle
 *   dist/*.d.ts    ESM declarations  dist/*.d.cts     CommonJS declarations
 * The bundle holds the package's own code and the memory tools they share (packages/agent-memory,
 * a workspace package that is never published); every peer dependency (`@tms/client`, the
 * framework, zod) stays an import, so the application's own copy is used. The shared code's
 * declarations ship under dist/agent-memory/.
 *
 * Usage: tsx scripts/build-integration.ts <langchain|ai-sdk> [outDir].
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import ts from 'typescript';
import { withExtension } from './build-client';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGES = path.join(REPO_ROOT, 'packages');
export const INTEGRATIONS = ['langchain', 'ai-sdk'] as const;
export type Integration = (typeof INTEGRATIONS)[number];

const SHARED_NAME = '@tms/agent-memory';
const SHARED_DIR = 'agent-memory';

/** The package's own source files. */
function sources(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.ts'))
    .map((name) => path.join(dir, name));
}

function failOn(diagnostics: readonly ts.Diagnostic[], what: string): void {
  if (diagnostics.length === 0) return;
  const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => REPO_ROOT, getNewLine: () => '\n' };
  throw new Error(`${what} declarations:\n${ts.formatDiagnostics(diagnostics, host)}`);
}

/** Declarations of the package and of the shared code it re-exports, with specifiers a user's project resolves. */
function emitDeclarations(name: Integration, outDir: string): void {
  const staging = fs.mkdtempSync(path.join(outDir, '.types-'));
  try {
    const program = ts.createProgram(sources(path.join(PACKAGES, name, 'src')), {
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      // The client's package entry is its build, its sources give the same types; the shared code is
      // mapped too, since a source reached through node_modules would not be emitted.
      paths: {
        '@tms/client': [path.join(PACKAGES, 'client/src/index.ts')],
        [SHARED_NAME]: [path.join(PACKAGES, SHARED_DIR, 'src/index.ts')],
      },
      strict: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      isolatedModules: true,
      verbatimModuleSyntax: true,
      skipLibCheck: true,
      declaration: true,
      emitDeclarationOnly: true,
      rootDir: PACKAGES,
      outDir: staging,
    });
    failOn([...ts.getPreEmitDiagnostics(program), ...program.emit().diagnostics], `@tms/${name}`);
    const copy = (from: string, to: string, rewrite: (text: string) => string) => {
      fs.mkdirSync(to, { recursive: true });
      for (const file of fs.readdirSync(from).filter((f) => f.endsWith('.d.ts'))) {
        const text = rewrite(fs.readFileSync(path.join(from, file), 'utf8'));
        fs.writeFileSync(path.join(to, file), withExtension(text, '.js'));
        fs.writeFileSync(path.join(to, file.replace(/\.d\.ts$/, '.d.cts')), withExtension(text, '.cjs'));
      }
    };
    copy(path.join(staging, name, 'src'), outDir, (text) =>
      text
        .replaceAll(`'${SHARED_NAME}'`, `'./${SHARED_DIR}/index'`)
        .replaceAll(`"${SHARED_NAME}"`, `"./${SHARED_DIR}/index"`),
    );
    copy(path.join(staging, SHARED_DIR, 'src'), path.join(outDir, SHARED_DIR), (text) => text);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  // Every specifier must resolve from the package alone: its own files or its peer dependencies.
  const stray: string[] = [];
  for (const file of fs.readdirSync(outDir, { recursive: true, encoding: 'utf8' })) {
    if (!/\.d\.c?ts$/.test(file)) continue;
    const text = fs.readFileSync(path.join(outDir, file), 'utf8');
    if (/['"](\.\.\/|[^'"]*\/src\/)|@tms\/agent-memory/.test(text)) stray.push(file);
  }
  if (stray.length > 0) throw new Error(`@tms/${name}: declarations point outside the package: ${stray.join(', ')}`);
}

/** Write the package's bundles and declarations into `outDir` (default packages/<name>/dist), replacing it. */
export async function buildIntegration(name: Integration, outDir = path.join(PACKAGES, name, 'dist')): Promise<string> {
  const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGES, name, 'package.json'), 'utf8'));
  const peers = Object.keys(manifest.peerDependencies ?? {});
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const common: BuildOptions = {
    entryPoints: [path.join(PACKAGES, name, 'src/index.ts')],
    bundle: true,
    platform: 'neutral',
    target: 'es2022',
    // Peers and their subpaths (`@langchain/core/tools`) stay imports of the application's copies.
    external: peers.flatMap((peer) => [peer, `${peer}/*`]),
    sourcemap: true,
    logLevel: 'warning',
  };
  await build({ ...common, format: 'esm', outfile: path.join(outDir, 'index.js') });
  await build({ ...common, format: 'cjs', outfile: path.join(outDir, 'index.cjs') });
  emitDeclarations(name, outDir);
  return outDir;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const [name, outArg] = process.argv.slice(2);
  if (!INTEGRATIONS.includes(name as Integration))
    throw new Error(`usage: build-integration.ts <${INTEGRATIONS.join('|')}> [outDir]`);
  const outDir = await buildIntegration(name as Integration, outArg ? path.resolve(outArg) : undefined);
  process.stderr.write(`built ${path.relative(process.cwd(), outDir)} (@tms/${name}: ESM, CommonJS, declarations)\n`);
}
