import { planExport } from '@tms/domain';
import {
  type ChainVerdict,
  type CommitDigestInput,
  chainOlderLedgers,
  GENESIS_CHAIN_HASH,
  type Ledger,
  schema,
  verifyExportLines,
  verifyWorkspaceChain,
} from '@tms/ledger';
import { type ApiClient, type CallResult, sha256Hex } from '@tms/testkit';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIVERS, type Harness, startHarness } from './harness';

const rowsOf = <T>(result: unknown) => (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];

function verify(
  ledger: Ledger,
  workspaceId: string,
  from?: number,
  recorded?: (sequence: number) => CommitDigestInput | undefined,
): Promise<ChainVerdict> {
  return ledger.snapshot((stores) => verifyWorkspaceChain(stores, workspaceId, { from, batchSize: 4, recorded }));
}

/** Every line of a whole workspace's export (`svc export`), through JSON as a file holds them. */
async function exportOf(ledger: Ledger, workspaceId: string): Promise<Record<string, unknown>[]> {
  const lines = await ledger.snapshot(async (stores) => {
    const plan = await planExport(stores, workspaceId, null);
    const all: Record<string, unknown>[] = [];
    for (let after = 0; ; ) {
      const page = await plan.page(after, 4);
      if (page.lastSequence === null) return all;
      all.push(...page.lines);
      after = page.lastSequence;
    }
  });
  return lines.map((line) => JSON.parse(JSON.stringify(line)) as Record<string, unknown>);
}

/** A workspace with every kind of write: namespace, evidence, verification, memories (some grouped), a correction. */
async function populated(h: Harness) {
  const { id: ws, api } = await h.workspace();
  const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'facts' })).body.namespace;
  const excerpt = 'the sky is blue';
  const evidence = (
    await api.post('/v1/evidence', {
      namespace_id: ns.id,
      source_locator: 'doc://sky',
      content_root_sha256: sha256Hex(excerpt),
      excerpt,
    })
  ).body;
  const verification = (
    await api.post(`/v1/evidence/${evidence.evidence.id}/verifications`, {
      expected_content_root_sha256: sha256Hex(excerpt),
      expected_excerpt_sha256: sha256Hex(excerpt),
      verdict: 'verified',
    })
  ).body;
  // In parallel: on Postgres these are group-committed, chained in one batch.
  const created = await Promise.all(Array.from({ length: 6 }, (_, i) => createMemory(api, ns.id, `fact number ${i}`)));
  const first = created[0] as { memory: { id: string }; revision: { id: string }; commit: { sequence: number } };
  const corrected = (
    await api.post(`/v1/memories/${first.memory.id}/corrections`, { expected_generation: 1, text: 'fact, corrected' })
  ).body;
  return { ws, api, ns, evidence, verification, created, corrected };
}

async function createMemory(api: ApiClient, namespaceId: string, text: string) {
  const res = await api.post('/v1/memories', { namespace_id: namespaceId, kind: 'claim', text, valid_from: 0 });
  if (res.status !== 200) throw new Error(res.text);
  return res.body;
}

