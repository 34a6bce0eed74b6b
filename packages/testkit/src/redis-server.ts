import { type ChildProcess, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './ports';

// Redis for the rate-limit tests: the shared server on 6379 (`.ci/run` starts it), on which each
// test keeps to keys of its own prefix, and a private server of a test's own that it may stop,
// start again and pause (the shared one is never stopped: other tests use it).

/** The shared Redis the tests use (TEST_REDIS_URL overrides it). */
export const SHARED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other test (or run) uses: `tms-test:<name>:<random>:`. */
export function redisKeyPrefix(name: string): string {
  return `tms-test:${name}:${crypto.randomBytes(6).toString('hex')}:`;
}

/** The keys under `prefix` in the Redis at `url`. */
export async function redisKeys(url: string, prefix: string): Promise<string[]> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  try {
    await client.connect();
    return (await client.keys(`${prefix}*`)).sort();
  } finally {
    client.disconnect();
  }
}

/** The name the probe of `redisClients` gives its own connection, so that it can leave itself out. */
const PROBE_NAME = 'tms-test-probe';

/** The clients connected to the Redis at `url` (one CLIENT LIST line each), other than such probes. */
export async function redisClients(url: string): Promise<string[]> {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectionName: PROBE_NAME });
  try {
    await client.connect();
    const list = (await client.client('LIST')) as string;
    return list.split('\n').filter((line) => line.trim() !== '' && !line.includes(` name=${PROBE_NAME} `));
  } finally {
    client.disconnect();
  }
}

/** Whether something answering like Redis listens on `port` (+PONG, or -NOAUTH with a password). */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk) => done(/^(\+PONG|-NOAUTH)/.test(chunk.toString('utf8'))));
  });
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A redis-server of the test's own on a free loopback port (no persistence: a restart empties
 * it, as a restart of a cache would), optionally with a password.
 */
export class PrivateRedis {
  private process: ChildProcess | null = null;
  /** Everything the server wrote (its log goes to stdout). */
  readonly output: string[] = [];

  private constructor(
    readonly port: number,
    private readonly directory: string,
    private readonly password: string | null,
  ) {}

  static async create(options: { password?: string } = {}): Promise<PrivateRedis> {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'tms-redis-'));
    const server = new PrivateRedis(await freePort(), directory, options.password ?? null);
    await server.start();
    return server;
  }

  /** `redis://[:password@]127.0.0.1:<port>` */
  url(): string {
    const auth = this.password === null ? '' : `:${encodeURIComponent(this.password)}@`;
    return `redis://${auth}127.0.0.1:${this.port}`;
  }

  /** Start the server (again); resolves once it answers. */
  async start(): Promise<void> {
    if (this.process) throw new Error('redis-server is already running');
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    args.push('--dir', this.directory);
    if (this.password !== null) args.push('--requirepass', this.password);
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => this.output.push(chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => this.output.push(chunk.toString('utf8')));
    this.process = child;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    const deadline = Date.now() + 20_000;
    while (!(await answersPing(this.port))) {
      if (gone) throw new Error(`redis-server exited at start:\n${this.output.join('')}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer in time:\n${this.output.join('')}`);
      await delay(50);
    }
  }

  /** Stop the server (SIGTERM, as a service manager does); resolves once it has exited. */
  async stop(): Promise<void> {
    const child = this.process;
    if (!child) return;
    this.process = null;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await exited;
  }

  /** Freeze the server (SIGSTOP): connections stay open and nothing is answered, as a hung Redis. */
  pause(): void {
    this.process?.kill('SIGSTOP');
  }

  resume(): void {
    this.process?.kill('SIGCONT');
  }

  /** Stop (if running) and remove its directory. */
  async destroy(): Promise<void> {
    await this.stop();
    fs.rmSync(this.directory, { recursive: true, force: true });
  }
}
