import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { Ledger } from '../src/index';
import { migrateInLayout } from '../src/layout';
import { rowsOf } from '../src/rows';

const MIGRATIONS = path.join(import.meta.dirname, '../drizzle');

/** The migrations folder as it was before the migration `tag`. */
function foldersBefore(tag: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-migrations-'));
  const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS, 'meta/_journal.json'), 'utf8'));
  const index = journal.entries.findIndex((e: { tag: string }) => e.tag === tag);
  journal.entries = journal.entries.slice(0, index);
  fs.mkdirSync(path.join(dir, 'meta'));
  fs.writeFileSync(path.join(dir, 'meta/_journal.json'), JSON.stringify(journal));
  for (const entry of journal.entries) {
    fs.copyFileSync(path.join(MIGRATIONS, `${entry.tag}.sql`), path.join(dir, `${entry.tag}.sql`));
  }
  return dir;
}

/** `fn` on a fresh embedded ledger migrated up to the folder `before` (it seeds rows, migrates the rest and checks). */
async function onLedgerBefore(
  before: string,
  fn: (ledger: Ledger, db: Ledger['handle']['db']) => Promise<void>,
): Promise<void> {
  const ledger = await Ledger.open({});
  try {
    await migrateInLayout(ledger.handle.db, before, 'plain');
    await fn(ledger, ledger.handle.db);
  } finally {
    await ledger.close();
  }
}

describe('migration 0003_directories', () => {
  const before = foldersBefore('0003_directories');
  afterAll(() => fs.rmSync(before, { recursive: true, force: true }));

  it('copies existing credentials, memberships and workspaces.create answers into the directories', async () => {
    await onLedgerBefore(before, async (ledger, db) => {
      await db.execute(sql`insert into credentials (workspace_id, id, kind, name, actor_id, secret_sha256, capabilities, created_at, created_by)
        values ('ws_a', 'cred_old', 'service_key', 'old'::bytea, 'act_1', 'ff', '{read}', 1, 'act_0')`);
      await db.execute(
        sql`insert into memberships (workspace_id, actor_id, role, position) values ('ws_a', 'act_0', 'admin', 0)`,
      );
      await db.execute(sql`insert into idempotency_records (workspace_id, principal, key, operation, fingerprint, status, body, created_at)
        values ('', 'user:1', 'k1', 'workspaces.create', 'fp', 200, '{}', 1), ('ws_a', 'user:1', 'k2', 'memories.create', 'fp2', 200, '{}', 1)`);
      await ledger.migrate();
      expect(await ledger.stores.credentials.workspaceOfCredential('cred_old')).toBe('ws_a');
      expect((await ledger.stores.credentials.getCredential('ws_a', 'cred_old'))?.id).toBe('cred_old');
      const members = rowsOf<{ actor_id: string; workspace_id: string }>(
        await db.execute(sql`select actor_id, workspace_id from membership_directory`),
      );
      expect(members).toEqual([{ actor_id: 'act_0', workspace_id: 'ws_a' }]);
      const directoryRecord = await ledger.stores.idempotency.find('user:1', 'k1', '', 'principal');
      expect(directoryRecord).toMatchObject({ workspaceId: '', operation: 'workspaces.create', fingerprint: 'fp' });
      const left = rowsOf<{ key: string }>(await db.execute(sql`select key from idempotency_records order by key`));
      expect(left).toEqual([{ key: 'k2' }]);
    });
  });
});

describe('migration 0005_idempotency_key_directory', () => {
  const before = foldersBefore('0005_idempotency_key_directory');
  afterAll(() => fs.rmSync(before, { recursive: true, force: true }));

  it('enters every key used before where it was first used, so it conflicts in other workspaces', async () => {
    await onLedgerBefore(before, async (ledger, db) => {
      await db.execute(sql`insert into idempotency_records (workspace_id, principal, key, operation, fingerprint, status, body, created_at)
        values ('ws_a', 'user:1', 'k1', 'memories.create', 'fp-a', 200, '{"a":1}', 1),
               ('ws_b', 'user:2', 'k1', 'memories.create', 'fp-b', 200, '{"b":1}', 2)`);
      await ledger.migrate();
      const entries = rowsOf<{ principal: string; workspace_id: string; fingerprint: string }>(
        await db.execute(
          sql`select principal, workspace_id, fingerprint from idempotency_key_directory order by principal`,
        ),
      );
      expect(entries).toEqual([
        { principal: 'user:1', workspace_id: 'ws_a', fingerprint: 'fp-a' },
        { principal: 'user:2', workspace_id: 'ws_b', fingerprint: 'fp-b' },
      ]);
      const idempotency = ledger.stores.idempotency;
      // Its own workspace replays the stored answer; another answers with the entry, which conflicts.
      expect(await idempotency.find('user:1', 'k1', 'ws_a', 'principal')).toMatchObject({ body: '{"a":1}' });
      expect(await idempotency.find('user:1', 'k1', 'ws_b', 'principal')).toMatchObject({
        workspaceId: 'ws_a',
        fingerprint: 'fp-a',
        body: '',
      });
      expect(await idempotency.find('user:1', 'k1', '', 'principal')).toMatchObject({ workspaceId: 'ws_a' });
      // A credential bound to ws_b keeps its keys there: user:1's key is not its concern.
      expect(await idempotency.find('user:1', 'k1', 'ws_b', 'workspace')).toBeNull();
    });
  });
});

describe('migration 0007_memory_keys', () => {
  const before = foldersBefore('0007_memory_keys');
  afterAll(() => fs.rmSync(before, { recursive: true, force: true }));

  it('marks the memories retracted before it as retracted when their newest revision ended; others stay current', async () => {
    await onLedgerBefore(before, async (ledger, db) => {
      const memory = (id: string, generation: number) =>
        sql`insert into memories (workspace_id, id, namespace_id, kind, generation, created_at)
          values ('ws_a', ${id}, 'ns_1', 'claim', ${generation}, 1)`;
      const revision = (id: string, memoryId: string, generation: number, until: number | null) =>
        sql`insert into revisions (workspace_id, id, memory_id, namespace_id, kind, generation, text, status, valid_from,
              recorded_at, recorded_until, commit_sequence, evidence_ids, support_revision_ids)
            values ('ws_a', ${id}, ${memoryId}, 'ns_1', 'claim', ${generation}, 't'::bytea, 'candidate', 0,
              ${generation}, ${until}, ${generation}, '{}', '{}')`;
      // Corrected once and still current; retracted at once; corrected, then retracted.
      await db.execute(memory('mem_live', 2));
      await db.execute(revision('rev_live_1', 'mem_live', 1, 5));
      await db.execute(revision('rev_live_2', 'mem_live', 2, null));
      await db.execute(memory('mem_gone', 1));
      await db.execute(revision('rev_gone_1', 'mem_gone', 1, 7));
      await db.execute(memory('mem_late', 2));
      await db.execute(revision('rev_late_1', 'mem_late', 1, 3));
      await db.execute(revision('rev_late_2', 'mem_late', 2, 9));
      await ledger.migrate();
      const rows = rowsOf<{ id: string; retracted_at: number | null; key: unknown; key_sha256: string | null }>(
        await db.execute(sql`select id, retracted_at, key, key_sha256 from memories order by id`),
      );
      expect(rows).toEqual([
        { id: 'mem_gone', retracted_at: 7, key: null, key_sha256: null },
        { id: 'mem_late', retracted_at: 9, key: null, key_sha256: null },
        { id: 'mem_live', retracted_at: null, key: null, key_sha256: null },
      ]);
    });
  });
});
