import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { PostgresSearchProvider } from '@tms/search';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../../gateway/test/harness';
import { progressBar } from '../src/index-command';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

describe('svc index status | rebuild', () => {
  let h: Harness;
  let ws: string;
  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
    const { id, api } = await h.workspace();
    ws = id;
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'n' })).body.namespace;
    for (let i = 0; i < 12; i += 1) {
      await api.post('/v1/memories', { namespace_id: ns.id, kind: 'claim', text: `note ${i}`, valid_from: 0 });
    }
  }, 120_000);
  afterAll(() => h?.close());

  const svc = (args: string[]) =>
    promisify(execFile)(TSX, ['services/cli/src/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: h.database?.url, SEARCH_PROVIDER: 'postgres' },
    });

  it('shows the lag, rebuilds with a progress bar, and then shows none', async () => {
    const before = await svc(['index', 'status']);
    expect(before.stdout).toMatch(new RegExp(`${ws}\\s+14\\s+0\\s+14`));
    expect(before.stdout).toContain('14 commits not yet indexed');

    const rebuilt = await svc(['index', 'rebuild', '--workspace', ws]);
    expect(rebuilt.stdout.trim()).toBe('rebuilt postgres index: 1 workspaces, 14 commits');
    expect(rebuilt.stderr).toContain('[------------------------------]   0% 0/14 commits');
    expect(rebuilt.stderr).toContain('[##############################] 100% 14/14 commits');

    const after = await svc(['index', 'status']);
    expect(after.stdout).toContain('0 commits not yet indexed');
    const provider = new PostgresSearchProvider(h.gateway.ledger.handle.db);
    expect(await provider.indexedRevisionIds(ws)).toHaveLength(12);
  }, 120_000);

  it('refuses an unknown workspace and an unknown subcommand with a one-line reason', async () => {
    await expect(svc(['index', 'rebuild', '--workspace', 'ws_nope'])).rejects.toMatchObject({
      stderr: expect.stringContaining('svc: no workspace ws_nope'),
    });
    await expect(svc(['index', 'compact'])).rejects.toMatchObject({ code: 2 });
  }, 60_000);

  it('draws the bar in proportion', () => {
    expect(progressBar(5, 10, 10)).toBe('[#####-----]  50% 5/10 commits');
    expect(progressBar(0, 0, 4)).toBe('[####] 100% 0/0 commits');
  });
});
