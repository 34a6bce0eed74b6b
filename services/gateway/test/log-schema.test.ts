import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseStrictJson } from '@tms/domain';
import { delay, type ServiceProcess, startGatewayProcess, startIndexerProcess } from '@tms/testkit/processes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** `svc mcp` until it says it is ready: the JSON lines of its stderr (its stdout is MCP's). */
async function svcMcpLines(env: Record<string, string>): Promise<Record<string, unknown>[]> {
  const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['services/cli/src/main.ts', 'mcp'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let buffer = '';
  child.stderr.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      lines.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const deadline = Date.now() + 60_000;
    while (!lines.some((line) => line.msg === 'mcp stdio server ready')) {
      if (child.exitCode !== null) throw new Error(`svc mcp exited: ${JSON.stringify(lines)}`);
      if (Date.now() > deadline) throw new Error('svc mcp did not start in time');
      await delay(50);
    }
  } finally {
    // End of input ends the stdio server.
    child.stdin.end();
    await exited;
  }
  return lines;
}

describe('one log schema for the gateway, the indexer and svc mcp', () => {
  let h: Harness;
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
  });
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await h?.close();
  });

  it('names time, level, msg and service alike: numeric levels, ISO times', async () => {
    const database = h.database?.url as string;
    const gateway = await startGatewayProcess('schema-gateway', { DATABASE_URL: database, ...h.issuer.env() });
    processes.push(gateway);
    const indexer = await startIndexerProcess('schema-indexer', { DATABASE_URL: database, LOG_LEVEL: 'info' });
    processes.push(indexer);
    const { owner } = await h.workspace();
    const mcp = await svcMcpLines({ DATABASE_URL: database, ...h.issuer.env(), TMS_TOKEN: await owner.token() });

    const samples = {
      'tms-gateway': gateway.logs.find((line) => line.msg === 'gateway listening'),
      'tms-indexer': indexer.logs.find((line) => line.msg === 'indexer started'),
      'tms-mcp': mcp.find((line) => line.msg === 'mcp stdio server ready'),
    };
    // Each key once per line (a repeated key, such as a second `pid`, is not JSON a strict reader accepts).
    const listening = gateway.output.filter((text) => text.includes('"msg":"gateway listening"'));
    expect(listening).toHaveLength(1);
    expect(() => parseStrictJson(listening[0] as string), listening[0]).not.toThrow();
    expect(samples['tms-gateway']).toMatchObject({ host: '127.0.0.1', port: gateway.port });
    for (const text of [...gateway.output, ...indexer.output].filter((t) => t.startsWith('{')))
      expect(() => parseStrictJson(text), text).not.toThrow();
    for (const [service, line] of Object.entries(samples)) {
      expect(line, service).toMatchObject({ service, level: 30, pid: expect.any(Number) });
      expect(Date.parse(String(line?.time)), service).toBeGreaterThan(Date.parse('2020-01-01T00:00:00Z'));
      expect(String(line?.time)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // No second spelling of the same thing (`message`, `timestamp`, a level name).
      for (const other of ['message', 'timestamp', 'hostname', 'severity'])
        expect(line, service).not.toHaveProperty(other);
    }
  });
});

describe("the gateway's buffered request lines", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ driver: 'postgres' });
  });
  afterAll(async () => {
    await h?.close();
  });

  const requestLines = (gateway: ServiceProcess, ids: readonly string[]) =>
    gateway.logs.filter((line) => line.msg === 'request' && ids.includes(line.request_id as string));

  async function healthz(url: string): Promise<string> {
    const res = await fetch(`${url}/healthz`);
    await res.arrayBuffer();
    return res.headers.get('x-request-id') as string;
  }

  it('reach stdout while the gateway idles, and none is lost when it stops', async () => {
    const gateway = await startGatewayProcess('buffered-lines', {
      DATABASE_URL: h.database?.url as string,
      ...h.issuer.env(),
    });
    try {
      // One line is far below a buffered write: only the flush timer writes it.
      const first = await healthz(gateway.url);
      const deadline = Date.now() + 5_000;
      while (requestLines(gateway, [first]).length === 0 && Date.now() < deadline) await delay(20);
      expect(requestLines(gateway, [first])).toHaveLength(1);

      const last = [await healthz(gateway.url), await healthz(gateway.url), await healthz(gateway.url)];
      expect(await gateway.stop()).toEqual({ code: 0, signal: null });
      expect(requestLines(gateway, last).map((line) => line.request_id)).toEqual(last);
    } finally {
      await gateway.stop();
    }
  });
});
