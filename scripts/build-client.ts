/**
 * Builds `@tms/client` (packages/client) into an installable package, as `npm pack` packs it:
 *   dist/index.js    ESM bundle          dist/index.cjs    CommonJS bundle
 *   dist/*.d.ts      ESM declarations    dist/*.d.cts      CommonJS declarations
 * The bundles target Node 20 and browsers alike (no Node imports: the client uses `fetch` and
 * Web Crypto). The declarations are checked against the DOM library without Node's types, so a
 * Node-only type in the public API fails the build. Each declaration set names its siblings with
 * the extension its module system resolves (`./client.js`, `./client.cjs`), as `NodeNext` needs.
 *
 * `pnpm build` runs it after the services. Usage: tsx scripts/build-client.ts [outDir].
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import ts from 'typescript';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLIENT_DIR = path.join(REPO_ROOT, 'packages/client');
const SOURCE_DIR = path.join(CLIENT_DIR, 'src');
const ENTRY = path.join(SOURCE_DIR, 'index.ts');

/** Relative module specifiers in declarations: `from './x'`, `import('./x')`. */
const RELATIVE_SPECIFIER = /(\bfrom\s+|\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"]+?)\2/g;

export function withExtension(declarations: string, extension: '.js' | '.cjs'): string {
  return declarations.replace(RELATIVE_SPECIFIER, (_match, lead: string, quote: string, specifier: string) => {
    return `${lead}${quote}${specifier}${extension}${quote}`;
  });
}

function emitDeclarations(outDir: string): void {
  const staging = fs.mkdtempSync(path.join(outDir, '.types-'));
  try {
    const files = fs
      .readdirSync(SOURCE_DIR)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => path.join(SOURCE_DIR, name));
    const program = ts.createProgram(files, {
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      noUncheckedIndexedAccess: true,
      isolatedModules: true,
      verbatimModuleSyntax: true,
      declaration: true,
      emitDeclarationOnly: true,
      rootDir: SOURCE_DIR,
      outDir: staging,
    });
    const diagnostics = [...ts.getPreEmitDiagnostics(program), ...program.emit().diagnostics];
    if (diagnostics.length > 0) {
      const host = {
        getCanonicalFileName: (f: string) => f,
        getCurrentDirectory: () => REPO_ROOT,
        getNewLine: () => '\n',
      };
      throw new Error(`@tms/client declarations:\n${ts.formatDiagnostics(diagnostics, host)}`);
    }
    for (const name of fs.readdirSync(staging)) {
      if (!name.endsWith('.d.ts')) continue;
      const text = fs.readFileSync(path.join(staging, name), 'utf8');
      fs.writeFileSync(path.join(outDir, name), withExtension(text, '.js'));
      fs.writeFileSync(path.join(outDir, name.replace(/\.d\.ts$/, '.d.cts')), withExtension(text, '.cjs'));
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** Write the client's bundles and declarations into `outDir` (default packages/client/dist), replacing it. */
export async function buildClient(outDir = path.join(CLIENT_DIR, 'dist')): Promise<string> {
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  const common: BuildOptions = {
    entryPoints: [ENTRY],
    bundle: true,
    platform: 'neutral',
    target: 'es2022',
    sourcemap: true,
    logLevel: 'warning',
  };
  await build({ ...common, format: 'esm', outfile: path.join(outDir, 'index.js') });
  await build({ ...common, format: 'cjs', outfile: path.join(outDir, 'index.cjs') });
  emitDeclarations(outDir);
  return outDir;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const outArg = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
  const outDir = await buildClient(outArg ? path.resolve(outArg) : undefined);
  process.stderr.write(`built ${path.relative(process.cwd(), outDir)} (@tms/client: ESM, CommonJS, declarations)\n`);
}
