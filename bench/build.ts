/**
 * Compiles the gateway (and the bench's bare baseline server) to plain JavaScript with esbuild,
 * as production runs it: one `node` process, no tsx. Our workspace packages (which export .ts
 * sources) are bundled; third-party packages stay external and are linked into the output's
 * own node_modules, so Node resolves them exactly as it would in a deployment (graphql-js is
 * loaded with `createRequire(import.meta.url)`, PGlite loads its wasm from its own package).
 *
 * Layout of the output directory:
 *   bin/<name>.js      the bundles (ESM); the ledger finds its migrations at bin/../drizzle
 *   drizzle/           a copy of packages/ledger/drizzle
 *   node_modules/<p>   symlinks to the installed third-party packages
 *   package.json       {"type": "module"}
 *
 * Usage: tsx bench/build.ts [outDir] (default bench/.build).
 */
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_OUT_DIR = path.join(REPO_ROOT, 'bench', '.build');

export const ENTRY_POINTS = {
  gateway: path.join(REPO_ROOT, 'services/gateway/src/main.ts'),
  baseline: path.join(REPO_ROOT, 'bench/baseline-server.ts'),
} as const;

const BUILTINS = new Set(builtinModules);

/** Packages loaded with `createRequire` at run time (invisible to esbuild), and from where. */
const RUNTIME_REQUIRES: [name: string, from: string][] = [['graphql', 'services/gateway']];

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
 * workspace package would have loaded. Two different copies under one name cannot share one
 * node_modules, so that is an error rather than a silent pick.
 */
function externalThirdParty(linked: Map<string, string>): Plugin {
  return {
    name: 'external-third-party',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:') || BUILTINS.has(args.path)) return { path: args.path, external: true };
        const name = packageName(args.path);
        if (name.startsWith('@tms/')) return undefined; // ours: bundle the .ts sources
        // The bench's baseline server imports postgres.js exactly as the ledger has it installed
        // (the same patched copy), so it is looked up from the ledger when bench/ lacks it.
        const dir =
          findPackageDir(name, args.resolveDir) ?? findPackageDir(name, path.join(REPO_ROOT, 'packages/ledger'));
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

export interface BuildResult {
  outDir: string;
  /** Absolute path of each bundle, by entry name. */
  bundles: Record<keyof typeof ENTRY_POINTS, string>;
}

export async function buildAll(outDir = DEFAULT_OUT_DIR): Promise<BuildResult> {
  fs.rmSync(outDir, { recursive: true, force: true });
  const binDir = path.join(outDir, 'bin');
  fs.mkdirSync(binDir, { recursive: true });
  const linked = new Map<string, string>();
  await build({
    entryPoints: ENTRY_POINTS,
    outdir: binDir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // ESM builds first: the baseline bundles postgres.js through a relative path, and its
    // CommonJS build cannot `require` Node's modules from inside an ESM bundle.
    mainFields: ['module', 'main'],
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [externalThirdParty(linked)],
  });
  for (const [name, from] of RUNTIME_REQUIRES) {
    const dir = findPackageDir(name, path.join(REPO_ROOT, from));
    if (!dir) throw new Error(`cannot find package ${name} from ${from}`);
    linked.set(name, dir);
  }
  fs.cpSync(path.join(REPO_ROOT, 'packages/ledger/drizzle'), path.join(outDir, 'drizzle'), { recursive: true });
  fs.writeFileSync(path.join(outDir, 'package.json'), `${JSON.stringify({ type: 'module', private: true })}\n`);
  for (const [name, dir] of linked) {
    const link = path.join(outDir, 'node_modules', name);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(dir, link, 'dir');
  }
  return {
    outDir,
    bundles: { gateway: path.join(binDir, 'gateway.js'), baseline: path.join(binDir, 'baseline.js') },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const result = await buildAll(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
  process.stdout.write(`built ${Object.values(result.bundles).join(', ')}\n`);
}