describe.each(DRIVERS)('ledger hash chain (%s)', (driver) => {
  let h: Harness;
  let ledger: Ledger;
  beforeAll(async () => {
    h = await startHarness({ driver });
    ledger = h.gateway.ledger;
  });
  afterAll(() => h?.close());

  const exec = (statement: ReturnType<typeof sql>) => ledger.handle.db.execute(statement);

  /** Apply a change by SQL, check what verify names, undo it, and check the chain is whole again. */
  async function tampered(
    ws: string,
    change: ReturnType<typeof sql>,
    undo: ReturnType<typeof sql>,
    recorded?: (sequence: number) => CommitDigestInput | undefined,
  ) {
    await exec(change);
    const verdict = await verify(ledger, ws, undefined, recorded);
    await exec(undo);
    expect((await verify(ledger, ws)).intact).toBe(true);
    return verdict;
  }

  it('every commit is chained as it is written; verify reaches the head and its chain hash', async () => {
    const { ws } = await populated(h);
    const head = await ledger.stores.chain.head(ws);
    expect(head?.sequence).toBe(11);
    const verdict = await verify(ledger, ws);
    expect(verdict).toEqual({ intact: true, sequence: 11, chainHash: head?.chainHash });
    expect(verdict.intact && verdict.chainHash).not.toBe(GENESIS_CHAIN_HASH);
    // From the middle, taking the stored hash before it as given.
    expect(await verify(ledger, ws, 7)).toEqual(verdict);
    const commits = await ledger.stores.chain.commits(ws, 1, 11, 100);
    expect(commits.every((c) => /^[0-9a-f]{64}$/.test(c.chainHash ?? ''))).toBe(true);
  });

  it('writes of every other kind are chained from the rows they inserted, and the stored rows give the same hashes', async () => {
    const { ws, api, ns } = await populated(h);
    const ok = async (res: Promise<CallResult>) => {
      const done = await res;
      expect(done.status, done.text).toBe(200);
      return done.body as Record<string, { id: string }>;
    };
    // After the 11 commits of `populated`: 9 more, each alone (none of them is group-committed).
    const installation = (await ok(api.post('/v1/installations', { name: 'crm' }))).installation as { id: string };
    const credentials = [
      { kind: 'installation', product_installation_id: installation.id, name: 'reader', capabilities: ['read'] },
      { kind: 'service_key', name: 'ops', capabilities: ['read'], namespace_ids: [ns.id], expires_at: 4102444800 },
    ];
    for (const body of credentials) {
      const credential = (await ok(api.post('/v1/credentials', body))).credential as { id: string };
      await ok(api.post(`/v1/credentials/${credential.id}/revoke`, {}));
    }
    const hook = (await ok(api.post('/v1/webhooks', { url: 'https://hooks.example.com/chain', namespace_id: ns.id })))
      .webhook as { id: string };
    await ok(api.delete(`/v1/webhooks/${hook.id}`));
    await ok(api.post(`/v1/installations/${installation.id}/revoke`, {}));
    await ok(api.post('/v1/namespaces', { parent_id: ns.id, name: 'child' }));
    const head = await ledger.stores.chain.head(ws);
    expect(head?.sequence).toBe(20);
    expect(await verify(ledger, ws)).toEqual({ intact: true, sequence: 20, chainHash: head?.chainHash });
  });

  it('one byte of a revision text, an excerpt, a verdict or a recorded_at names exactly the commit that wrote it', async () => {
    const { ws, evidence, verification, created } = await populated(h);
    const revision = (created[3] as { revision: { id: string; recorded_at: number }; commit: { sequence: number } })
      .revision;
    const revisionSequence = (created[3] as { commit: { sequence: number } }).commit.sequence;
    const revisionText = sql`workspace_id = ${ws} and id = ${revision.id}`;
    const flipText = sql`update revisions set text = set_byte(text, 0, get_byte(text, 0) # 1) where ${revisionText}`;
    // The rows alone cannot tell a text's old hash: the records the commit names are listed.
    const textChanged = await tampered(ws, flipText, flipText);
    expect(textChanged).toMatchObject({ intact: false, sequence: revisionSequence, changed: [] });
    expect(textChanged.intact === false && textChanged.reason).toContain(`revision ${revision.id}`);
    // An export taken before names the field, with the hash the chain recorded.
    const exported = new Map(
      (await exportOf(ledger, ws))
        .filter((line) => line.type === 'commit')
        .map((line) => [line.sequence as number, line.digest_input as CommitDigestInput]),
    );
    expect(await tampered(ws, flipText, flipText, (sequence) => exported.get(sequence))).toMatchObject({
      intact: false,
      sequence: revisionSequence,
      changed: [{ kind: 'revision', id: revision.id, field: 'text_sha256', recorded: sha256Hex('fact number 3') }],
    });
    // An export that does not chain to the stored hash is no witness: the rows alone speak.
    const forged = (sequence: number) => {
      const input = exported.get(sequence);
      return input && { ...input, actor_id: 'act_forged' };
    };
    expect(await tampered(ws, flipText, flipText, forged)).toMatchObject({ changed: [] });

    const evidenceRow = sql`workspace_id = ${ws} and id = ${evidence.evidence.id}`;
    expect(
      await tampered(
        ws,
        sql`update evidence set excerpt = set_byte(excerpt, 4, get_byte(excerpt, 4) # 1) where ${evidenceRow}`,
        sql`update evidence set excerpt = set_byte(excerpt, 4, get_byte(excerpt, 4) # 1) where ${evidenceRow}`,
      ),
    ).toMatchObject({
      intact: false,
      sequence: evidence.commit.sequence,
      changed: [{ kind: 'evidence', id: evidence.evidence.id, field: 'excerpt' }],
    });

    const verificationRow = sql`workspace_id = ${ws} and id = ${verification.verification.id}`;
    expect(
      await tampered(
        ws,
        sql`update verifications set verdict = 'rejected' where ${verificationRow}`,
        sql`update verifications set verdict = 'verified' where ${verificationRow}`,
      ),
    ).toMatchObject({
      intact: false,
      sequence: verification.commit.sequence,
      reason: `commit ${verification.commit.sequence} no longer matches its chain hash: verification ${verification.verification.id}: verdict is "rejected", the chain recorded "verified"`,
      changed: [
        {
          kind: 'verification',
          id: verification.verification.id,
          field: 'verdict',
          recorded: 'verified',
          found: 'rejected',
        },
      ],
    });

    expect(
      await tampered(
        ws,
        sql`update revisions set recorded_at = recorded_at + 0.5 where ${revisionText}`,
        sql`update revisions set recorded_at = recorded_at - 0.5 where ${revisionText}`,
      ),
    ).toMatchObject({
      intact: false,
      sequence: revisionSequence,
      changed: [{ kind: 'revision', id: revision.id, field: 'recorded_at', recorded: revision.recorded_at }],
    });

    const commitRow = sql`workspace_id = ${ws} and sequence = 5`;
    expect(
      await tampered(
        ws,
        sql`update commits set recorded_at = recorded_at + 1 where ${commitRow}`,
        sql`update commits set recorded_at = recorded_at - 1 where ${commitRow}`,
      ),
    ).toMatchObject({ intact: false, sequence: 5, changed: [{ kind: 'commit', id: '5', field: 'recorded_at' }] });
  });

  it("a revision's record end moved, cleared or made up by SQL is named by the commit that ended it (or should have)", async () => {
    const { ws, api, created, corrected } = await populated(h);
    const retracted = created[4] as { memory: { id: string }; revision: { id: string }; commit: { sequence: number } };
    const retraction = await api.post(`/v1/memories/${retracted.memory.id}/forget`, {
      mode: 'retract',
      expected_generation: 1,
    });
    expect(retraction.status, retraction.text).toBe(200);
    expect((await verify(ledger, ws)).intact).toBe(true);
    const revision = (id: string) => sql`workspace_id = ${ws} and id = ${id}`;

    // Generation 1 of the corrected memory ends when generation 2 was recorded.
    const superseded = (created[0] as { revision: { id: string } }).revision.id;
    expect(
      await tampered(
        ws,
        sql`update revisions set recorded_until = recorded_until + 60 where ${revision(superseded)}`,
        sql`update revisions set recorded_until = recorded_until - 60 where ${revision(superseded)}`,
      ),
    ).toMatchObject({ intact: false, sequence: corrected.commit.sequence });
    const [{ until } = { until: 0 }] = rowsOf<{ until: number }>(
      await exec(sql`select recorded_until as until from revisions where ${revision(superseded)}`),
    );
    expect(
      await tampered(
        ws,
        sql`update revisions set recorded_until = null where ${revision(superseded)}`,
        sql`update revisions set recorded_until = ${until} where ${revision(superseded)}`,
      ),
    ).toMatchObject({ intact: false, sequence: corrected.commit.sequence });

    // A retracted revision made current again: the retraction names it.
    const retractedUntil = retraction.body.revision.recorded_until as number;
    expect(
      await tampered(
        ws,
        sql`update revisions set recorded_until = null where ${revision(retracted.revision.id)}`,
        sql`update revisions set recorded_until = ${retractedUntil} where ${revision(retracted.revision.id)}`,
      ),
    ).toMatchObject({ intact: false, sequence: retraction.body.commit.sequence });

    // A current revision ended though nothing ended it: its own commit.
    const current = created[5] as { revision: { id: string }; commit: { sequence: number } };
    expect(
      await tampered(
        ws,
        sql`update revisions set recorded_until = recorded_at + 1 where ${revision(current.revision.id)}`,
        sql`update revisions set recorded_until = null where ${revision(current.revision.id)}`,
      ),
    ).toMatchObject({
      intact: false,
      sequence: current.commit.sequence,
      reason: expect.stringMatching(
        new RegExp(`^revision ${current.revision.id} has a recorded_until \\([0-9.]+\\) though no commit ended it$`),
      ),
      changed: [{ kind: 'revision', id: current.revision.id, field: 'recorded_until', recorded: null }],
    });
    // `--from` past the commit that should have ended it: not judged.
    await exec(sql`update revisions set recorded_until = recorded_until + 60 where ${revision(superseded)}`);
    expect(await verify(ledger, ws, corrected.commit.sequence + 1)).toMatchObject({ intact: true });
    expect(await verify(ledger, ws, corrected.commit.sequence)).toMatchObject({
      intact: false,
      sequence: corrected.commit.sequence,
    });
    await exec(sql`update revisions set recorded_until = recorded_until - 60 where ${revision(superseded)}`);
  });

  it('a deleted commit row is named by its sequence', async () => {
    const { ws } = await populated(h);
    const [row] = await ledger.handle.db
      .select()
      .from(schema.commits)
      .where(and(eq(schema.commits.workspaceId, ws), eq(schema.commits.sequence, 8)));
    await exec(sql`delete from commits where workspace_id = ${ws} and sequence = 8`);
    expect(await verify(ledger, ws)).toEqual({ intact: false, sequence: 8, reason: 'commit 8 is missing' });
    await ledger.handle.db.insert(schema.commits).values(row as typeof schema.commits.$inferInsert);
    expect((await verify(ledger, ws)).intact).toBe(true);
    // The last commit deleted: the head names it.
    await exec(sql`delete from commits where workspace_id = ${ws} and sequence = 11`);
    expect(await verify(ledger, ws)).toMatchObject({ intact: false, sequence: 11 });
  });

  it('purges leave the chain intact, and a rewritten receipt hash is named', async () => {
    const { ws, api, evidence, created } = await populated(h);
    const before = await verify(ledger, ws);
    const purged = created[2] as { memory: { id: string }; commit: { sequence: number } };
    const purge = await api.post(`/v1/memories/${purged.memory.id}/forget`, { mode: 'purge', expected_generation: 1 });
    expect(purge.status).toBe(200);
    expect((await api.post(`/v1/evidence/${evidence.evidence.id}/forget`, {})).status).toBe(200);
    const after = await verify(ledger, ws);
    expect(after).toMatchObject({ intact: true, sequence: 13 });
    // The chain up to the head before the purges is the same chain.
    expect((await ledger.stores.commits.chainHashAt(ws, 11)) === (before.intact && before.chainHash)).toBe(true);
    const text = rowsOf<{ text: unknown }>(
      await exec(sql`select text from revisions where workspace_id = ${ws} and memory_id = ${purged.memory.id}`),
    );
    expect(text.map((r) => r.text)).toEqual([null]);
    // The purged text's hash now lives in the receipt only: rewriting it breaks the revision's commit.
    await exec(
      sql`update deletion_receipts set erased_sha256 = array[${sha256Hex('other')}] where workspace_id = ${ws} and subject_id = ${purged.memory.id}`,
    );
    expect(await verify(ledger, ws)).toMatchObject({ intact: false, sequence: purged.commit.sequence });
  });

  it('an export carries the chain and verifies offline; an edited line is named', async () => {
    const { ws, created, verification } = await populated(h);
    const parsed = await exportOf(ledger, ws);
    const head = await ledger.stores.chain.head(ws);
    expect(verifyExportLines(parsed)).toEqual({ intact: true, sequence: 11, chainHash: head?.chainHash });
    expect(parsed.filter((l) => l.type === 'commit').map((l) => l.chain_hash)).toHaveLength(11);
    const target = (created[4] as { revision: { id: string }; commit: { sequence: number } }).revision.id;
    const edited = parsed.map((l) => (l.type === 'revision' && l.id === target ? { ...l, text: 'fact number 9' } : l));
    expect(verifyExportLines(edited)).toMatchObject({
      intact: false,
      sequence: (created[4] as { commit: { sequence: number } }).commit.sequence,
    });
    // An edited digest input is named by its record and field, as a changed row is.
    const verdictEdited = parsed.map((l) => {
      if (l.type !== 'commit' || l.sequence !== verification.commit.sequence) return l;
      const input = l.digest_input as CommitDigestInput;
      const records = input.records.map((r) => (r.kind === 'verification' ? { ...r, verdict: 'rejected' } : r));
      return { ...l, digest_input: { ...input, records } };
    });
    expect(verifyExportLines(verdictEdited)).toMatchObject({
      intact: false,
      sequence: verification.commit.sequence,
      changed: [{ kind: 'verification', field: 'verdict', recorded: 'verified', found: 'rejected' }],
    });
    const withoutCommit = parsed.filter((l) => !(l.type === 'commit' && l.sequence === 3));
    expect(verifyExportLines(withoutCommit)).toMatchObject({ intact: false, sequence: 3 });
  });

  it('svc migrate chains a ledger written before the chain, writes meanwhile included', async () => {
    const { ws, api, ns } = await populated(h);
    const original = await verify(ledger, ws);
    // As an older ledger: nothing chained.
    await exec(sql`update commits set chain_hash = null where workspace_id = ${ws}`);
    expect(await verify(ledger, ws)).toMatchObject({ intact: false, sequence: 1 });
    // A write before the migration runs leaves its chain hash to the migration.
    await createMemory(api, ns.id, 'written before the migration');
    const seen: number[] = [];
    expect(await chainOlderLedgers(ledger, (p) => p.workspaceId === ws && seen.push(p.sequence), 5)).toBeGreaterThan(0);
    expect(seen).toEqual([5, 10, 12]);
    const chained = await verify(ledger, ws);
    expect(chained).toMatchObject({ intact: true, sequence: 12 });
    expect(await ledger.stores.commits.chainHashAt(ws, 11)).toBe(original.intact ? original.chainHash : null);
    // Later writes chain on.
    await createMemory(api, ns.id, 'written after the migration');
    expect(await verify(ledger, ws)).toMatchObject({ intact: true, sequence: 13 });
  });
});
