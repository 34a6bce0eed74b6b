import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ledger, verifyWorkspaceChain } from '@tms/ledger';
import { ApiClient, cliLines, createTestDatabase, runSvc, type TestDatabase } from '@tms/testkit';
import { postgresTool } from '@tms/testkit/postgres-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../gateway/src/gateway';
import { type Harness, startHarness, startQuietGateway } from '../../gateway/test/harness';

// The restore drill of docs/operations.md ("Backup and restore"), run as written: `pg_dump -Fc`
// of a ledger while concurrent POST /v1/memories keep writing, `pg_restore` into a fresh
// database, then the checks an operator makes: every restored chain is intact and a prefix of
// the live one, retried writes the snapshot holds replay byte for byte, `svc index rebuild`
// makes recall complete, and a gateway starts on the restored database.

const run = promisify(execFile);
const PG_DUMP = postgresTool('pg_dump');
const PG_RESTORE = postgresTool('pg_restore');
const WRITERS = 4;

/** A word no other write holds (letters only, so the text analysis keeps it whole). */
const tag = (k: number) =>
  `zq${[...k.toString(26)].map((digit) => String.fromCharCode(97 + Number.parseInt(digit, 26))).join('')}`;

interface Write {
  api: ApiClient;
  workspace: string;
  key: string;
  body: Record<string, unknown>;
  text: string;
  sequence: number;
  startedAt: number;
  endedAt: number;
}

if (!PG_DUMP || !PG_RESTORE) {
  console.log('restore drill skipped: pg_dump and pg_restore not found under /usr/lib/postgresql/*/bin');
}

