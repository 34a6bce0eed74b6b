import { createTestDatabase, type TestDatabase, testMigrateOptions } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePathKey, Ledger, schema } from '../src/index';
import { LEFT_BEHIND_BY_MOVE, MoveTarget, movedTables, TargetHoldsLedgerError } from '../src/move';
import { evidenceRow, revisionRow } from './rows';

// MoveTarget (`svc ledger move`) from either driver into a fresh, migrated Postgres database:
// awkward values in every kind of column arrive as the same bytes (each table's COPY text is
// compared on both sides), the search cursors stay behind, the target's service settings are
// replaced, and a target that holds a ledger is refused.

type Driver = 'pglite' | 'postgres';
const DRIVERS: Driver[] = ['pglite', 'postgres'];

/** Text a client may send: controls, COPY's and arrays' special characters, non-BMP (text columns). */
const AWKWARD_TEXT = 'tab\t nl\n cr\r back\\slash "quote" {brace,comma} NULL é 😀';
/** The same with NUL, which only the `utf8` (bytea) columns can hold. */
const AWKWARD = `nul\u0000 ${AWKWARD_TEXT}`;

async function openFresh(driver: Driver): Promise<{ ledger: Ledger; database: TestDatabase | null }> {
  if (driver === 'pglite') return { ledger: await Ledger.open({ dataDir: 'memory://' }), database: null };
  const database = await createTestDatabase('tms_move_source');
  return { ledger: await Ledger.open({ databaseUrl: database.url }), database };
}

