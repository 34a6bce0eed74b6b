/**
 * Compiles services to plain JavaScript with esbuild, as production runs them: one `node`
 * process, no tsx, source maps beside the bundles. Our workspace packages (which export .ts
 * sources) are bundled; third-party packages stay external and are linked into the output's
 * own node_modules, so Node resolves them exactly as it would in a deployment (graphql-js and
 * graphql-jit are loaded with `createRequire(import.meta.url)`, PGlite is imported on demand
 * and loads its wasm and data files from its own package).
 *
 * A self-contained bundle (the CLI) also bundles its third-party code, but for PGlite: loading
 * one file instead of a few hundred modules halves its start (`svc mcp` is started by an agent
 * client for every session, and the client waits for it).
 *
 * Layout of an output directory:
 *   bin/<name>.mjs     the bundles (ESM) and their .map files; the ledger finds its migrations
 *                      at bin/../drizzle (it resolves them relative to its own module)
 *   bin/builtin-embedder-worker.mjs
 *                      the builtin embedder's child process, which a bundle forks from beside
 *                      itself (every output has it: any service may embed)
 *   drizzle/           a copy of packages/ledger/drizzle
 *   console-assets/    the browser console's script and stylesheet (`pnpm build` only)
 *   node_modules/<p>   symlinks to the installed third-party packages
 *   package.json       {"type": "module"}
 *
 * `pnpm build` writes the services to dist/ (gitignored): dist/bin/gateway.mjs,
 * dist/bin/indexer.mjs and dist/bin/svc.mjs (the operator CLI, self-contained:
 * `node dist/bin/svc.mjs mcp`).
 * The benchmark builds its own set with `buildBundles`.
 *
 * Usage: tsx scripts/build.ts [outDir] (default dist).
 */
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { BUILTIN_WORKER_FILE } from '../packages/search/src/embedders/builtin-embedder';
import { buildConsole, CONSOLE_FILES } from './build-console';
import { INPUTS_FILE, isStale } from './staleness.mjs';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DIST_DIR = path.join(REPO_ROOT, 'dist');

/**
 * The Node flags the long-running services (gateway, indexer) run with, wherever they are
 * started: `pnpm start`, the image's command, compose and the benchmark.
 * - Source maps: stack traces name the TypeScript sources.
 * - A 1 GiB heap limit. Its purpose is the growth, not the cap: with a limit of 2 GiB or more (the
 *   default here is about 4 GiB) V8 lets the old generation grow to 4 times the live heap
 *   before a full collection, with 1 GiB to about 1.6 times. The gateway's live heap is some
 *   tens of MiB; under the benchmark's load its peak RSS went from about 250 to about 155 MiB
 *   at no measurable CPU (docs/performance.md).
 */
export const SERVER_NODE_FLAGS = ['--enable-source-maps', '--max-old-space-size=1024'] as const;

/** The services `pnpm build` compiles, by bundle name. */
export const SERVICE_ENTRY_POINTS = {
  gateway: path.join(REPO_ROOT, 'services/gateway/src/main.ts'),
  indexer: path.join(REPO_ROOT, 'services/indexer/src/main.ts'),
  svc: path.join(REPO_ROOT, 'services/cli/src/main.ts'),
};

/**
 * Scripts a bundle starts as child processes (`fork(new URL('./<name>.mjs', import.meta.url))`):
 * built into every output beside the bundles, their third-party packages linked, never bundled
 * (the embedding model reads its weights from its own package).
 */
export const CHILD_ENTRY_POINTS = {
  [path.basename(BUILTIN_WORKER_FILE, '.mjs')]: path.join(
    REPO_ROOT,
    'packages/search/src/embedders',
    BUILTIN_WORKER_FILE,
  ),
};

const BUILTINS = new Set(builtinModules);

/**
 * Linked even into self-contained bundles: PGlite reads its wasm and data files from its package,
 * and its pgvector extension its `vector.tar.gz` from its own.
 */
const ALWAYS_LINKED = new Set(['@electric-sql/pglite', '@electric-sql/pglite-pgvector']);

