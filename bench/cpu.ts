/**
 * CPU time spent on a side of a workload during a round: its server process (and any children),
 * and the Postgres backends serving that process's connections, told apart by the client's TCP
 * port, so that two servers on one database are measured apart (Postgres' shared background
 * processes, the WAL writer and the checkpointer, are left out: with two sides running at once
 * they cannot be split between them).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

interface ProcessTimes {
  pid: number;
  parent: number;
  /** A Postgres backend's client port, from its title ("postgres: 15/main: user db 127.0.0.1(port) state"). */
  clientPort: number | null;
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
      clientPort: name === 'postgres' ? backendClientPort(entry) : null,
      ticks,
    });
  }
  return found;
}

function backendClientPort(pid: string): number | null {
  try {
    const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    const port = /^postgres: [^:]+: \S+ \S+ [^\s(]+\((\d+)\) /.exec(title)?.[1];
    return port === undefined ? null : Number(port);
  } catch {
    return null;
  }
}

/** The local TCP ports of the sockets these processes hold open. */
function localPortsOf(pids: Iterable<number>): Set<number> {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone since the listing
    }
    for (const fd of fds) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        if (inode) inodes.add(inode);
      } catch {
        // closed since the listing
      }
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines: string[];
    try {
      lines = fs.readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      // "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ..."
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      if (local && fields[9] && inodes.has(fields[9])) ports.add(Number.parseInt(local.split(':')[1] ?? '', 16));
    }
  }
  return ports;
}

export interface CpuSample {
  server: Map<number, number>;
  postgres: Map<number, number>;
}

/** The ticks of `serverPid` and its descendants, and of the Postgres backends serving them, now. */
export function sampleCpu(serverPid: number): CpuSample {
  const all = readAll();
  const server = new Set([serverPid]);
  // Children are listed after their parents almost always; a second pass catches the rest.
  for (let pass = 0; pass < 2; pass += 1) for (const p of all) if (server.has(p.parent)) server.add(p.pid);
  const ticksOf = (keep: (p: ProcessTimes) => boolean) =>
    new Map(all.filter(keep).map((p) => [p.pid, p.ticks] as const));
  const ports = localPortsOf(server);
  return {
    server: ticksOf((p) => server.has(p.pid)),
    postgres: ticksOf((p) => p.clientPort !== null && ports.has(p.clientPort)),
  };
}

export interface CpuSeconds {
  server: number;
  postgres: number;
}

/** CPU seconds between two samples; a process started in between counts from zero. */
export function cpuBetween(before: CpuSample, after: CpuSample): CpuSeconds {
  return {
    server: secondsBetween(before.server, after.server),
    postgres: secondsBetween(before.postgres, after.postgres),
  };
}

/** CPU seconds the processes `keep` selects spent between two samples of one kind (`CpuSample.server` or `.postgres`). */
export function secondsBetween(
  from: Map<number, number>,
  to: Map<number, number>,
  keep: (pid: number) => boolean = () => true,
): number {
  let ticks = 0;
  for (const [pid, now] of to) if (keep(pid)) ticks += now - (from.get(pid) ?? 0);
  return ticks / TICKS_PER_SECOND;
}
