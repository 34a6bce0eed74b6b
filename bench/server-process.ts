/**
 * The benches' server processes: a compiled bundle run with plain `node`, its output in a log
 * file as in production, ready once a path answers below 500.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface Server {
  name: string;
  url: string;
  child: ChildProcess;
  pid: number;
  stop(): Promise<void>;
  /** Stop the process and start a new one in its place (same bundle, settings and database). */
  restart(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Runs a compiled bundle with plain `node`; its output goes to a log file, as in production. */
export async function startServer(
  name: string,
  bundle: string,
  env: Record<string, string>,
  readyPath: string,
  logDir: string,
  nodeFlags: readonly string[] = [],
): Promise<Server> {
  const port = await freePort();
  const out = fs.openSync(path.join(logDir, `${name}.log`), 'w');
  const child = spawn(process.execPath, [...nodeFlags, bundle], {
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}; see ${logDir}/${name}.log`);
    try {
      const res = await fetch(`${url}${readyPath}`);
      await res.arrayBuffer();
      if (res.status < 500) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not become ready; see ${logDir}/${name}.log`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const server: Server = {
    name,
    url,
    child,
    pid: child.pid as number,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
    async restart() {
      await server.stop();
      const fresh = await startServer(name, bundle, env, readyPath, logDir, nodeFlags);
      Object.assign(server, { url: fresh.url, child: fresh.child, pid: fresh.pid, stop: fresh.stop });
    },
  };
  return server;
}