/** Bundled CommonJS code may `require` Node's modules; an ESM bundle has no `require` of its own. */
const REQUIRE_SHIM =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/** Packages loaded with `createRequire` at run time (invisible to esbuild), and from where. */
const RUNTIME_REQUIRES: [name: string, from: string][] = [
  ['graphql', 'services/gateway'],
  ['graphql-jit', 'services/gateway'],
];

/** `@scope/name/sub` -> `@scope/name`; `name/sub` -> `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
}

/** Node's lookup: the nearest node_modules/<name> above `fromDir`, with symlinks resolved. */
function findPackageDir(name: string, fromDir: string): string | null {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return fs.realpathSync(candidate);
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * Marks every third-party import external and records which installed copy the importing
 * workspace package would have loaded (or, when it has none, the first of `fallbackFrom` that
 * has one). Two different copies under one name cannot share one node_modules, so that is an
 * error rather than a silent pick.
 */
function externalThirdParty(linked: Map<string, string>, fallbackFrom: string[], selfContained: boolean): Plugin {
  return {
    name: 'external-third-party',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:') || BUILTINS.has(args.path)) return { path: args.path, external: true };
        const name = packageName(args.path);
        if (name.startsWith('@tms/')) return undefined; // ours: bundle the .ts sources
        if (selfContained && !ALWAYS_LINKED.has(name)) return undefined; // bundled from where esbuild finds it
        let dir = findPackageDir(name, args.resolveDir);
        for (const from of fallbackFrom) dir ??= findPackageDir(name, from);
        if (!dir) return { errors: [{ text: `cannot find package ${name} from ${args.resolveDir}` }] };
        const previous = linked.get(name);
        if (previous && previous !== dir) {
          return { errors: [{ text: `two copies of ${name} are imported: ${previous} and ${dir}` }] };
        }
        linked.set(name, dir);
        return { path: args.path, external: true };
      });
    },
  };
}

export interface BundleOptions<Name extends string> {
  /** Absolute path of each entry's .ts source, by bundle name. */
  entryPoints: Record<Name, string>;
  /** Emptied, then filled with the layout described above. */
  outDir: string;
  /** Directories to look up a third-party package from when the importing file's package lacks it. */
  fallbackFrom?: string[];
  /** Entries bundled with their third-party code (all but PGlite), for a faster start. */
  selfContained?: NoInfer<Name>[];
  /** Compile-time constants (esbuild `define`): only the bench's comparison builds set any. */
  define?: Record<string, string>;
}

export interface BuildResult<Name extends string> {
  outDir: string;
  /** Absolute path of each bundle, by bundle name. */
  bundles: Record<Name, string>;
}

