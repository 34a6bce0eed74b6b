import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * A new PGlite data directory costs a run of `initdb` inside WebAssembly: several seconds of CPU,
 * the larger part of a PGlite gateway's start in a test. Its result depends only on the PGlite
 * release, so it is made once per release (in the system's temporary folder, shared by the test
 * processes) and copied into each test's fresh folder. The copy is a cluster nobody has opened
 * since `initdb`: the ledger's migrations, extensions and everything else still run at the
 * test's first open, as on a user's first `pnpm start`.
 */
export async function seedPgliteDirectory(target: string): Promise<void> {
  if (fs.existsSync(target) && fs.readdirSync(target).length > 0) throw new Error(`${target} is not empty`);
  fs.cpSync(await template(), target, { recursive: true });
}

let made: Promise<string> | null = null;

function template(): Promise<string> {
  made ??= (async () => {
    const version = pgliteVersion();
    const folder = path.join(os.tmpdir(), `tms-pglite-initdb-${version}`);
    if (fs.existsSync(path.join(folder, 'PG_VERSION'))) return folder;
    // Made aside and renamed into place: a process that loses the race keeps the winner's copy.
    const scratch = path.join(os.tmpdir(), `tms-pglite-initdb-${version}.${crypto.randomUUID()}`);
    const client = await PGlite.create(scratch);
    await client.close();
    try {
      fs.renameSync(scratch, folder);
    } catch {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
    if (!fs.existsSync(path.join(folder, 'PG_VERSION'))) throw new Error(`no PGlite cluster in ${folder}`);
    return folder;
  })();
  return made;
}

/** The installed PGlite's version (its package.json is not among its exports: found from its entry). */
function pgliteVersion(): string {
  let folder = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (;;) {
    const manifest = path.join(folder, 'package.json');
    if (fs.existsSync(manifest)) {
      const { name, version } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string; version: string };
      if (name === '@electric-sql/pglite') return version;
    }
    const parent = path.dirname(folder);
    if (parent === folder) throw new Error('@electric-sql/pglite: package.json not found');
    folder = parent;
  }
}
