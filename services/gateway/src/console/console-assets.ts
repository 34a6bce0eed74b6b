import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HashedAsset, loadOnce } from '../http/hashed-assets';

/** The console's script and stylesheet live under this prefix, named by content hash. */
export const CONSOLE_ASSETS_PATH = '/console/assets/';

interface ConsoleFiles {
  script: Buffer;
  stylesheet: Buffer;
}

/**
 * Built by `pnpm build` into dist/console-assets/, beside dist/bin/ where the gateway bundle
 * runs (scripts/build.ts, `CONSOLE_ASSETS_DIR`). From the sources there is no such folder: the
 * console is built then, in memory, by scripts/build-console.ts (tests, `pnpm dev`).
 */
async function readConsoleFiles(): Promise<ConsoleFiles> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const built = path.join(here, '..', 'console-assets');
  if (fs.existsSync(path.join(built, 'console.js'))) {
    return {
      script: fs.readFileSync(path.join(built, 'console.js')),
      stylesheet: fs.readFileSync(path.join(built, 'console.css')),
    };
  }
  // A path the service bundler cannot follow: esbuild (a dev dependency) stays out of dist/.
  const builder = pathToFileURL(path.join(here, '..', '..', '..', '..', 'scripts', 'build-console.ts')).href;
  const { buildConsole } = (await import(/* @vite-ignore */ builder)) as {
    buildConsole(): Promise<ConsoleFiles>;
  };
  return buildConsole();
}

export class ConsoleAssets {
  private constructor(
    readonly script: HashedAsset,
    readonly stylesheet: HashedAsset,
  ) {}

  static async load(): Promise<ConsoleAssets> {
    const files = await readConsoleFiles();
    return new ConsoleAssets(
      new HashedAsset(CONSOLE_ASSETS_PATH, 'console', 'js', 'text/javascript; charset=utf-8', files.script),
      new HashedAsset(CONSOLE_ASSETS_PATH, 'console', 'css', 'text/css; charset=utf-8', files.stylesheet),
    );
  }

  /** The asset a file name (`console.<hash>.js`) names, or undefined for any other name or hash. */
  find(file: string): HashedAsset | undefined {
    return [this.script, this.stylesheet].find((asset) => asset.file === file);
  }
}

/** The process's one set of console assets, loaded (or built) on the first visit. */
export const consoleAssets = loadOnce(() => ConsoleAssets.load());
