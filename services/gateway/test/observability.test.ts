import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestDatabase, sha256Hex } from '@tms/testkit';
import { type ServiceProcess, startIndexerProcess } from '@tms/testkit/processes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';

// The operator's view of a running gateway: health, readiness, Prometheus metrics, and logs
// that carry request ids but none of the callers' secrets or content.

describe('health and readiness', () => {
  let migrated: Harness;
  let bare: Harness;

  beforeAll(async () => {
    [migrated, bare] = await Promise.all([
      startHarness({ driver: 'postgres' }),
      startHarness({ driver: 'postgres', migrate: false }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([migrated?.close(), bare?.close()]);
  });

  it('GET /healthz answers 200 whether or not the database is migrated', async () => {
    for (const h of [migrated, bare]) {
      const res = await h.api.get('/healthz');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    }
  });

  it('GET /readyz answers 200 on a migrated database', async () => {
    const res = await migrated.api.get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready' });
  });

  it('GET /readyz answers 503 on a database `svc migrate` never ran on, naming the fix', async () => {
    const res = await bare.api.get('/readyz');
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'not_ready', reason: 'migrations not applied: run svc migrate' });
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toMatch(/^req_/);
    // The request line's code matches the status, and carries the reason.
    const line = bare.logs.map((text) => JSON.parse(text)).find((entry) => entry.request_id === requestId);
    expect(line).toMatchObject({
      msg: 'request',
      operation: 'readyz',
      status: 503,
      code: 'unavailable',
      reason: 'migrations not applied: run svc migrate',
    });
  });
});

/** The JSON log lines of a harness gateway at warn level or above. */
const problems = (h: Harness) =>
  h.logs.map((text) => JSON.parse(text) as { level: number; msg: string }).filter((line) => line.level >= 40);

/** Poll `check` until it holds (bounded; no timing is asserted). */
async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('an unmigrated or unreachable database says so once', () => {
  const processes: ServiceProcess[] = [];
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
  });

  it('the embedded indexer and webhook deliveries log one error with the fix, wait, then start', async () => {
    const h = await startHarness({ driver: 'postgres', migrate: false, env: { INDEXER: 'embedded' } });
    try {
      const reason = 'migrations not applied: run svc migrate';
      await eventually(() => problems(h).length > 0, 'the first error line');
      // Several of the workers' poll intervals (500 ms) pass: still one line, not one per poll.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const lines = problems(h);
      expect(lines, JSON.stringify(lines)).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 50, reason, msg: expect.stringContaining(reason) });
      expect((await h.api.get('/readyz')).body).toEqual({ status: 'not_ready', reason });

      await h.gateway.ledger.migrate();
      await eventually(async () => (await h.api.get('/readyz')).status === 200, 'readiness after svc migrate');
      await eventually(
        () => h.logs.some((text) => JSON.parse(text).msg.startsWith('database ready')),
        'the workers to start',
      );
      expect(problems(h)).toHaveLength(1);
    } finally {
      await h.close();
    }
  });

  it('the indexer service waits the same way', async () => {
    const database = await createTestDatabase();
    try {
      const indexer = await startIndexerProcess('unmigrated-indexer', {
        DATABASE_URL: database.url,
        LOG_LEVEL: 'info',
      });
      processes.push(indexer);
      const errors = () => indexer.logs.filter((line) => (line.level as number) >= 40);
      await eventually(() => errors().length > 0, 'the indexer error line');
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(errors(), JSON.stringify(errors())).toHaveLength(1);
      expect(errors()[0]).toMatchObject({ level: 50, reason: 'migrations not applied: run svc migrate' });
      expect(await indexer.stop()).toEqual({ code: 0, signal: null });
    } finally {
      await database.drop();
    }
  });

  it('GET /readyz on an unreachable database answers 503 database unreachable', async () => {
    // A loopback port nothing listens on.
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const h = await startHarness({
      driver: 'pglite',
      env: { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/gone`, SEARCH_PROVIDER: 'none' },
    });
    try {
      const res = await h.api.get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ status: 'not_ready', reason: 'database unreachable' });
      expect((await h.api.get('/healthz')).status).toBe(200);
    } finally {
      await h.close();
    }
  });
});

describe('metrics and logs', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
  });
  afterAll(() => h?.close());

  it('GET /metrics exposes request counts and latency by operation and code', async () => {
    await h.api.get('/healthz');
    await h.api.get('/healthz');
    await h.api.get('/readyz');
    expect((await h.api.get('/v1/me')).status).toBe(401);
    const owner = await h.human();
    expect((await (await owner.api()).get('/v1/me')).status).toBe(200);

    const res = await h.api.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = res.text;
    expect(text).toMatch(/^# TYPE tms_requests_total counter$/m);
    expect(text).toMatch(/^# TYPE tms_request_duration_seconds histogram$/m);

    const sample = (name: string, operation: string, code: string) => {
      const line = text
        .split('\n')
        .find(
          (l) => l.startsWith(`${name}{`) && l.includes(`operation="${operation}"`) && l.includes(`code="${code}"`),
        );
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    expect(sample('tms_requests_total', 'healthz', 'ok')).toBeGreaterThanOrEqual(2);
    expect(sample('tms_requests_total', 'readyz', 'ok')).toBeGreaterThanOrEqual(1);
    // Every sample carries both labels, including failed calls.
    const labelled = text.split('\n').filter((l) => l.startsWith('tms_requests_total{'));
    expect(labelled.length).toBeGreaterThanOrEqual(3);
    for (const line of labelled)
      expect(line).toMatch(/operation="[^"]+".*code="[^"]+"|code="[^"]+".*operation="[^"]+"/);
    expect(labelled.some((l) => l.includes('code="unauthenticated"'))).toBe(true);
    expect(sample('tms_request_duration_seconds_count', 'healthz', 'ok')).toBeGreaterThanOrEqual(2);
    expect(
      text.split('\n').some((l) => l.startsWith('tms_request_duration_seconds_bucket{') && l.includes('le="+Inf"')),
    ).toBe(true);
  });

  it('logs request ids but never bearer tokens, evidence excerpts or memory text', async () => {
    const marker = `zq${Date.now().toString(36)}`;
    const excerpt = `Excerpt ${marker}: the lighthouse keeper logs every ship by lamplight.`;
    const memoryText = `Memory ${marker}: the keeper prefers the night watch.`;
    const { owner, api } = await h.workspace();
    const token = await owner.token();
    h.logs.length = 0;

    const ids: string[] = [];
    const track = <T extends { status: number; headers: Headers }>(res: T): T => {
      const id = res.headers.get('x-request-id');
      if (id) ids.push(id);
      return res;
    };

    const ns = track(await api.post('/v1/namespaces', { parent_id: null, name: 'logbook' }));
    expect(ns.status).toBe(200);
    const sha = sha256Hex(excerpt);
    const evidence = track(
      await api.post('/v1/evidence', {
        namespace_id: ns.body.namespace.id,
        source_locator: `chat://logbook/${marker}`,
        content_root_sha256: sha,
        excerpt,
      }),
    );
    expect(evidence.status, evidence.text).toBe(200);
    const evidenceId = evidence.body.evidence.id as string;
    const verified = track(
      await api.post(`/v1/evidence/${evidenceId}/verifications`, {
        expected_content_root_sha256: sha,
        expected_excerpt_sha256: sha,
        verdict: 'verified',
      }),
    );
    expect(verified.status, verified.text).toBe(200);
    const memory = track(
      await api.post('/v1/memories', {
        namespace_id: ns.body.namespace.id,
        kind: 'claim',
        text: memoryText,
        valid_from: 1_700_000_000,
        evidence_ids: [evidenceId],
      }),
    );
    expect(memory.status, memory.text).toBe(200);
    const read = track(await api.get(`/v1/memories/${memory.body.memory.id}`, { query: { include_evidence: true } }));
    expect(read.status).toBe(200);
    expect(read.text).toContain(memoryText);
    // Failures log too: a rejected body carrying the text, and a tampered token.
    const rejected = track(await api.post('/v1/memories', { namespace_id: 'nope', kind: 'claim', text: memoryText }));
    expect(rejected.status).toBe(400);
    const tampered = `${token.slice(0, -4)}AAAA`;
    const denied = track(await api.get('/v1/me', { token: tampered }));
    expect(denied.status).toBe(401);

    const logs = h.logs.join('');
    expect(ids).toHaveLength(7);
    for (const id of ids) expect(logs).toContain(id);
    for (const secret of [token, tampered, token.split('.')[2] ?? token, excerpt, memoryText, marker]) {
      expect(logs).not.toContain(secret);
    }
  });
});