export async function buildBundles<const Name extends string>(
  options: BundleOptions<Name>,
): Promise<BuildResult<Name>> {
  const { outDir, entryPoints } = options;
  fs.rmSync(outDir, { recursive: true, force: true });
  const binDir = path.join(outDir, 'bin');
  fs.mkdirSync(binDir, { recursive: true });
  const linked = new Map<string, string>();
  const names = Object.keys(entryPoints) as Name[];
  const selfContained = new Set(options.selfContained ?? []);
  // Our own sources the bundles were made from, for `--if-stale` (third-party code changes with the lockfile).
  const inputs = new Set([path.join(REPO_ROOT, 'pnpm-lock.yaml'), fileURLToPath(import.meta.url)]);
  for (const bundleThirdParty of [false, true]) {
    const group = names.filter((name) => selfContained.has(name) === bundleThirdParty);
    const groupEntries: Record<string, string> = Object.fromEntries(group.map((name) => [name, entryPoints[name]]));
    if (!bundleThirdParty) Object.assign(groupEntries, CHILD_ENTRY_POINTS);
    if (Object.keys(groupEntries).length === 0) continue;
    const result = await build({
      metafile: true,
      entryPoints: groupEntries,
      outdir: binDir,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      // ESM builds first: the bench's baseline bundles postgres.js through a relative path, and
      // its CommonJS build cannot `require` Node's modules from inside an ESM bundle.
      mainFields: ['module', 'main'],
      ...(bundleThirdParty ? { banner: { js: REQUIRE_SHIM } } : {}),
      sourcemap: 'linked',
      legalComments: 'none',
      logLevel: 'warning',
      ...(options.define ? { define: options.define } : {}),
      plugins: [externalThirdParty(linked, options.fallbackFrom ?? [], bundleThirdParty)],
    });
    for (const input of Object.keys(result.metafile.inputs)) {
      if (!input.includes('node_modules/')) inputs.add(path.resolve(input));
    }
  }
  for (const [name, from] of RUNTIME_REQUIRES) {
    const dir = findPackageDir(name, path.join(REPO_ROOT, from));
    if (!dir) throw new Error(`cannot find package ${name} from ${from}`);
    linked.set(name, dir);
  }
  const migrations = path.join(REPO_ROOT, 'packages/ledger/drizzle');
  fs.cpSync(migrations, path.join(outDir, 'drizzle'), { recursive: true });
  for (const file of fs.readdirSync(migrations, { recursive: true, encoding: 'utf8' })) {
    inputs.add(path.join(migrations, file));
  }
  fs.writeFileSync(path.join(outDir, INPUTS_FILE), `${JSON.stringify([...inputs].sort(), null, 1)}\n`);
  fs.writeFileSync(path.join(outDir, 'package.json'), `${JSON.stringify({ type: 'module', private: true })}\n`);
  for (const [name, dir] of linked) {
    const link = path.join(outDir, 'node_modules', name);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(dir, link, 'dir');
  }
  const bundles = Object.fromEntries(names.map((name) => [name, path.join(binDir, `${name}.mjs`)])) as Record<
    Name,
    string
  >;
  return { outDir, bundles };
}

/**
 * Where the built gateway (bin/gateway.mjs) finds the console's script and stylesheet: beside
 * bin/, as services/gateway/src/console/console-assets.ts resolves it.
 */
export const CONSOLE_ASSETS_DIR = 'console-assets';

/** The console's files into `outDir`/console-assets/, its sources added to the staleness inputs. */
async function writeConsole(outDir: string): Promise<void> {
  const built = await buildConsole();
  const dir = path.join(outDir, CONSOLE_ASSETS_DIR);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, CONSOLE_FILES.script), built.script);
  fs.writeFileSync(path.join(dir, CONSOLE_FILES.stylesheet), built.stylesheet);
  const inputsFile = path.join(outDir, INPUTS_FILE);
  const inputs = new Set<string>(JSON.parse(fs.readFileSync(inputsFile, 'utf8')));
  for (const input of [...built.inputs, fileURLToPath(new URL('./build-console.ts', import.meta.url))]) {
    inputs.add(input);
  }
  fs.writeFileSync(inputsFile, `${JSON.stringify([...inputs].sort(), null, 1)}\n`);
}

/** `pnpm build`: the gateway, the indexer, the operator CLI and the console into dist/ (or `outDir`). */
export async function buildServices(outDir = DIST_DIR): Promise<BuildResult<keyof typeof SERVICE_ENTRY_POINTS>> {
  const result = await buildBundles({ entryPoints: SERVICE_ENTRY_POINTS, outDir, selfContained: ['svc'] });
  await writeConsole(outDir);
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  // `--if-stale` (pnpm start, pnpm svc): build only when a source changed since the last build.
  const ifStale = process.argv.includes('--if-stale');
  const outArg = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
  const outDir = outArg ? path.resolve(outArg) : DIST_DIR;
  if (!ifStale || isStale(outDir, Object.keys(SERVICE_ENTRY_POINTS))) {
    const result = await buildServices(outDir);
    const relative = Object.values<string>(result.bundles).map((file) => path.relative(process.cwd(), file));
    // stderr: `pnpm -s svc ...` output must stay the command's own.
    process.stderr.write(`built ${relative.join(', ')}\n`);
  }
}
