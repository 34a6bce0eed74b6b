import { createTestDatabase, type TestDatabase, testMigrateOptions } from '@tms/testkit';
import { inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledStatementRunner } from '../src/database';
import { Ledger } from '../src/ledger';
import type { RevisionRow } from '../src/rows';
import { idempotencyRecords, revisions, workspaces } from '../src/schema';
import { compiledFlushShapes, InsertCollector } from '../src/storage/insert-collector';
import { revisionRow } from './rows';

/**
 * A group commit's inserts are built by Drizzle once per shape, on rows of placeholders, and then
 * sent as that text with the placeholders filled by the encoders Drizzle bound to them (on
 * Postgres; PGlite always goes through Drizzle). Either way the rows stored must be exactly the
 * rows given: bytes of every string (U+0000 and astral characters included), nulls, arrays and
 * column defaults. These tests pin what the compiled path takes from Drizzle (its session's
 * client, the encoders of its parameters): an upgrade that changes either fails them.
 */
for (const driver of ['postgres', 'pglite'] as const) {
  describe(`group commit inserts, compiled once per shape (${driver})`, () => {
    let database: TestDatabase | null = null;
    let ledger: Ledger;
    const statements: string[] = [];

    beforeAll(async () => {
      database = driver === 'postgres' ? await createTestDatabase('tms_compiled') : null;
      ledger = await Ledger.open({
        databaseUrl: database?.url,
        onQuery: (text) => statements.push(text),
      });
      await ledger.migrate(testMigrateOptions());
    });

    afterAll(async () => {
      await ledger?.close();
      await database?.drop();
    });

    const workspace = (id: string, name: string) => ({ id, name, createdAt: 1.5, createdBy: `act_${id}` });
    const record = (key: string, subjectIds?: string[]) => ({
      workspaceId: 'ws_records',
      principal: 'act_p',
      key,
      operation: 'memories.create',
      fingerprint: `fp-${key}`,
      status: 201,
      body: `{"key":"${key}"}`,
      ...(subjectIds ? { subjectIds } : {}),
      createdAt: 2.25,
    });

    async function flush(rows: {
      workspaces: ReturnType<typeof workspace>[];
      records: ReturnType<typeof record>[];
    }): Promise<string> {
      const collector = new InsertCollector();
      for (const row of rows.workspaces) collector.add(workspaces, row);
      for (const row of rows.records) collector.idempotencyRecord(row as never, 'workspace');
      const before = statements.length;
      await ledger.handle.db.transaction((tx) => collector.flush(tx as never, 'ws_records'));
      const sent = statements.slice(before);
      expect(sent).toHaveLength(1);
      return sent[0] as string;
    }

    it('runs compiled texts on the driver beneath Drizzle on Postgres, inside transactions too', async () => {
      // Null means every compiled read falls back to Drizzle's own execute: correct, but slow.
      expect(compiledStatementRunner(ledger.handle.db) !== null).toBe(driver === 'postgres');
      await ledger.handle.db.transaction(async (tx) => {
        const run = compiledStatementRunner(tx as never);
        expect(run !== null).toBe(driver === 'postgres');
        if (run)
          expect(await run('select $1::text as echoed', ['in a transaction'])).toEqual([
            { echoed: 'in a transaction' },
          ]);
      });
      if (driver === 'postgres') {
        const run = compiledStatementRunner(ledger.handle.db);
        // A failure is Drizzle's error, as the gateway's error handling expects.
        const error = await run?.('select $1::int', ['not a number']).catch((e: unknown) => e);
        expect((error as Error).constructor.name).toBe('DrizzleQueryError');
        expect(statements.at(-1)).toBe('select $1::int');
      }
    });

    it('stores exactly the rows given, and sends the same text for the same shape', async () => {
      const first = {
        workspaces: [workspace('ws_a', 'plain'), workspace('ws_b', 'nul \u0000 and 🦊')],
        records: [record('k1', ['mem_1', 'mem_2']), record('k2')],
      };
      const second = {
        workspaces: [workspace('ws_c', '\u0000'), workspace('ws_d', 'é'.repeat(300))],
        records: [record('k3', []), record('k4')],
      };
      const compiledBefore = compiledFlushShapes();
      const firstText = await flush(first);
      const secondText = await flush(second);
      expect(secondText).toBe(firstText);
      // On Postgres the second flush reused the first one's compiled text (a parameter mismatch
      // would have left the shape to Drizzle); PGlite has no compiled path.
      expect(compiledFlushShapes() - compiledBefore).toBe(driver === 'postgres' ? 1 : 0);
      expect(firstText).toMatch(/^with "inserted_0" as \(insert into "workspaces"/);
      // A different shape (one row fewer) has its own text.
      const third = { workspaces: [workspace('ws_e', 'third')], records: [record('k5', ['mem_5'])] };
      expect(await flush(third)).not.toBe(firstText);

      const all = [first, second, third];
      const workspaceIds = all.flatMap((batch) => batch.workspaces.map((w) => w.id));
      const keys = all.flatMap((batch) => batch.records.map((r) => r.key));
      const db = ledger.handle.db;
      const storedWorkspaces = await db.select().from(workspaces).where(inArray(workspaces.id, workspaceIds));
      const storedRecords = await db.select().from(idempotencyRecords).where(inArray(idempotencyRecords.key, keys));
      expect(storedWorkspaces.sort((a, b) => a.id.localeCompare(b.id))).toEqual(
        all.flatMap((batch) => batch.workspaces),
      );
      expect(storedRecords.sort((a, b) => a.key.localeCompare(b.key))).toEqual(
        all.flatMap((batch) => batch.records.map((r) => ({ subjectIds: [], ...r }))),
      );
    });

    it('fills nulls and arrays of a shape compiled from other values exactly (nullable array columns too)', async () => {
      const revision = (id: string, attested: boolean) =>
        revisionRow('ws_nulls', id, {
          text: `text of ${id} \u0000`,
          validTo: attested ? 5.5 : null,
          evidenceIds: attested ? ['ev_1', 'ev,2'] : [],
          attestationEvidenceIds: attested ? ['ev_1', 'ev "3"'] : null,
          attestationVerificationIds: attested ? [] : null,
        });
      const send = async (rows: RevisionRow[]) => {
        const collector = new InsertCollector();
        for (const row of rows) collector.add(revisions, row);
        const before = statements.length;
        await ledger.handle.db.transaction((tx) => collector.flush(tx as never, null));
        return statements.slice(before);
      };
      const compiledBefore = compiledFlushShapes();
      // The shape is compiled on the first batch (checked against Drizzle's own parameters) and
      // reused for the second, whose nulls and arrays sit where the first had arrays and nulls.
      const first = [revision('rev_n1', false), revision('rev_n2', true)];
      const second = [revision('rev_n3', true), revision('rev_n4', false)];
      const [firstText] = await send(first);
      const [secondText] = await send(second);
      expect(secondText).toBe(firstText);
      expect(compiledFlushShapes() - compiledBefore).toBe(driver === 'postgres' ? 1 : 0);
      const stored = await ledger.handle.db
        .select()
        .from(revisions)
        .where(inArray(revisions.id, ['rev_n1', 'rev_n2', 'rev_n3', 'rev_n4']));
      expect(stored.sort((a, b) => a.id.localeCompare(b.id))).toEqual([...first, ...second]);
    });
  });
}
