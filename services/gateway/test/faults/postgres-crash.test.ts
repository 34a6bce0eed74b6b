import crypto from 'node:crypto';
import { TestIssuer } from '@tms/testkit';
import { connectSql, type PrivatePostgres } from '@tms/testkit/postgres-server';
import {
  delay,
  type GatewayProcess,
  type ServiceProcess,
  startGatewayProcess,
  startIndexerProcess,
} from '@tms/testkit/processes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTargets,
  FAULT_GATEWAY_ENV,
  indexEqualsLedger,
  prepareLedger,
  privateServer,
  send,
  type Target,
} from './workload';

// Postgres crashes (an immediate stop: no checkpoint, crash recovery at the next start). The
// lexical index's tables are unlogged on a Postgres server, so recovery leaves them empty while
// the cursors in the ledger still say how far they held. Recall must never answer `complete`
// from the emptied index: it reports the lexical arm unavailable until the indexer has rebuilt
// the tables and caught up again, then answers as before the crash.
const RECOVERY_TIMEOUT_MS = 90_000;
const MEMORIES = 30;

describe('Postgres crashes under an unlogged lexical index', () => {
  let issuer: TestIssuer;
  let server: PrivatePostgres;
  let gateway: GatewayProcess | undefined;
  let indexer: ServiceProcess | undefined;

  beforeAll(async () => {
    issuer = await TestIssuer.start();
    ({ server } = await privateServer());
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), indexer?.stop()]);
    await issuer?.close();
    await server?.destroy();
  });

  const recall = (target: Target) =>
    send(gateway?.url ?? '', 'POST', '/v1/recall', {
      ...target,
      body: { namespace_ids: [target.namespaceId], query: 'kingfisher', mode: 'lexical', budget: { max_items: 50 } },
    });
  const ids = (answer: { body: { items?: { memory: { id: string } }[] } }) =>
    (answer.body?.items ?? []).map((i) => i.memory.id).sort();

  it('reports the lexical arm unavailable until the indexer has rebuilt the emptied tables', async () => {
    const databaseUrl = server.url('tms');
    const subject = await prepareLedger(databaseUrl, issuer);
    gateway = await startGatewayProcess('crash', { DATABASE_URL: databaseUrl, ...issuer.env(), ...FAULT_GATEWAY_ENV });
    indexer = await startIndexerProcess('crash', { DATABASE_URL: databaseUrl });
    const token = await issuer.sessionToken(subject, { expiresIn: 3600 });
    const [target] = (await createTargets(gateway.url, token, 1)) as [Target];
    for (let i = 0; i < MEMORIES; i += 1) {
      const created = await send(gateway.url, 'POST', '/v1/memories', {
        ...target,
        key: crypto.randomUUID(),
        body: {
          namespace_id: target.namespaceId,
          kind: 'episode',
          text: `kingfisher seen at the weir, note ${i}`,
          valid_from: 1700000000,
        },
      });
      expect(created.status, created.text).toBe(200);
    }
    expect(await indexEqualsLedger(databaseUrl, [target.workspaceId])).toEqual([]);
    const before = await recall(target);
    expect(before.body.status, before.text).toBe('complete');
    expect(ids(before)).toHaveLength(MEMORIES);

    // The lexical tables are unlogged here, so the crash empties them (else this test proves nothing).
    const sql = connectSql(databaseUrl, 1);
    try {
      const persistence = await sql<{ relname: string; relpersistence: string }[]>`
        select relname, relpersistence from pg_class
         where relnamespace = 'search'::regnamespace and relname in ('documents', 'term_stats', 'namespace_stats', 'lexical_sentinel')
         order by relname`;
      expect(persistence.map((r) => `${r.relname}:${r.relpersistence}`)).toEqual([
        'documents:u',
        'lexical_sentinel:u',
        'namespace_stats:u',
        'term_stats:u',
      ]);
    } finally {
      await sql.end({ timeout: 1 });
    }

    await server.crash();
    await server.start();

    // No answer passes the emptied index off as one indexed up to the old head: until the
    // indexer has rebuilt the tables, the lexical arm is unavailable (recall `degraded`, from the
    // ledger), and once they are rebuilt `indexed_sequence` starts again from 0 and climbs.
    const head = before.body.indexed_sequence as number;
    const seen = new Set<string>();
    const deadline = Date.now() + RECOVERY_TIMEOUT_MS;
    let recovered = false;
    while (!recovered && Date.now() < deadline) {
      const answer = await recall(target);
      if (answer.status === 200) {
        const { status, indexed_sequence: indexed } = answer.body as { status: string; indexed_sequence: number };
        seen.add(indexed >= head ? status : `${status} below the head`);
        if (status === 'complete' && indexed >= head) {
          expect(ids(answer), 'a complete answer indexed up to the old head').toEqual(ids(before));
          recovered = true;
        } else if (status !== 'complete') expect(status).toBe('degraded');
      } else expect(answer.status, answer.text).toBe(503);
      if (!recovered) await delay(50);
    }
    expect(recovered, `recall did not recover; answers ${[...seen].join(', ')}`).toBe(true);
    expect(await indexEqualsLedger(databaseUrl, [target.workspaceId])).toEqual([]);
    expect(gateway.exit).toBeNull();
    expect(indexer.exit).toBeNull();
    console.info(`Postgres crash: recall answered ${[...seen].join(', ')} until the index was rebuilt`);
  });
});
