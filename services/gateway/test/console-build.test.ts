import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@tms/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { buildServices, CONSOLE_ASSETS_DIR, REPO_ROOT } from '../../../scripts/build';
import { INPUTS_FILE, isStale } from '../../../scripts/staleness.mjs';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-build-console-'));
let gateway: ChildProcess | null = null;
afterAll(() => {
  gateway?.kill('SIGKILL');
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe('the console in a build', () => {
  it('is built beside the bundles, counts for staleness, and the built gateway serves it', async () => {
    const outDir = path.join(scratch, 'dist');
    const { bundles } = await buildServices(outDir);
    for (const file of ['console.js', 'console.css']) {
      expect(fs.statSync(path.join(outDir, CONSOLE_ASSETS_DIR, file)).size).toBeGreaterThan(1_000);
    }
    // `pnpm start` rebuilds when a console source changes, like any service source.
    const inputs: string[] = JSON.parse(fs.readFileSync(path.join(outDir, INPUTS_FILE), 'utf8'));
    expect(inputs).toContain(path.join(REPO_ROOT, 'services/console/src/timeline.tsx'));
    expect(inputs).toContain(path.join(REPO_ROOT, 'scripts/build-console.ts'));
    expect(isStale(outDir, ['gateway'])).toBe(false);

    // The built gateway reads the built files (no esbuild at run time) and serves them.
    const port = await freePort();
    gateway = spawn(process.execPath, [bundles.gateway], {
      cwd: scratch,
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: path.join(scratch, 'data'),
        EMBEDDER: 'none',
      },
      stdio: 'ignore',
    });
    let shell = '';
    for (let tries = 0; tries < 300 && !shell; tries += 1) {
      shell = await fetch(`http://127.0.0.1:${port}/console`)
        .then((answer) => (answer.ok ? answer.text() : ''))
        .catch(() => '');
      if (!shell) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const script = /\/console\/assets\/console\.[0-9a-f]{20}\.js/.exec(shell)?.[0];
    expect(script).toBeDefined();
    const served = await fetch(`http://127.0.0.1:${port}${script}`);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer())).toEqual(
      fs.readFileSync(path.join(outDir, CONSOLE_ASSETS_DIR, 'console.js')),
    );
  }, 60_000);
});
