import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '../src');

async function bundleForBrowser(entry: string) {
  return build({
    entryPoints: [entry],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
}

describe('browser build', () => {
  it('bundles for platform=browser: the runtime imports nothing of Node', async () => {
    const result = await bundleForBrowser(join(SRC, 'index.ts'));
    expect(result.errors).toEqual([]);
    const text = result.outputFiles[0]?.text ?? '';
    expect(text).toContain('X-Service-Workspace');
    expect(text).not.toMatch(/from\s*["']node:|require\(["']node:/);
  });

  it('would fail if the runtime imported a Node module (the check can fail)', async () => {
    const dir = join(import.meta.dirname, '../test-output');
    mkdirSync(dir, { recursive: true });
    const entry = join(dir, 'node-import.ts');
    writeFileSync(entry, `import { createHash } from 'node:crypto';\nexport const h = createHash('sha256');\n`);
    await expect(bundleForBrowser(entry)).rejects.toThrow(/node:crypto/);
  });
});
