import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Indexer, PostgresSearchProvider } from '@tms/search';
import { activeTracing } from '@tms/telemetry';
import { startGatewayProcess } from '@tms/testkit/processes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';

// OpenTelemetry traces of a real gateway, exported over OTLP/HTTP (JSON) to a receiver on
// loopback that decodes each export request as a collector would.

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
}
interface ExportRequest {
  resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

const attribute = (attributes: OtlpAttribute[] | undefined, key: string) => {
  const value = attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? value?.boolValue : Number(value.intValue));
};

/** A plain OTLP/HTTP receiver: every span of every export, with its resource's service name. */
async function startReceiver() {
  const spans: (OtlpSpan & { service: unknown })[] = [];
  const contentTypes: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      contentTypes.push(String(req.headers['content-type']));
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
      for (const resource of body.resourceSpans) {
        const service = attribute(resource.resource.attributes, 'service.name');
        for (const scope of resource.scopeSpans) for (const span of scope.spans) spans.push({ ...span, service });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    contentTypes,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
const budget = { max_items: 5, max_context_chars: 1000 };

describe('traces over OTLP/HTTP', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let h: Harness;

  beforeAll(async () => {
    receiver = await startReceiver();
    h = await startHarness({ driver: 'postgres', env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url } });
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  /** The spans of one trace, once the gateway has exported what it holds. */
  const traceOf = async (traceId: string) => {
    await activeTracing().flush();
    return receiver.spans.filter((span) => span.traceId === traceId);
  };

  it('is on with the endpoint set, exporting to <endpoint>/v1/traces', () => {
    expect(activeTracing().enabled).toBe(true);
    expect(activeTracing().exportUrl).toBe(`${receiver.url}/v1/traces`);
  });

  it('continues an incoming traceparent: a server span with Postgres statement children, and a log line with its trace id', async () => {
    const { api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'traced' })).body.namespace;
    const marker = `needle-${hex(4)}`;
    const traceId = hex(16);
    const callerSpanId = hex(8);
    h.logs.length = 0;
    const res = await api.post(
      '/v1/memories',
      { namespace_id: ns.id, kind: 'claim', text: marker, valid_from: 0 },
      { headers: { traceparent: `00-${traceId}-${callerSpanId}-01` } },
    );
    expect(res.status, res.text).toBe(200);
    const requestId = res.headers.get('x-request-id');

    const spans = await traceOf(traceId);
    const server = spans.find((span) => span.kind === 2);
    expect(server, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
    if (!server) return;
    expect(server.parentSpanId).toBe(callerSpanId);
    expect(server.service).toBe('tms-gateway');
    expect(server.name).toBe('POST memories.create');
    expect(attribute(server.attributes, 'http.request.method')).toBe('POST');
    expect(attribute(server.attributes, 'http.response.status_code')).toBe(200);
    expect(attribute(server.attributes, 'tms.operation')).toBe('memories.create');
    expect(attribute(server.attributes, 'tms.error_code')).toBe('ok');
    expect(attribute(server.attributes, 'tms.request_id')).toBe(requestId);

    const statements = spans.filter((span) => attribute(span.attributes, 'db.system') === 'postgresql');
    expect(statements.length).toBeGreaterThanOrEqual(2);
    for (const statement of statements) {
      expect(statement.parentSpanId).toBe(server.spanId);
      expect(statement.kind).toBe(3);
      expect(String(attribute(statement.attributes, 'db.query.text'))).toMatch(
        /^\s*(select|insert|update|delete|with)\b/i,
      );
    }
    // The memory's text went in as a parameter: no statement span shows it.
    expect(statements.some((s) => /insert/i.test(String(attribute(s.attributes, 'db.query.text'))))).toBe(true);
    expect(JSON.stringify(statements)).not.toContain(marker);

    const line = h.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.request_id === requestId);
    expect(line).toMatchObject({ trace_id: traceId, span_id: server.spanId, service: 'tms-gateway' });
    expect(receiver.contentTypes.every((type) => type.startsWith('application/json'))).toBe(true);
  });

  it('starts a new trace without a traceparent, and a GraphQL operation span between request and statements', async () => {
    const { owner, api } = await h.workspace();
    h.logs.length = 0;
    const res = await fetch(`${h.url}/graphql`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await owner.token()}`,
        'x-service-workspace': api.workspace as string,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ query: 'query Recent { changes(first: 5) { __typename } }', operationName: 'Recent' }),
    });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    const line = h.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.request_id === requestId);
    expect(line?.trace_id).toMatch(/^[0-9a-f]{32}$/);

    const spans = await traceOf(line.trace_id);
    const server = spans.find((span) => span.kind === 2);
    expect(server?.parentSpanId ?? '').toBe('');
    expect(server?.name).toBe('POST graphql');
    const operation = spans.find((span) => span.name === 'graphql.query Recent');
    expect(operation?.parentSpanId).toBe(server?.spanId);
    expect(attribute(operation?.attributes, 'graphql.operation.type')).toBe('query');
    expect(attribute(operation?.attributes, 'graphql.operation.name')).toBe('Recent');
    const statements = spans.filter((span) => attribute(span.attributes, 'db.system') === 'postgresql');
    expect(statements.some((statement) => statement.parentSpanId === operation?.spanId)).toBe(true);
  });

  it('makes an index batch a span, with its statements as children', async () => {
    const { id: workspaceId, api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'indexed' })).body.namespace;
    await api.post('/v1/memories', { namespace_id: ns.id, kind: 'claim', text: 'indexed once', valid_from: 0 });
    const ledger = h.gateway.ledger;
    const indexer = new Indexer(ledger, new PostgresSearchProvider(ledger.handle.db));
    expect(await indexer.catchUp()).toBeGreaterThanOrEqual(3);
    await activeTracing().flush();
    const batch = receiver.spans.find(
      (span) =>
        span.name === 'index batch' &&
        attribute(span.attributes, 'tms.workspace_id') === workspaceId &&
        Number(attribute(span.attributes, 'tms.commits')) >= 3,
    );
    expect(batch?.parentSpanId ?? '').toBe('');
    const statements = receiver.spans.filter((span) => span.parentSpanId === batch?.spanId);
    expect(statements.length).toBeGreaterThanOrEqual(3);
    for (const statement of statements) expect(attribute(statement.attributes, 'db.system')).toBe('postgresql');
  });
});

describe('a gateway process', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let h: Harness;
  beforeAll(async () => {
    receiver = await startReceiver();
    h = await startHarness({ driver: 'postgres' });
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  it('reads the OTEL_ variables and sends its queued spans when it stops', async () => {
    const gateway = await startGatewayProcess('traced', {
      DATABASE_URL: h.database?.url as string,
      ...h.issuer.env(),
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'tms-gateway-traced',
    });
    const traceId = hex(16);
    try {
      const res = await fetch(`${gateway.url}/healthz`, { headers: { traceparent: `00-${traceId}-${hex(8)}-01` } });
      expect(res.status).toBe(200);
    } finally {
      // SIGTERM: the batch processor's queue (sent every 5 s otherwise) is flushed before exit.
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    }
    const spans = receiver.spans.filter((span) => span.traceId === traceId);
    expect(spans.map((span) => [span.name, span.service])).toEqual([['GET healthz', 'tms-gateway-traced']]);
    const line = gateway.logs.find((l) => l.msg === 'request' && l.operation === 'healthz');
    expect(line?.trace_id).toBe(traceId);
  });
});

describe('without OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
  });
  afterAll(() => h?.close());

  it('creates no exporter, and log lines carry no trace id', async () => {
    expect(activeTracing().enabled).toBe(false);
    expect(activeTracing().exportUrl).toBeNull();
    h.logs.length = 0;
    const res = await fetch(`${h.url}/healthz`, { headers: { traceparent: `00-${hex(16)}-${hex(8)}-01` } });
    expect(res.status).toBe(200);
    const line = h.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request');
    expect(line).toMatchObject({ operation: 'healthz', service: 'tms-gateway' });
    expect(line).not.toHaveProperty('trace_id');
  });

  it('counts recall outcomes on /metrics by status', async () => {
    const { api } = await h.workspace();
    const ns = (await api.post('/v1/namespaces', { parent_id: null, name: 'recalled' })).body.namespace;
    const created = await api.post('/v1/memories', { namespace_id: ns.id, kind: 'claim', text: 'x', valid_from: 0 });
    const sequence = created.body.commit.sequence as number;
    const count = async (status: string) => {
      const text = (await h.api.get('/metrics')).text as string;
      const sample = text.split('\n').find((l) => l.startsWith(`tms_recall_total{status="${status}"}`));
      return sample === undefined ? 0 : Number(sample.slice(sample.lastIndexOf(' ') + 1));
    };
    const before = { pending: await count('pending'), complete: await count('complete') };
    // No indexer runs here (INDEXER=external): a commit is not indexed yet, so asking for it is pending.
    const pending = await api.post('/v1/recall', {
      namespace_ids: [ns.id],
      query: 'x',
      budget,
      min_sequence: sequence,
    });
    expect(pending.body.status).toBe('pending');
    const complete = await api.post('/v1/recall', { namespace_ids: [ns.id], query: 'nothing-matches', budget });
    expect(complete.body.status).toBe('complete');
    expect(await count('pending')).toBe(before.pending + 1);
    expect(await count('complete')).toBe(before.complete + 1);
    expect((await h.api.get('/metrics')).text).toMatch(/^# TYPE tms_recall_total counter$/m);
  });
});
