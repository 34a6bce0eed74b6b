import { createTestDatabase, type TestDatabase, testMigrateOptions } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Change, encodePathKey, Ledger, subjectTypeOf } from '../src/index';
import { evidenceRow, revisionRow, UNKEYED } from './rows';

type Driver = 'pglite' | 'postgres';
const DRIVERS: Driver[] = ['pglite', 'postgres'];

const WS = 'ws_feed';
const OTHER_WS = 'ws_other';

/**
 * A small ledger written straight through the storages: namespaces A, A/B and C, evidence and
 * its verification in B, a memory with a revision in C, a receipt in A, and workspace-level
 * writes (members, grants, an installation, a credential, a webhook).
 */
async function seed(ledger: Ledger): Promise<void> {
  const { stores } = ledger;
  let sequence = 0;
  const commit = async (workspaceId: string, operation: string, subjectIds: string[]) => {
    sequence += 1;
    await stores.commits.insert({
      workspaceId,
      sequence,
      recordedAt: 100 + sequence,
      operation,
      actorId: 'act_1',
      subjectIds,
    });
  };
  const namespace = async (id: string, ancestorIds: string[], path: string[]) => {
    await stores.namespaces.insert({
      workspaceId: WS,
      id,
      parentId: ancestorIds.at(-1) ?? null,
      name: path.at(-1) as string,
      ancestorIds,
      pathKey: encodePathKey(path),
      createdAt: 1,
      updatedAt: 1,
    });
  };
  await stores.commits.createHead(WS);
  await commit(WS, 'workspaces.create', [WS]); // 1
  await commit(WS, 'workspaces.members.put', [WS]); // 2
  await namespace('ns_a', [], ['A']);
  await commit(WS, 'namespaces.create', ['ns_a']); // 3
  await namespace('ns_b', ['ns_a'], ['A', 'B']);
  await commit(WS, 'namespaces.create', ['ns_b']); // 4
  await namespace('ns_c', [], ['C']);
  await commit(WS, 'namespaces.create', ['ns_c']); // 5
  await commit(WS, 'namespaces.grants.put', ['ns_a']); // 6
  await stores.evidence.insert(
    evidenceRow(WS, 'ev_1', {
      namespaceId: 'ns_b',
      sourceLocator: 'file://secret-locator',
      excerpt: 'secret excerpt',
      recordedAt: 7,
      commitSequence: 7,
    }),
  );
  await commit(WS, 'evidence.create', ['ev_1']); // 7
  await stores.evidence.insertVerification({
    workspaceId: WS,
    id: 'vf_1',
    evidenceId: 'ev_1',
    contentRootSha256: '0'.repeat(64),
    excerptSha256: '1'.repeat(64),
    verdict: 'verified',
    verifierActorId: 'act_1',
    recordedAt: 8,
  });
  await commit(WS, 'evidence.verify', ['vf_1']); // 8
  await stores.memories.insert(
    { workspaceId: WS, id: 'mem_1', namespaceId: 'ns_c', kind: 'claim', generation: 1, createdAt: 9, ...UNKEYED },
    revisionRow(WS, 'rev_1', {
      memoryId: 'mem_1',
      namespaceId: 'ns_c',
      text: 'secret text',
      recordedAt: 9,
      commitSequence: 9,
    }),
  );
  await commit(WS, 'memories.create', ['mem_1', 'rev_1']); // 9
  await stores.receipts.insert({
    workspaceId: WS,
    id: 'rcp_1',
    subjectKind: 'evidence',
    subjectId: 'ev_gone',
    namespaceId: 'ns_a',
    revisionIds: [],
    erasedSha256: [],
    erasedKeySha256: null,
    recorderActorId: 'act_1',
    recordedAt: 10,
    commitSequence: 10,
  });
  await commit(WS, 'evidence.forget', ['ev_gone', 'rcp_1']); // 10: the evidence row itself is absent
  await commit(WS, 'installations.create', ['ins_1']); // 11
  await commit(WS, 'credentials.create', ['cred_1']); // 12
  await commit(WS, 'webhooks.create', ['wh_1']); // 13
  await stores.commits.createHead(OTHER_WS);
  await commit(OTHER_WS, 'workspaces.create', [OTHER_WS]); // 14 in another workspace: never listed
  await stores.commits.allocateMany(WS, 13);
}

/** Each change as `sequence: type id@namespace ...` for compact comparison. */
function summary(changes: Change[]): string[] {
  return changes.map(
    (c) => `${c.sequence}:${c.subjects.map((s) => ` ${s.type} ${s.id}@${s.namespaceId ?? '-'}`).join('')}`,
  );
}

describe('subjectTypeOf', () => {
  it('types ids by prefix, and grant and member writes by their operation', () => {
    expect(subjectTypeOf('memories.create', 'mem_x')).toBe('memory');
    expect(subjectTypeOf('namespaces.update', 'ns_x')).toBe('namespace');
    expect(subjectTypeOf('namespaces.grants.put', 'ns_x')).toBe('grant');
    expect(subjectTypeOf('workspaces.members.put', 'ws_x')).toBe('member');
    expect(subjectTypeOf('workspaces.create', 'ws_x')).toBe('workspace');
    expect(subjectTypeOf('credentials.create', 'cred_x')).toBe('credential');
    expect(subjectTypeOf('x', 'att_x')).toBeNull();
  });
});

