// CPU and memory of a process and everything it started, read from /proc as `top` would: what a
// contender costs the machine, whatever threads or children it uses.
import { readdirSync, readFileSync } from 'node:fs';

const TICK_US = 10_000; // USER_HZ is 100 on Linux
const PAGE = 4096;

interface Stat {
  ppid: number;
  cpuUs: number;
  rss: number;
}

function stat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command, which may hold spaces: state ppid ... utime(14) stime(15) ... rss(24).
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(f[1]), cpuUs: (Number(f[11]) + Number(f[12])) * TICK_US, rss: Number(f[21]) * PAGE };
  } catch {
    return null; // gone meanwhile
  }
}

/** CPU time (µs, user + system) and resident memory (bytes) of `root` and its descendants now. */
export function treeUsage(root: number): { cpuUs: number; rss: number; pids: number } {
  const all = new Map<number, Stat>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (s) all.set(pid, s);
  }
  const inTree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, s] of all) if (!inTree.has(pid) && inTree.has(s.ppid)) (inTree.add(pid), (grew = true));
  }
  let cpuUs = 0;
  let rss = 0;
  for (const pid of inTree) {
    const s = all.get(pid);
    if (s) (cpuUs += s.cpuUs), (rss += s.rss);
  }
  return { cpuUs, rss, pids: inTree.size };
}
