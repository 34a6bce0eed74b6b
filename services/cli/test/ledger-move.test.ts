import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ledger, verifyWorkspaceChain } from '@tms/ledger';
import {
  ApiClient,
  type CallResult,
  cliLines,
  createTestDatabase,
  runSvc,
  sha256Hex,
  type TestDatabase,
  testMigrateOptions,
} from '@tms/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../gateway/src/gateway';
import { type Harness, startHarness, startQuietGateway } from '../../gateway/test/harness';
import { parseEnv } from '../src/env';
import { displayUrl } from '../src/move-command';
import { runInProcess } from './in-process';

// `svc ledger move`: an embedded ledger written through a real gateway (two workspaces with
// members, grants, an installation credential, service keys, a webhook, corrections and purges)
// moves into a fresh Postgres database. A gateway over the target then answers every read as the
// embedded one did, byte for byte, replays an old Idempotency-Key, accepts the credentials issued
// before the move, and recalls from the index the move rebuilt.

const SLOW = { timeout: 300_000 };

function ok(res: CallResult, what: string): CallResult {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res;
}

describe('svc ledger move: messages', () => {
  it('never print the target password', () => {
    expect(displayUrl('postgres://tms:s3cret@db.example:5432/tms')).toBe('postgres://tms:***@db.example:5432/tms');
    expect(displayUrl('postgresql://db.example/tms')).toBe('postgresql://db.example/tms');
  });
});

