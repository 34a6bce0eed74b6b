import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OPERATIONS_BY_NAME } from '@tms/catalog';
import { composeDomain } from '@tms/composition';
import type { Ledger } from '@tms/ledger';
import { createTestDatabase, freshKey, seedPgliteDirectory, type TestDatabase } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEnv } from '../src/env';
import { ChainBroken, verifyLedger } from '../src/ledger-command';
import { runInProcess, withTestLedger } from './in-process';

// Rows are changed by SQL with ids the ledger made ([a-z0-9_] only), quoted as literals.

/*
 * `svc ledger verify` as an operator reads it: the record-end pass reported once however its
 * pages fall, and a broken commit named with the record and the field that changed (from the
 * rows, or from an export taken before), on both ledgers.
 */

type Driver = 'postgres' | 'pglite';
const SLOW = { timeout: 300_000 };

describe.each<Driver>(['postgres', 'pglite'])('svc ledger verify (%s)', (driver) => {
  let db: TestDatabase | undefined;
  let dataDir: string;
  let base: Record<string, string>;
  let ws: string;
  let namespaces: string[];
  let memories: { id: string; sequence: number }[];

  const svc = (argv: string[]) => runInProcess(argv, async () => parseEnv(base));

  const withLedger = <T>(use: (ledger: Ledger) => Promise<T>) => withTestLedger({ databaseUrl: db?.url, dataDir }, use);

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-verify-'));
    if (driver === 'pglite') await seedPgliteDirectory(path.join(dataDir, 'pglite'));
    db = driver === 'postgres' ? await createTestDatabase('tms_cli_verify') : undefined;
    base = { ...(db ? { DATABASE_URL: db.url } : { DATA_DIR: dataDir }), USER: 'ops-test', EMBEDDER: 'none' };
    if (db) expect((await svc(['migrate'])).code).toBe(0);
    ws = (await svc(['admin', 'workspace', 'create', '--name', 'verify'])).stdout.trim();
    namespaces = [];
    for (const name of ['a', 'b']) {
      namespaces.push((await svc(['admin', 'namespace', 'create', '--workspace', ws, '--name', name])).stdout.trim());
    }
    // Eight memories, one revision each: two full pages of four in the record-end pass.
    const { domain, ledger } = await composeDomain(parseEnv({ ...base, SEARCH_PROVIDER: 'none' }));
    try {
      const create = OPERATIONS_BY_NAME.get('memories.create');
      if (!create) throw new Error('no memories.create');
      memories = [];
      for (let i = 0; i < 8; i += 1) {
        const body = { namespace_id: namespaces[0], kind: 'claim', text: `fact ${i}`, valid_from: 0 };
        const answer = await domain.executeAsOperator(
          create,
          { params: {}, query: {}, body },
          { workspaceId: ws, operatorSubject: 'ops-test', idempotencyKey: freshKey() },
        );
        const parsed = JSON.parse(answer.json);
        memories.push({ id: parsed.memory.id, sequence: parsed.commit.sequence });
      }
    } finally {
      await ledger.close();
    }
  }, 300_000);
  afterAll(async () => {
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** What `verifyLedger` writes to a stderr that is a terminal or not. */
  async function progressOf(isTTY: boolean): Promise<string> {
    let written = '';
    const stderr = {
      isTTY,
      write: (text: string) => {
        written += text;
      },
    };
    const line = await withLedger((ledger) => verifyLedger(ledger, { workspace: ws, from: 1, batchSize: 4 }, stderr));
    expect(line).toMatch(
      new RegExp(`^ledger of workspace ${ws} is intact up to sequence 11, chain_hash [0-9a-f]{64}$`),
    );
    return written;
  }

  it('reports the record-end pass once, even when its last page comes back empty', SLOW, async () => {
    // Not a terminal: each chain batch a line, the record ends one line once the pass is done.
    const lines = (await progressOf(false)).trimEnd().split('\n');
    expect(lines.filter((l) => l.startsWith('record ends'))).toEqual(['record ends: 8 revisions checked']);
    expect(lines.at(-1)).toBe('record ends: 8 revisions checked');
    expect(lines.filter((l) => l.includes('commits'))).toHaveLength(3);
    // A terminal: one line redrawn per phase, never the same count twice.
    const drawn = await progressOf(true);
    const counts = [...drawn.matchAll(/record ends: (\d+) revisions checked/g)].map((m) => m[1]);
    expect(counts).toEqual(['4', '8']);
    expect(drawn.endsWith('record ends: 8 revisions checked\n')).toBe(true);
    expect(drawn.split('\n')).toHaveLength(3);
  });

  it('names the record and field a changed row broke, and prints its progress once', SLOW, async () => {
    const changed = memories[2] as { id: string; sequence: number };
    const move = (to: string) =>
      withLedger((ledger) =>
        ledger.handle.db.execute(
          `update memories set namespace_id = '${to}' where workspace_id = '${ws}' and id = '${changed.id}'`,
        ),
      );
    await move(namespaces[1] as string);
    try {
      const run = await svc(['ledger', 'verify', '--workspace', ws]);
      expect(run.code).toBe(1);
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines.filter((l) => l.startsWith('record ends'))).toHaveLength(1);
      expect(lines.at(-1)).toBe(
        `svc: ledger of workspace ${ws} breaks at sequence ${changed.sequence}: commit ${changed.sequence} no longer matches its chain hash: memory ${changed.id}: namespace_id is "${namespaces[1]}", the chain recorded "${namespaces[0]}"`,
      );
      await expect(
        withLedger((ledger) => verifyLedger(ledger, { workspace: ws, from: 1 }, { isTTY: false, write() {} })),
      ).rejects.toBeInstanceOf(ChainBroken);
    } finally {
      await move(namespaces[0] as string);
    }
    expect((await svc(['ledger', 'verify', '--workspace', ws])).code).toBe(0);
  });

  it(
    'with an export taken before, names a changed text by its hash; --from without --workspace is a wrong argument',
    SLOW,
    async () => {
      const file = path.join(dataDir, 'before.ndjson');
      expect((await svc(['export', '--workspace', ws, '--output', file])).code).toBe(0);
      const target = memories[5] as { id: string; sequence: number };
      const flip = () =>
        withLedger((ledger) =>
          ledger.handle.db.execute(
            `update revisions set text = set_byte(text, 0, get_byte(text, 0) # 1) where workspace_id = '${ws}' and memory_id = '${target.id}'`,
          ),
        );
      await flip();
      try {
        const alone = await svc(['ledger', 'verify', '--workspace', ws]);
        expect(alone.stderr).toMatch(/the rows alone cannot tell which \(an export taken before can/);
        const compared = await svc(['ledger', 'verify', '--workspace', ws, '--file', file]);
        expect(compared.code).toBe(1);
        expect(compared.stderr.trimEnd().split('\n').at(-1)).toMatch(
          new RegExp(
            `^svc: ledger of workspace ${ws} breaks at sequence ${target.sequence}: commit ${target.sequence} no longer matches its chain hash: revision rev_\\w+: text_sha256 is "[0-9a-f]{64}", the export recorded "[0-9a-f]{64}"$`,
          ),
        );
      } finally {
        await flip();
      }
      const fromAlone = await svc(['ledger', 'verify', '--file', file, '--from', '3']);
      expect(fromAlone.code).toBe(2);
      expect(fromAlone.stderr.split('\n')[0]).toBe(
        'svc: invalid_input: --from: verifies a workspace, give --workspace',
      );
    },
  );
});
