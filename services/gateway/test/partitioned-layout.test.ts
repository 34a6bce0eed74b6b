import crypto from 'node:crypto';
import { type ApiClient, type CallResult, sha256Hex } from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';
import {
  type Captured,
  distributedTablesIn,
  explainAll,
  type StatementVerdict,
  transactionsOf,
  workspaceIdsIn,
  writes,
} from './partition-check';

// A mixed workload through the public API on the partitioned layout (docs/scale-out.md): every
// statement is captured with its parameters and replayed under EXPLAIN. Each must touch at most
// one partition of each distributed table, and each write transaction one workspace; the only
// exceptions are the statements schema/distribution.json names (`crossWorkspaceStatements`).

/** The manifest's cross-workspace statements, as they show in captured SQL. */
const EXCEPTIONS: Array<{ name: string; matches: (text: string) => boolean }> = [
  { name: 'WebhookStorage.due', matches: (text) => /"webhooks"\."lease_until"/.test(text) && /inner join/i.test(text) },
  { name: 'WebhookStorage.lag', matches: (text) => /sum\(.*delivered_sequence/is.test(text) },
  {
    name: 'IndexStateStorage.lag',
    matches: (text) => /left join index_state s on s\.workspace_id = h\.workspace_id/.test(text),
  },
];

function exceptionOf(text: string): string | null {
  return EXCEPTIONS.find((exception) => exception.matches(text))?.name ?? null;
}

async function ok(promise: Promise<CallResult>) {
  const res = await promise;
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** One workspace's worth of the API: every kind of write and the reads after them. */
async function workload(h: Harness, api: ApiClient, workspaceId: string, ownerActorId: string): Promise<void> {
  const root = (await ok(api.post('/v1/namespaces', { parent_id: null, name: 'agent' }))).namespace;
  const child = (await ok(api.post('/v1/namespaces', { parent_id: root.id, name: 'notes' }))).namespace;
  await ok(api.patch(`/v1/namespaces/${child.id}`, { name: 'journal' }));
  const excerpt = `Ana moved to Porto (${crypto.randomBytes(4).toString('hex')}).`;
  const evidence = (
    await ok(
      api.post('/v1/evidence', {
        namespace_id: root.id,
        source_locator: 'doc://move',
        content_root_sha256: sha256Hex(excerpt),
        excerpt,
      }),
    )
  ).evidence;
  const verification = (
    await ok(
      api.post(`/v1/evidence/${evidence.id}/verifications`, {
        expected_content_root_sha256: evidence.content_root_sha256,
        expected_excerpt_sha256: evidence.excerpt_sha256,
        verdict: 'verified',
      }),
    )
  ).verification;
  const claim = await ok(
    api.post('/v1/memories', {
      namespace_id: root.id,
      kind: 'claim',
      text: 'Ana lives in Porto.',
      valid_from: 0,
      evidence_ids: [evidence.id],
    }),
  );
  await ok(
    api.post(`/v1/memories/${claim.memory.id}/attestations`, {
      expected_generation: 1,
      evidence_ids: [evidence.id],
      verification_ids: [verification.id],
    }),
  );
  const episode = await ok(
    api.post('/v1/memories', { namespace_id: child.id, kind: 'episode', text: 'Met Ana.', valid_from: 0, key: 'ep:1' }),
  );
  await ok(
    api.post(`/v1/memories/${episode.memory.id}/corrections`, { expected_generation: 1, text: 'Met Ana twice.' }),
  );
  const doomed = await ok(
    api.post('/v1/memories', {
      namespace_id: child.id,
      kind: 'procedure',
      text: 'Call Ana.',
      valid_from: 0,
      key: 'p:1',
    }),
  );
  // A held key (a conflict, through the rule), then freed by the retraction.
  const held = { namespace_id: child.id, kind: 'procedure', text: 'Call Ana again.', valid_from: 0, key: 'p:1' };
  expect((await api.post('/v1/memories', held)).status).toBe(409);
  await ok(api.post(`/v1/memories/${doomed.memory.id}/forget`, { mode: 'retract', expected_generation: 1 }));
  await ok(api.post('/v1/memories', held));
  await ok(
    api.get('/v1/memories', { query: { namespace_id: child.id, key: 'p:1', known_at: doomed.commit.recorded_at } }),
  );
  await ok(api.post(`/v1/memories/${episode.memory.id}/forget`, { mode: 'purge', expected_generation: 2 }));
  // An idempotent replay.
  const key = crypto.randomUUID();
  const body = { namespace_id: root.id, kind: 'claim', text: 'Ana likes tea.', valid_from: 0, key: 'tea' };
  await ok(api.post('/v1/memories', body, { idem: key }));
  await ok(api.post('/v1/memories', body, { idem: key }));

  await ok(api.get(`/v1/memories/${claim.memory.id}`, { query: { include_evidence: true } }));
  await ok(api.get(`/v1/memories/${claim.memory.id}/history`));
  await ok(api.get('/v1/memories', { query: { namespace_id: root.id } }));
  await ok(api.get(`/v1/evidence/${evidence.id}`));
  await ok(api.get('/v1/namespaces'));
  await ok(api.get(`/v1/namespaces/${root.id}`));
  await ok(api.get('/v1/changes', { query: { after: 0, limit: 100 } }));
  await ok(api.post('/v1/recall', { namespace_ids: [root.id], query: 'Ana', on_pending: 'report' }));

  // Members, grants, installations, credentials (used to authenticate), webhooks.
  const friend = await h.human();
  await ok(
    api.put(`/v1/workspaces/${workspaceId}/members`, {
      members: [
        { actor_id: ownerActorId, role: 'admin' },
        { actor_id: friend.actorId, role: 'member' },
      ],
    }),
  );
  await ok(
    api.put(`/v1/namespaces/${child.id}/grants`, {
      grants: [{ target: { kind: 'actor', actor_id: friend.actorId }, capabilities: ['read'], inherit: true }],
    }),
  );
  await ok(api.get(`/v1/namespaces/${child.id}/grants`));
  await ok((await friend.api(workspaceId)).get(`/v1/namespaces/${child.id}`));
  await ok((await friend.api()).get('/v1/workspaces'));
  const installation = (await ok(api.post('/v1/installations', { name: 'crm' }))).installation;
  const issued = await ok(
    api.post('/v1/credentials', {
      kind: 'installation',
      product_installation_id: installation.id,
      name: 'crm-prod',
      capabilities: ['read', 'observe'],
    }),
  );
  await ok(
    api.put(`/v1/namespaces/${root.id}/grants`, {
      grants: [
        {
          target: { kind: 'installation', product_installation_id: installation.id },
          capabilities: ['read', 'observe'],
          inherit: true,
        },
      ],
    }),
  );
  const product = api.as(issued.secret, null);
  await ok(product.get(`/v1/memories/${claim.memory.id}`));
  await ok(
    product.post('/v1/memories', { namespace_id: root.id, kind: 'claim', text: 'From the CRM.', valid_from: 0 }),
  );
  await ok(api.get('/v1/installations'));
  await ok(api.get('/v1/credentials'));
  await ok(api.post(`/v1/credentials/${issued.credential.id}/revoke`, {}));
  await ok(api.post(`/v1/installations/${installation.id}/revoke`, {}));
  const hook = (await ok(api.post('/v1/webhooks', { url: 'https://hooks.example.com/w1' }))).webhook;
  await ok(api.get('/v1/webhooks'));
  await ok(api.delete(`/v1/webhooks/${hook.id}`));
  await ok(api.post(`/v1/evidence/${evidence.id}/forget`, {}));
}

describe('the partitioned layout (postgres)', () => {
  let h: Harness;
  const captured: Captured[] = [];
  let capturing = false;
  let verdicts: StatementVerdict[] = [];

  beforeAll(async () => {
    h = await startHarness({
      driver: 'postgres',
      layout: 'partitioned',
      onStatement: (connection, text, params) => {
        if (capturing) captured.push({ connection, text, params: [...params] });
      },
    });
    capturing = true;
    // Several workspaces, so that they land on different partitions.
    for (let i = 0; i < 3; i += 1) {
      const { id, owner, api } = await h.workspace();
      await workload(h, api, id, owner.actorId);
      await ok((await owner.api()).get('/v1/workspaces'));
      await ok((await owner.api()).get('/v1/me'));
    }
    // A person's key reused in another workspace: the conflict is found without spreading, on
    // both write paths (alone and group-committed).
    const { api, owner } = await h.workspace();
    const second = (await ok((await owner.api()).post('/v1/workspaces', { name: 'second' }))).workspace;
    const elsewhere = api.in(second.id);
    const namespaceKey = `reuse-ns-${crypto.randomBytes(4).toString('hex')}`;
    const here = (await ok(api.post('/v1/namespaces', { parent_id: null, name: 'n' }, { idem: namespaceKey })))
      .namespace;
    const there = (await ok(elsewhere.post('/v1/namespaces', { parent_id: null, name: 'n' }))).namespace;
    expect(
      (await elsewhere.post('/v1/namespaces', { parent_id: null, name: 'n' }, { idem: namespaceKey })).status,
    ).toBe(409);
    const memoryKey = `reuse-memory-${crypto.randomBytes(4).toString('hex')}`;
    const memory = (id: string) => ({ namespace_id: id, kind: 'claim', text: 'Once.', valid_from: 0 });
    await ok(api.post('/v1/memories', memory(here.id), { idem: memoryKey }));
    expect((await elsewhere.post('/v1/memories', memory(there.id), { idem: memoryKey })).status).toBe(409);
    capturing = false;
    verdicts = await explainAll(h.database?.url as string, captured);
  }, 240_000);
  afterAll(() => h?.close());

  it('lays every distributed table out in 8 hash partitions', async () => {
    const tables = await h.database?.tableNames();
    expect(tables).toContain('revisions_p7');
    expect(tables).not.toContain('revisions_p8');
    expect(tables).not.toContain('actors_p0');
  });

  it('touches at most one partition of each distributed table per statement, but for the named exceptions', () => {
    expect(verdicts.length).toBeGreaterThan(100);
    const spread: string[] = [];
    const excepted = new Map<string, number>();
    let pinnedReads = 0;
    for (const verdict of verdicts) {
      const exception = exceptionOf(verdict.text);
      for (const [table, partitions] of verdict.partitions) {
        if (partitions.size === 1) pinnedReads += 1;
        // No partition in the plan: an INSERT ... VALUES, routed by its rows (checked below).
        if (partitions.size === 0 && !verdict.inserted.has(table)) {
          spread.push(`${table}: no partition and no rows: ${verdict.text.slice(0, 1500)}`);
        }
        if (partitions.size <= 1) continue;
        if (exception) {
          excepted.set(exception, (excepted.get(exception) ?? 0) + 1);
          continue;
        }
        spread.push(`${table}: ${partitions.size} partitions: ${verdict.text.slice(0, 1500)}`);
      }
      for (const [table, workspaces] of verdict.inserted) {
        if (workspaces.size !== 1) spread.push(`insert into ${table}: ${[...workspaces].join(', ')}`);
      }
    }
    expect(spread).toEqual([]);
    expect(pinnedReads).toBeGreaterThan(100);
    expect(verdicts.filter((v) => v.inserted.size > 0).length).toBeGreaterThan(10);
    // Every idempotency lookup names its workspace (one partition), a person's too: a key used
    // in another workspace is found in the key directory, a reference table.
    const lookups = verdicts.filter((v) => /i\.workspace_id = \$\d+ and i\.principal = /.test(v.text));
    expect(lookups.length).toBeGreaterThan(0);
    expect(lookups.filter((v) => v.partitions.get('idempotency_records')?.size !== 1)).toEqual([]);
    expect(lookups.filter((v) => /idempotency_key_directory k where k\.principal/.test(v.text)).length).toBeGreaterThan(
      0,
    );
    // No request statement spreads: the exceptions are the workers' and operator's own.
    expect([...excepted.keys()]).toEqual([]);
  });

  it('writes one workspace per write transaction', () => {
    const transactions = transactionsOf(captured).filter(writes);
    expect(transactions.length).toBeGreaterThan(60);
    const mixed = transactions
      .map((transaction) => ({
        workspaces: new Set(transaction.flatMap((statement) => [...workspaceIdsIn(statement.params)])),
        transaction,
      }))
      .filter(({ workspaces }) => workspaces.size > 1)
      .map(({ workspaces, transaction }) => `${[...workspaces].join(', ')}: ${transaction[0]?.text.slice(0, 200)}`);
    expect(mixed).toEqual([]);
    // The check sees workspaces at all: most write transactions name theirs.
    const named = transactions.filter((t) => t.some((statement) => workspaceIdsIn(statement.params).size === 1));
    expect(named.length).toBeGreaterThan(transactions.length / 2);
  });

  it('finds the distributed tables a statement names', () => {
    expect(distributedTablesIn('select * from "revisions" where "revisions"."workspace_id" = $1')).toEqual([
      'revisions',
    ]);
    expect(distributedTablesIn('select 1 from workspaces w join membership_directory d on true')).toEqual([]);
  });
});