describe('svc ledger move: the embedded ledger into Postgres', SLOW, () => {
  let h: Harness;
  let dataDir: string;
  let target: TestDatabase;
  let targetGateway: RunningGateway | null = null;
  const workspaces: { id: string; api: ApiClient }[] = [];
  /** Reads answered by the embedded gateway before the move: path and client, and the answer's text. */
  const reads: { api: ApiClient; path: string; text: string }[] = [];
  /** A write answered before the move, to retry with its Idempotency-Key. */
  let retried: { api: ApiClient; key: string; body: Record<string, unknown>; text: string };
  let secrets: { installation: string; serviceKey: string; revoked: string };
  let rootNamespace: string;
  let correctedMemory: string;

  const env = () => ({
    DATA_DIR: dataDir,
    EMBEDDER: 'none',
    SEARCH_PROVIDER: 'postgres',
    DATABASE_LAYOUT: testMigrateOptions().layout,
  });
  const inProcess = (argv: string[]) => runInProcess(argv, async () => parseEnv(env()));

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-move-'));
    target = await createTestDatabase('tms_move');
    h = await startHarness({ driver: 'pglite', env: { DATA_DIR: dataDir } });

    const first = await h.workspace();
    const api = first.api;
    const ns = async (parent_id: string | null, name: string) =>
      ok(await api.post('/v1/namespaces', { parent_id, name }), 'namespace').body.namespace.id as string;
    rootNamespace = await ns(null, 'team');
    const child = await ns(rootNamespace, 'notes');
    const colleague = await h.human({ enroll: false });
    ok(
      await api.put(`/v1/workspaces/${first.id}/members`, {
        members: [
          { actor_id: first.owner.actorId, role: 'admin' },
          { actor_id: colleague.actorId, role: 'member' },
        ],
      }),
      'members',
    );
    const installation = ok(await api.post('/v1/installations', { name: 'crm' }), 'installation').body.installation;
    const issue = async (body: Record<string, unknown>) => ok(await api.post('/v1/credentials', body), 'credential');
    const crm = (
      await issue({
        kind: 'installation',
        product_installation_id: installation.id,
        name: 'crm-prod',
        capabilities: ['read'],
      })
    ).body;
    const job = (await issue({ kind: 'service_key', name: 'nightly', capabilities: ['read'] })).body;
    const gone = (await issue({ kind: 'service_key', name: 'gone', capabilities: ['read'] })).body;
    ok(await api.post(`/v1/credentials/${gone.credential.id}/revoke`, {}), 'revoke');
    secrets = { installation: crm.secret, serviceKey: job.secret, revoked: gone.secret };
    ok(
      await api.put(`/v1/namespaces/${child}/grants`, {
        grants: [
          { target: { kind: 'actor', actor_id: colleague.actorId }, capabilities: ['read'], inherit: true },
          { target: { kind: 'credential', credential_id: job.credential.id }, capabilities: ['read'], inherit: true },
          {
            target: { kind: 'installation', product_installation_id: installation.id },
            capabilities: ['read'],
            inherit: true,
          },
        ],
      }),
      'grants',
    );
    ok(await api.post('/v1/webhooks', { url: 'https://hooks.example.com/moved', namespace_id: child }), 'webhook');

    const record = async (excerpt: string) =>
      ok(
        await api.post('/v1/evidence', {
          namespace_id: child,
          source_locator: 'doc://kitchen',
          content_root_sha256: sha256Hex(excerpt),
          excerpt,
        }),
        'evidence',
      ).body.evidence;
    const evidence = await record('The kettle is by the window.');
    const purgedEvidence = await record('The spare key is under the mat.');
    const remember = (text: string) =>
      api.post('/v1/memories', { namespace_id: child, kind: 'claim', text, valid_from: 0 });
    const body = {
      namespace_id: child,
      kind: 'claim',
      text: 'Ana prefers green tea.',
      valid_from: 0,
      evidence_ids: [evidence.id],
    };
    const kept = ok(await api.post('/v1/memories', body, { idem: 'move-test-kept' }), 'memory');
    retried = { api, key: 'move-test-kept', body, text: kept.text };
    const corrected = ok(await remember('Ana lives in Porto.'), 'memory').body;
    correctedMemory = corrected.memory.id;
    ok(
      await api.post(`/v1/memories/${correctedMemory}/corrections`, {
        expected_generation: 1,
        text: 'Ana lives in Lisbon.',
      }),
      'correction',
    );
    const purged = ok(await remember('A secret best forgotten.'), 'memory').body;
    ok(await api.post(`/v1/memories/${purged.memory.id}/forget`, { mode: 'purge', expected_generation: 1 }), 'purge');
    ok(await api.post(`/v1/evidence/${purgedEvidence.id}/forget`, {}), 'evidence purge');
    workspaces.push({ id: first.id, api });

    const second = await h.workspace();
    const other = ok(await second.api.post('/v1/namespaces', { parent_id: null, name: 'misc' }), 'namespace').body
      .namespace.id;
    ok(
      await second.api.post('/v1/memories', { namespace_id: other, kind: 'episode', text: 'Met Bo.', valid_from: 0 }),
      'memory',
    );
    workspaces.push({ id: second.id, api: second.api });

    const keep = async (client: ApiClient, readPath: string) =>
      reads.push({ api: client, path: readPath, text: ok(await client.get(readPath), readPath).text });
    await keep(h.api, '/.well-known/ledger-keys.json');
    for (const w of workspaces) {
      await keep(w.api, '/v1/ledger/head');
      await keep(w.api, '/v1/changes?after=0&limit=100');
      await keep(w.api, '/v1/namespaces');
      await keep(w.api, '/v1/credentials');
      await keep(w.api, '/v1/installations');
      await keep(w.api, '/v1/webhooks');
    }
    await keep(api, `/v1/namespaces/${child}/grants`);
    await keep(api, `/v1/memories/${correctedMemory}/history`);
    await keep(api, `/v1/evidence/${evidence.id}`);
    // A memory read as of a fixed time (by default it is now, which moves on).
    const at = Date.now() / 1000;
    const keptAt = `/v1/memories/${kept.body.memory.id}?as_of=${at}&known_at=${at}`;
    await keep(await colleague.api(first.id), keptAt);
    await keep(api.as(crm.secret, null), '/v1/me');
    await keep(api.as(job.secret, null), keptAt);
  }, 240_000);

  afterAll(async () => {
    await targetGateway?.close();
    await h?.close();
    await target?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('is refused, changing nothing, while the gateway holds the embedded ledger or the target cannot be reached', async () => {
    const held = await inProcess(['ledger', 'move', '--to', target.url]);
    expect(held.code).toBe(1);
    expect(held.stderr).toMatch(
      /^svc: the embedded ledger at \S+ is in use by pid \d+ \(gateway, started .*\): stop it, then move\n$/,
    );
    expect(await target.tableNames()).toEqual([]);

    const unreachable = await inProcess(['ledger', 'move', '--to', 'postgres://postgres@127.0.0.1:1/nowhere']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toBe('svc: cannot reach the target database: connect ECONNREFUSED 127.0.0.1:1\n');

    const wrong = await inProcess(['ledger', 'move', '--to', 'mysql://127.0.0.1/x']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("argument 'mysql://127.0.0.1/x' is invalid. takes a postgres:// URL");
  });

  it('moves every workspace with the same chain on both sides and rebuilds the index with progress', async () => {
    await h.gateway.close();
    const moved = await runSvc(['ledger', 'move', '--to', target.url], env(), 180_000);
    expect(moved.code, moved.stderr).toBe(0);

    // Each chain, recomputed from the rows of either side, ends at the same head.
    const source = await Ledger.open({ dataDir: path.join(dataDir, 'pglite') });
    const copy = await Ledger.open({ databaseUrl: target.url });
    try {
      for (const { id } of workspaces) {
        const before = await source.snapshot((stores) => verifyWorkspaceChain(stores, id));
        const after = await copy.snapshot((stores) => verifyWorkspaceChain(stores, id));
        expect(before.intact).toBe(true);
        expect(after).toEqual(before);
        if (!after.intact) throw new Error('unreachable');
        expect(moved.stdout).toContain(`  ${id}  head ${after.sequence}, chain_hash ${after.chainHash}\n`);
      }
    } finally {
      await source.close();
      await copy.close();
    }
    expect(moved.stdout).toMatch(/^moved 2 workspaces \(\d+ rows in 22 tables\) to /);
    expect(moved.stdout).toContain('rebuilt postgres index: 2 workspaces');
    const progress = cliLines(moved.stderr);
    expect(progress).toContain('rebuilding the search index on the target');
    expect(progress.some((line) => /^\[#{30}\] 100% (\d+)\/\1 rows$/.test(line))).toBe(true);
    expect(progress.some((line) => /^\[#{30}\] 100% (\d+)\/\1 commits$/.test(line))).toBe(true);
  });

  it('leaves a target a gateway serves as the embedded ledger did: reads, replays, credentials, recall', async () => {
    targetGateway = await startQuietGateway(target.url, h.issuer, { DATA_DIR: dataDir, EMBEDDER: 'none' });
    const on = (client: ApiClient) => new ApiClient(targetGateway?.url as string, client.token, client.workspace);

    // Every read answers the same bytes: signed heads (the signing key moved), changes, grants,
    // credentials, webhooks, corrected and purged histories, and callers of each kind.
    for (const read of reads) expect((await on(read.api).get(read.path)).text, read.path).toBe(read.text);

    const replay = await on(retried.api).post('/v1/memories', retried.body, { idem: retried.key });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(retried.text);
    const reused = await on(retried.api).post('/v1/memories', { ...retried.body, text: 'else' }, { idem: retried.key });
    expect(reused.status).toBe(409);

    expect((await on(retried.api).as(secrets.installation, null).get('/v1/me')).status).toBe(200);
    expect((await on(retried.api).as(secrets.serviceKey, null).get('/v1/me')).status).toBe(200);
    expect((await on(retried.api).as(secrets.revoked, null).get('/v1/me')).status).toBe(401);

    // The index the move rebuilt is complete: nothing indexes on this gateway (INDEXER=external).
    const api = on(workspaces[0]?.api as ApiClient);
    const head = JSON.parse(reads.find((r) => r.path === '/v1/ledger/head')?.text as string).head.sequence;
    const recall = (query: string) =>
      api.post('/v1/recall', { namespace_ids: [rootNamespace], query, min_sequence: head, mode: 'lexical' });
    const found = await recall('Lisbon');
    expect(found.body.status, found.text).toBe('complete');
    expect(found.body.items.map((i: { memory: { id: string } }) => i.memory.id)).toEqual([correctedMemory]);
    const forgotten = await recall('secret forgotten');
    expect(forgotten.body.status).toBe('complete');
    expect(forgotten.body.items).toEqual([]);

    // The chain goes on from the moved head.
    const next = await api.post('/v1/memories', { ...retried.body, text: 'Written after the move.', evidence_ids: [] });
    expect(next.status, next.text).toBe(200);
    expect(next.body.commit.sequence).toBe(head + 1);
  });

  it('refuses a second move into a target that now holds a ledger', async () => {
    const again = await inProcess(['ledger', 'move', '--to', target.url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^svc: the target already holds a ledger \(rows in \d+ tables: actors \d+, commits \d+, .*\): move into an empty database\n$/,
    );
  });
});
