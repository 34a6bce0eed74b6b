import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DRIVERS, type Driver, type Harness, startHarness } from '../../../services/gateway/test/harness';

/*
 * The live service for the Python client's pytest suite (test/conftest.py starts this file with
 * `node --import tsx`): a real gateway on loopback per driver named on the command line (embedded
 * PGlite, a fresh Postgres database), each with its embedded indexer and a token issuer, and a
 * control endpoint on loopback that mints what a test cannot ask the service for: `POST /human`
 * answers a fresh enrolled person's session token. Prints one JSON line,
 * `{"pglite": {"url": ..., "control": ...}, ...}`, then runs until its stdin closes.
 */

/** Session tokens outlive any run of the suite. */
const TOKEN_SECONDS = 3600;

/** The TypeScript client's test limits: room for every test, and `me.get` at 1 a second to meet `rate_limited`. */
const RATE_LIMITS = '*=1000/60,me.get=1/1';

async function control(h: Harness): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/human') {
      res.writeHead(404).end();
      return;
    }
    h.human()
      .then(async (human) => {
        const token = await h.issuer.sessionToken(human.subject, { expiresIn: TOKEN_SECONDS });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ subject: human.subject, actor_id: human.actorId, token }));
      })
      .catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function main(): Promise<void> {
  const drivers = process.argv.slice(2) as Driver[];
  const unknown = drivers.filter((driver) => !DRIVERS.includes(driver));
  if (drivers.length === 0 || unknown.length > 0) {
    throw new Error(`usage: gateway.ts <${DRIVERS.join('|')}>... (got ${process.argv.slice(2).join(' ')})`);
  }
  const started = await Promise.all(
    drivers.map(async (driver) => {
      const h = await startHarness({ driver, env: { INDEXER: 'embedded', RATE_LIMITS } });
      return { driver, h, control: await control(h) };
    }),
  );
  const report = Object.fromEntries(started.map((s) => [s.driver, { url: s.h.url, control: s.control.url }]));
  process.stdout.write(`${JSON.stringify(report)}\n`);

  const stop = async () => {
    for (const s of started) {
      s.control.server.closeAllConnections();
      s.control.server.close();
      await s.h.close();
    }
    process.exit(0);
  };
  process.stdin.on('end', () => void stop());
  process.stdin.on('error', () => void stop());
  process.stdin.resume();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
