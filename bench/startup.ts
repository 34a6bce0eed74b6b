/**
 * `pnpm --filter @tms/bench startup`: how long `pnpm start`'s process (`node dist/bin/gateway.mjs`,
 * compiled by `pnpm build`) takes from spawn to `/readyz` answering 200, and its resident memory
 * once idle, on both ledgers: the embedded PGlite on a fresh DATA_DIR (its first start creates and
 * migrates the database; then a restart on it) and Postgres on a fresh, migrated database. Prints one line per ledger
 * and round; docs/performance.md quotes it.
 *
 * Env: STARTUP_ROUNDS (default 3), STARTUP_IDLE_MS (default 5000).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ledger } from '@tms/ledger';
import { createTestDatabase } from '@tms/testkit';
import { buildServices, DIST_DIR, SERVER_NODE_FLAGS } from '../scripts/build';

const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 3);
const IDLE_MS = Number(process.env.STARTUP_IDLE_MS ?? 5000);

function rssMiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  return kib / 1024;
}

async function freePort(): Promise<number> {
  const net = await import('node:net');
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function measure(env: Record<string, string>): Promise<{ readyMs: number; idleRssMiB: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(DIST_DIR, 'bin/gateway.mjs')], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const readyMs = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    return { readyMs, idleRssMiB: rssMiB(child.pid as number) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

await buildServices();
const auth = { DEV_AUTH: '1' };
console.log(
  `machine: ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, load ${os.loadavg()[0]?.toFixed(1)}`,
);
for (let round = 1; round <= ROUNDS; round += 1) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-startup-'));
  try {
    const pglite = await measure({ ...auth, DATA_DIR: dataDir });
    console.log(
      `pglite   round ${round}: ready in ${Math.round(pglite.readyMs)} ms (fresh DATA_DIR), idle RSS ${pglite.idleRssMiB.toFixed(0)} MiB`,
    );
    const again = await measure({ ...auth, DATA_DIR: dataDir });
    console.log(
      `pglite   round ${round}: ready in ${Math.round(again.readyMs)} ms (restart on that DATA_DIR), idle RSS ${again.idleRssMiB.toFixed(0)} MiB`,
    );
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  const database = await createTestDatabase('tms_startup');
  const dataDir2 = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-startup-'));
  try {
    const ledger = await Ledger.open({ databaseUrl: database.url });
    await ledger.migrate();
    await ledger.close();
    const pg = await measure({ ...auth, DATA_DIR: dataDir2, DATABASE_URL: database.url });
    console.log(
      `postgres round ${round}: ready in ${Math.round(pg.readyMs)} ms (migrated database), idle RSS ${pg.idleRssMiB.toFixed(0)} MiB`,
    );
  } finally {
    await database.drop();
    fs.rmSync(dataDir2, { recursive: true, force: true });
  }
}