describe.each(DRIVERS)('ChangeStorage on %s', (driver) => {
  let ledger: Ledger;
  let database: TestDatabase | null = null;
  const statements: string[] = [];

  beforeAll(async () => {
    const onQuery = (text: string) => statements.push(text);
    if (driver === 'postgres') {
      database = await createTestDatabase();
      ledger = await Ledger.open({ databaseUrl: database.url, onQuery });
    } else {
      ledger = await Ledger.open({ dataDir: 'memory://', onQuery });
    }
    await ledger.migrate(testMigrateOptions());
    await seed(ledger);
  });

  afterAll(async () => {
    await ledger?.close();
    await database?.drop();
  });

  it('lists every change in sequence order with typed, placed subjects', async () => {
    const { changes, headSequence } = await ledger.stores.changes.listAfter(WS, { after: 0, limit: 100 });
    expect(headSequence).toBe(13);
    expect(summary(changes)).toEqual([
      `1: workspace ${WS}@-`,
      `2: member ${WS}@-`,
      '3: namespace ns_a@ns_a',
      '4: namespace ns_b@ns_b',
      '5: namespace ns_c@ns_c',
      '6: grant ns_a@-',
      '7: evidence ev_1@ns_b',
      '8: verification vf_1@ns_b',
      '9: memory mem_1@ns_c revision rev_1@ns_c',
      // The forgotten evidence row is gone, so only the receipt places the change.
      '10: receipt rcp_1@ns_a',
      '11: installation ins_1@-',
      '12: credential cred_1@-',
      '13: webhook wh_1@-',
    ]);
    const first = changes[0] as Change;
    expect(first).toEqual({
      sequence: 1,
      recordedAt: 101,
      operation: 'workspaces.create',
      actorId: 'act_1',
      subjects: [{ type: 'workspace', id: WS, namespaceId: null }],
    });
    expect(JSON.stringify(changes)).not.toMatch(/secret/);
  });

  it('pages by sequence: `limit` commits after `after`', async () => {
    const page = await ledger.stores.changes.listAfter(WS, { after: 4, limit: 3 });
    expect(page.changes.map((c) => c.sequence)).toEqual([5, 6, 7]);
    expect(page.headSequence).toBe(13);
    const end = await ledger.stores.changes.listAfter(WS, { after: 13, limit: 3 });
    expect(end).toEqual({ changes: [], headSequence: 13 });
  });

  it('a namespace filter keeps its subtree and returns the other changes without subjects', async () => {
    const { changes } = await ledger.stores.changes.listAfter(WS, { after: 0, limit: 100, namespaceId: 'ns_a' });
    expect(changes.map((c) => c.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(summary(changes.filter((c) => c.subjects.length > 0))).toEqual([
      '3: namespace ns_a@ns_a',
      '4: namespace ns_b@ns_b',
      '7: evidence ev_1@ns_b',
      '8: verification vf_1@ns_b',
      '10: receipt rcp_1@ns_a',
    ]);
    const only = await ledger.stores.changes.listAfter(WS, {
      after: 0,
      limit: 100,
      namespaceId: 'ns_a',
      includeDescendants: false,
    });
    expect(summary(only.changes.filter((c) => c.subjects.length > 0))).toEqual([
      '3: namespace ns_a@ns_a',
      '10: receipt rcp_1@ns_a',
    ]);
  });

  it('a visibility keeps reached namespaces; workspace-level subjects only on request', async () => {
    const direct = await ledger.stores.changes.listAfter(WS, {
      after: 0,
      limit: 100,
      visibility: { direct: ['ns_b', 'ns_c'], subtreeRoots: [] },
      workspaceSubjects: false,
    });
    expect(summary(direct.changes.filter((c) => c.subjects.length > 0))).toEqual([
      '4: namespace ns_b@ns_b',
      '5: namespace ns_c@ns_c',
      '7: evidence ev_1@ns_b',
      '8: verification vf_1@ns_b',
      '9: memory mem_1@ns_c revision rev_1@ns_c',
    ]);
    const subtree = await ledger.stores.changes.listAfter(WS, {
      after: 0,
      limit: 100,
      visibility: { direct: ['ns_a'], subtreeRoots: ['ns_a'] },
    });
    expect(summary(subtree.changes.filter((c) => c.subjects.length > 0))).toEqual([
      `1: workspace ${WS}@-`,
      `2: member ${WS}@-`,
      '3: namespace ns_a@ns_a',
      '4: namespace ns_b@ns_b',
      '6: grant ns_a@-',
      '7: evidence ev_1@ns_b',
      '8: verification vf_1@ns_b',
      '10: receipt rcp_1@ns_a',
      '11: installation ins_1@-',
      '12: credential cred_1@-',
      '13: webhook wh_1@-',
    ]);
  });

  it('an unknown workspace has head 0 and no changes', async () => {
    expect(await ledger.stores.changes.listAfter('ws_none', { after: 0, limit: 10 })).toEqual({
      changes: [],
      headSequence: 0,
    });
  });

  it('issues one statement per page, whatever the page holds', async () => {
    for (const limit of [1, 5, 100]) {
      statements.length = 0;
      await ledger.stores.changes.listAfter(WS, { after: 0, limit, namespaceId: 'ns_a' });
      expect(statements).toHaveLength(1);
    }
  });
});