describe.each(DRIVERS)('MoveTarget from %s into Postgres', (driver) => {
  let source: Ledger;
  let sourceDatabase: TestDatabase | null;
  let target: TestDatabase;
  let copy: Ledger;

  beforeAll(async () => {
    ({ ledger: source, database: sourceDatabase } = await openFresh(driver));
    await source.migrate();
    target = await createTestDatabase('tms_move_target');
    copy = await Ledger.open({ databaseUrl: target.url });
    await copy.migrate(testMigrateOptions());

    const db = source.handle.db;
    await db.insert(schema.workspaces).values([
      { id: 'ws_a', name: AWKWARD, createdAt: 1764000000.1234567, createdBy: 'act_1' },
      { id: "ws_b'quoted", name: '', createdAt: 5e-324, createdBy: 'act_1' },
    ]);
    await db.insert(schema.workspaceHeads).values([
      { workspaceId: 'ws_a', sequence: 2, recordedAt: 1764000000.1 },
      { workspaceId: "ws_b'quoted", sequence: 1, recordedAt: Number.MAX_VALUE },
    ]);
    await db.insert(schema.commits).values([
      {
        workspaceId: 'ws_a',
        sequence: 1,
        recordedAt: 0.1 + 0.2,
        operation: 'workspaces.create',
        actorId: 'act_1',
        subjectIds: ['a,b', 'c"d', 'e\\f', '{g}', 'NULL', '', AWKWARD_TEXT],
        chainHash: 'f'.repeat(64),
      },
      {
        workspaceId: 'ws_a',
        sequence: 2,
        recordedAt: -0,
        operation: 'x',
        actorId: 'act_1',
        subjectIds: [],
        chainHash: null,
      },
      {
        workspaceId: "ws_b'quoted",
        sequence: 1,
        recordedAt: 2 ** 53 + 2,
        operation: 'x',
        actorId: 'act_1',
        subjectIds: ['z'],
        chainHash: '0'.repeat(64),
      },
    ]);
    await db.insert(schema.namespaces).values({
      workspaceId: 'ws_a',
      id: 'ns_1',
      parentId: null,
      name: AWKWARD,
      ancestorIds: [],
      pathKey: encodePathKey([AWKWARD, '\u0000\u00ff']),
      createdAt: 1,
      updatedAt: 2,
    });
    await db.insert(schema.evidence).values(evidenceRow('ws_a', 'ev_1', { excerpt: AWKWARD, purgedAt: null }));
    await db.insert(schema.revisions).values(
      revisionRow('ws_a', 'rev_1', {
        text: AWKWARD,
        validFrom: -1e-300,
        validTo: 1e300,
        evidenceIds: ['ev_1'],
        attestationEvidenceIds: null,
      }),
    );
    await db.insert(schema.idempotencyRecords).values({
      workspaceId: 'ws_a',
      principal: 'act_1',
      key: AWKWARD_TEXT,
      operation: 'memories.create',
      fingerprint: 'f',
      status: 200,
      body: JSON.stringify({ text: AWKWARD }),
      subjectIds: ['rev_1'],
      createdAt: 3,
    });
    await db.insert(schema.serviceSettings).values({ key: 'cursor_hmac_key', value: 'the source key' });
    await db
      .insert(schema.indexState)
      .values({ workspaceId: 'ws_a', provider: 'postgres', indexedSequence: 2, updatedAt: 1 });
    // What a gateway started on the target before the move would have made.
    await copy.handle.db.insert(schema.serviceSettings).values([
      { key: 'cursor_hmac_key', value: 'the target key' },
      { key: 'ledger_signing_key', value: 'made on the target' },
    ]);
  });

  afterAll(async () => {
    await copy?.close();
    await source?.close();
    await target?.drop();
    await sourceDatabase?.drop();
  });

  it('carries every table byte for byte, leaves the search cursors and replaces the service settings', async () => {
    const move = await MoveTarget.connect(target.url);
    const seen: [number, number][] = [];
    try {
      const { tables, workspaces } = await move.copyFrom(source, (copied, total) => seen.push([copied, total]));
      expect(workspaces).toEqual(['ws_a', "ws_b'quoted"]);
      expect(tables.find((t) => t.table === 'commits')?.rows).toBe(3);
      expect(tables.map((t) => t.table)).not.toContain('index_state');
      const total = tables.reduce((n, t) => n + t.rows, 0);
      expect(seen[0]).toEqual([0, total]);
      expect(seen.at(-1)).toEqual([total, total]);
    } finally {
      await move.close();
    }

    for (const table of movedTables()) {
      const select = `select ${table.columns.map((c) => `"${c}"`).join(', ')} from "${table.name}" order by ${table.key
        .map((c) => `"${c}"`)
        .join(', ')}`;
      const [before, after] = [await source.handle.copyOut(select), await copy.handle.copyOut(select)];
      expect(Buffer.from(after).toString('utf8'), table.name).toBe(Buffer.from(before).toString('utf8'));
    }
    // The rows read back through the schema hold the very values written.
    const [workspace] = await copy.handle.db.select().from(schema.workspaces).limit(1);
    expect(workspace).toEqual({ id: 'ws_a', name: AWKWARD, createdAt: 1764000000.1234567, createdBy: 'act_1' });
    expect(await copy.handle.db.select().from(schema.serviceSettings)).toEqual([
      { key: 'cursor_hmac_key', value: 'the source key' },
    ]);
    expect(LEFT_BEHIND_BY_MOVE).toEqual(['index_state']);
    expect(await copy.handle.db.select().from(schema.indexState)).toEqual([]);
  });

  it('refuses a target that holds a ledger, inside the transaction too, and changes nothing', async () => {
    const move = await MoveTarget.connect(target.url);
    try {
      const occupied = await move.occupied();
      expect(occupied).toContainEqual({ table: 'workspaces', rows: 2 });
      expect(occupied.map((t) => t.table)).not.toContain('service_settings');
      const refused = await move.copyFrom(source).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(TargetHoldsLedgerError);
      expect((refused as Error).message).toMatch(
        /^the target already holds a ledger \(rows in \d+ tables: commits 3, evidence 1, idempotency_records 1, \d+ more\): move into an empty database$/,
      );
    } finally {
      await move.close();
    }
    expect((await copy.handle.db.select().from(schema.commits)).length).toBe(3);
  });
});
