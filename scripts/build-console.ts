/**
 * Builds the browser console (services/console) with esbuild: one minified script and one
 * stylesheet, in memory. `pnpm build` (scripts/build.ts) writes them to dist/console-assets/,
 * where the built gateway finds them; a gateway run from its sources (tests, `pnpm dev`) calls
 * this on the first visit to /console instead. The gateway names and serves them like GraphiQL's
 * assets (content hash, immutable, compressed once).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const CONSOLE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'services', 'console');

/** File names in dist/console-assets/. */
export const CONSOLE_FILES = { script: 'console.js', stylesheet: 'console.css' } as const;

export interface ConsoleBuild {
  script: Buffer;
  stylesheet: Buffer;
  /** Absolute paths of the sources read (for `pnpm start`'s staleness check). */
  inputs: string[];
}

export async function buildConsole(): Promise<ConsoleBuild> {
  const result = await build({
    entryPoints: {
      [path.parse(CONSOLE_FILES.script).name]: path.join(CONSOLE_DIR, 'src', 'main.tsx'),
    },
    absWorkingDir: CONSOLE_DIR,
    outdir: path.join(CONSOLE_DIR, 'out'),
    write: false,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    tsconfig: path.join(CONSOLE_DIR, 'tsconfig.json'),
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const byExtension = (extension: string) => {
    const file = result.outputFiles.find((output) => output.path.endsWith(extension));
    if (!file) throw new Error(`the console build wrote no ${extension} file`);
    return Buffer.from(file.contents);
  };
  const inputs = Object.keys(result.metafile.inputs)
    .filter((input) => !input.includes('node_modules/'))
    .map((input) => path.resolve(CONSOLE_DIR, input));
  return { script: byExtension('.js'), stylesheet: byExtension('.css'), inputs };
}