describe.skipIf(!PG_DUMP || !PG_RESTORE)(
  'restore drill: pg_dump under load, pg_restore, verify',
  { timeout: 300_000 },
  () => {
    let h: Harness;
    let restored: TestDatabase;
    let restoredGateway: RunningGateway | null = null;
    let folder: string;
    const writes: Write[] = [];
    const namespaces = new Map<string, string>();
    let dumpWindow: { startedAt: number; endedAt: number };

    beforeAll(async () => {
      folder = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-restore-'));
      h = await startHarness({ driver: 'postgres' });
      const clients: { id: string; api: ApiClient }[] = [];
      for (let i = 0; i < 2; i += 1) {
        const { id, api } = await h.workspace();
        const ns = await api.post('/v1/namespaces', { parent_id: null, name: 'load' });
        namespaces.set(id, ns.body.namespace.id);
        clients.push({ id, api });
      }

      // Writers POST memories until told to stop, each write with its own Idempotency-Key.
      let stop = false;
      const writer = async (n: number) => {
        for (let i = 0; !stop; i += 1) {
          const { id, api } = clients[(n + i) % clients.length] as { id: string; api: ApiClient };
          const key = `drill-${n}-${i}`;
          const body = {
            namespace_id: namespaces.get(id),
            kind: 'claim',
            text: `Writer ${n} saw the otter ${tag(n * 1000 + i)} today.`,
            valid_from: 0,
          };
          const startedAt = performance.now();
          const res = await api.post('/v1/memories', body, { idem: key });
          if (res.status !== 200) throw new Error(`write ${key}: ${res.status} ${res.text}`);
          writes.push({
            api,
            workspace: id,
            key,
            body,
            text: res.text,
            sequence: res.body.commit.sequence,
            startedAt,
            endedAt: performance.now(),
          });
        }
      };
      const until = async (count: number) => {
        while (writes.length < count) await new Promise((resolve) => setTimeout(resolve, 10));
      };
      const load = Promise.all(Array.from({ length: WRITERS }, (_, n) => writer(n)));
      try {
        await until(40);
        const startedAt = performance.now();
        await run(PG_DUMP as string, ['-Fc', '-f', path.join(folder, 'tms.dump'), '-d', h.database?.url as string]);
        dumpWindow = { startedAt, endedAt: performance.now() };
        await until(writes.length + 40);
      } finally {
        stop = true;
        await load;
      }

      restored = await createTestDatabase('tms_restored');
      await run(PG_RESTORE as string, [
        '--no-owner',
        '--no-privileges',
        '--exit-on-error',
        '-d',
        restored.url,
        path.join(folder, 'tms.dump'),
      ]);
    }, 240_000);

    afterAll(async () => {
      await restoredGateway?.close();
      await h?.close();
      await restored?.drop();
      fs.rmSync(folder, { recursive: true, force: true });
    });

    /** Each workspace's head in the restored copy, as its chain recomputes it. */
    const restoredHeads = new Map<string, { sequence: number; chainHash: string }>();

    it('dumped while writes ran, the restored ledger holds an intact prefix of each live chain', async () => {
      // Writes were answered before, during and after the dump.
      expect(writes.filter((w) => w.endedAt < dumpWindow.startedAt).length).toBeGreaterThan(0);
      expect(
        writes.filter((w) => w.startedAt < dumpWindow.endedAt && w.endedAt > dumpWindow.startedAt).length,
      ).toBeGreaterThan(0);
      expect(writes.filter((w) => w.startedAt > dumpWindow.endedAt).length).toBeGreaterThan(0);

      const copy = await Ledger.open({ databaseUrl: restored.url });
      const live = h.gateway.ledger;
      try {
        expect(await copy.ready()).toBe(true);
        for (const workspace of namespaces.keys()) {
          const verdict = await copy.snapshot((stores) => verifyWorkspaceChain(stores, workspace));
          if (!verdict.intact) throw new Error(`restored ${workspace} breaks: ${verdict.reason}`);
          const liveHead = await live.stores.chain.head(workspace);
          expect(verdict.sequence).toBeLessThanOrEqual(liveHead?.sequence as number);
          expect(await live.stores.commits.chainHashAt(workspace, verdict.sequence)).toBe(verdict.chainHash);
          restoredHeads.set(workspace, { sequence: verdict.sequence, chainHash: verdict.chainHash });
        }
      } finally {
        await copy.close();
      }
      // The snapshot is older than the live ledger: writes went on after it.
      const behind = [...namespaces.keys()].filter(
        (w) =>
          (restoredHeads.get(w)?.sequence ?? 0) <
          Math.max(...writes.filter((x) => x.workspace === w).map((x) => x.sequence)),
      );
      expect(behind.length).toBeGreaterThan(0);
    });

    it('rebuilds the index of the restored copy with progress', async () => {
      const rebuilt = await runSvc(['index', 'rebuild'], {
        DATABASE_URL: restored.url,
        SEARCH_PROVIDER: 'postgres',
        EMBEDDER: 'none',
      });
      expect(rebuilt.code, rebuilt.stderr).toBe(0);
      const commits = [...restoredHeads.values()].reduce((n, head) => n + head.sequence, 0);
      expect(rebuilt.stdout.trim()).toBe(`rebuilt postgres index: 2 workspaces, ${commits} commits`);
      expect(cliLines(rebuilt.stderr)).toContain(`[${'#'.repeat(30)}] 100% ${commits}/${commits} commits`);
    });

    it('starts a gateway on the restored copy that replays what the snapshot holds and recalls', async () => {
      restoredGateway = await startQuietGateway(restored.url, h.issuer, { EMBEDDER: 'none' });
      const url = restoredGateway.url;
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      const on = (api: ApiClient) => new ApiClient(url, api.token, api.workspace);

      const held = writes.filter((w) => w.sequence <= (restoredHeads.get(w.workspace)?.sequence ?? 0));
      const lost = writes.filter((w) => w.sequence > (restoredHeads.get(w.workspace)?.sequence ?? 0));
      expect(held.length).toBeGreaterThan(0);
      expect(lost.length).toBeGreaterThan(0);
      for (const write of held) {
        const replay = await on(write.api).post('/v1/memories', write.body, { idem: write.key });
        expect(replay.status).toBe(200);
        expect(replay.text, write.key).toBe(write.text);
      }

      // Recall is complete up to each restored head (nothing indexes on this gateway but the rebuild).
      for (const [workspace, head] of restoredHeads) {
        const someone = held.findLast((w) => w.workspace === workspace) as Write;
        const recall = await on(someone.api).post('/v1/recall', {
          namespace_ids: [namespaces.get(workspace)],
          query: String(someone.body.text).split(' ')[5],
          mode: 'lexical',
          min_sequence: head.sequence,
        });
        expect(recall.body.status, recall.text).toBe('complete');
        const found = recall.body.items.map((item: { memory: { id: string } }) => item.memory.id);
        expect(found).toEqual([JSON.parse(someone.text).memory.id]);
      }

      // A write the snapshot lost is written anew when its client retries it: a new memory, after
      // the restored head (docs/semantics.md, "Backup and restore").
      const retried = lost[0] as Write;
      const again = await on(retried.api).post('/v1/memories', retried.body, { idem: retried.key });
      expect(again.status).toBe(200);
      expect(again.body.commit.sequence).toBe((restoredHeads.get(retried.workspace)?.sequence as number) + 1);
      expect(again.body.memory.id).not.toBe(JSON.parse(retried.text).memory.id);
    });
  },
);
