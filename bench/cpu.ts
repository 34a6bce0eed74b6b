/**
 * CPU time spent on a side of a workload during a round: its server process (and any children),
 * and the Postgres backends connected to its databases (Postgres' shared background processes,
 * the WAL writer and the checkpointer, are left out: with two sides running at once they cannot
 * be split between them).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

interface ProcessTimes {
  pid: number;
  parent: number;
  /** The database a Postgres backend serves, from its title ("postgres: 15/main: user db host state"). */
  database: string | null;
  /** user + system time, in clock ticks */
  ticks: number;
}

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** A `/proc/<pid>/stat` line: "pid (name) state ppid ... utime stime ...", the name may hold spaces and parentheses. */
function parseStat(stat: string): { name: string; parent: number; ticks: number } {
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return {
    name: stat.slice(stat.indexOf('(') + 1, close),
    parent: Number(fields[1]),
    ticks: Number(fields[11]) + Number(fields[12]),
  };
}

/** CPU seconds (user + system) one process has used so far (Linux). */
export function processCpuSeconds(pid: number): number {
  return parseStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')).ticks / TICKS_PER_SECOND;
}

function readAll(): ProcessTimes[] {
  const found: ProcessTimes[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    const { name, parent, ticks } = parseStat(stat);
    found.push({
      pid: Number(entry),
      parent,
      database: name === 'postgres' ? backendDatabase(entry) : null,
      ticks,
    });
  }
  return found;
}

function backendDatabase(pid: string): string | null {
  try {
    const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    return /^postgres: [^:]+: \S+ (\S+) /.exec(title)?.[1] ?? null;
  } catch {
    return null;
  }
}

export interface CpuSample {
  server: Map<number, number>;
  postgres: Map<number, number>;
}

/** The ticks of `serverPid` and its descendants, and of the Postgres backends of `databases`, now. */
export function sampleCpu(serverPid: number, databases: readonly string[]): CpuSample {
  const all = readAll();
  const server = new Set([serverPid]);
  // Children are listed after their parents almost always; a second pass catches the rest.
  for (let pass = 0; pass < 2; pass += 1) for (const p of all) if (server.has(p.parent)) server.add(p.pid);
  const ticksOf = (keep: (p: ProcessTimes) => boolean) =>
    new Map(all.filter(keep).map((p) => [p.pid, p.ticks] as const));
  return {
    server: ticksOf((p) => server.has(p.pid)),
    postgres: ticksOf((p) => p.database !== null && databases.includes(p.database)),
  };
}

export interface CpuSeconds {
  server: number;
  postgres: number;
}

/** CPU seconds between two samples; a process started in between counts from zero. */
export function cpuBetween(before: CpuSample, after: CpuSample): CpuSeconds {
  const spent = (from: Map<number, number>, to: Map<number, number>) => {
    let ticks = 0;
    for (const [pid, now] of to) ticks += now - (from.get(pid) ?? 0);
    return ticks / TICKS_PER_SECOND;
  };
  return { server: spent(before.server, after.server), postgres: spent(before.postgres, after.postgres) };
}
