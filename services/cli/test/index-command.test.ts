import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { BUILTIN_MODEL, PostgresSearchProvider } from '@tms/search';
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

  it('shows the lag of both arms, rebuilds and re-embeds with progress bars, and then shows none', async () => {
    const provider = new PostgresSearchProvider(h.gateway.ledger.handle.db);
    await provider.prepare();
    // Vectors of a model no longer configured: the rebuild drops them.
    const [revision] = await h.gateway.ledger.stores.memories.revisionsOfMemories(
      ws,
      (await h.gateway.ledger.stores.commits.after(ws, 0, 100)).flatMap((c) =>
        c.subjectIds.filter((id) => id.startsWith('mem_')),
      ),
    );
    if (!revision) throw new Error('no revision to give an old vector');
    const old = new Float32Array(4).fill(0.5);
    await provider.applyVectors(ws, {
      model: 'test:old@4',
      dimensions: 4,
      upserts: [{ ...revision, workspaceId: ws, revisionId: revision.id, vector: old }],
      updates: [],
      deletes: [],
    });
    expect(await provider.vectorRevisionIds(ws, 'test:old@4')).toEqual([revision.id]);

    const before = await svc(['index', 'status']);
    expect(before.stdout).toMatch(new RegExp(`${ws}\\s+14\\s+0\\s+14`));
    expect(before.stdout).toContain('14 commits not yet indexed');
    expect(before.stdout).toContain(`semantic arm ${BUILTIN_MODEL}`);
    expect(before.stdout).toContain('14 commits not yet embedded');

    const rebuilt = await svc(['index', 'rebuild', '--workspace', ws]);
    expect(rebuilt.stdout.trim()).toBe(
      `rebuilt postgres index: 1 workspaces, 14 commits\nre-embedded with ${BUILTIN_MODEL}: 1 workspaces, 14 commits`,
    );
    expect(rebuilt.stderr).toContain('[------------------------------]   0% 0/14 commits');
    expect(rebuilt.stderr).toContain('[##############################] 100% 14/14 commits');
    expect(rebuilt.stderr).toContain(`embedding with ${BUILTIN_MODEL}`);

    const after = await svc(['index', 'status']);
    expect(after.stdout).toContain('0 commits not yet indexed');
    expect(after.stdout).toContain('0 commits not yet embedded');
    expect(await provider.indexedRevisionIds(ws)).toHaveLength(12);
    expect(await provider.vectorRevisionIds(ws, BUILTIN_MODEL)).toHaveLength(12);
    expect(await provider.vectorRevisionIds(ws, 'test:old@4')).toEqual([]);

    const lexicalOnly = await promisify(execFile)(TSX, ['services/cli/src/main.ts', 'index', 'status'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: h.database?.url, SEARCH_PROVIDER: 'postgres', EMBEDDER: 'none' },
    });
    expect(lexicalOnly.stdout).toContain('semantic arm off (EMBEDDER=none)');
  }, 180_000);

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
