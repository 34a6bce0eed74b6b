import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { buildBundles, CHILD_ENTRY_POINTS, REPO_ROOT } from './build';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-build-embedder-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('the builtin embedder in a build', () => {
  it('starts from a bundle run with plain node: the child beside it, the model through the linked packages', async () => {
    const outDir = path.join(scratch, 'dist');
    const { bundles } = await buildBundles({
      entryPoints: { probe: path.join(REPO_ROOT, 'packages/search/test/fixtures/builtin-embedder-probe.ts') },
      outDir,
    });
    for (const name of Object.keys(CHILD_ENTRY_POINTS)) {
      expect(fs.existsSync(path.join(outDir, 'bin', `${name}.mjs`))).toBe(true);
    }
    // Run from elsewhere, as a deployment would: nothing may resolve through the repository's own layout.
    const { stdout } = await promisify(execFile)(process.execPath, [bundles.probe], { cwd: scratch, timeout: 60_000 });
    const report = JSON.parse(stdout.trim()) as {
      dimensions: number;
      model: string;
      ownNice: number;
      queryLaneNice: number;
      otherThreadNices: number[];
      command: string[];
    };
    expect(report).toMatchObject({ dimensions: 512, model: 'builtin:use-lite@512', queryLaneNice: report.ownNice });
    // The documents' lane and every helper thread yield to the gateway.
    expect(report.otherThreadNices.length).toBeGreaterThan(0);
    expect(new Set(report.otherThreadNices)).toEqual(new Set([19]));
    expect(report.command).toContain(path.join(outDir, 'bin', 'builtin-embedder-worker.mjs'));
  });
});
