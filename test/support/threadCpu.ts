import { readFileSync } from 'node:fs';

/**
 * CPU time this thread has run, in ms, from Linux's per-thread scheduler statistics (ns). Unlike
 * process.cpuUsage() it leaves out the other threads (GC helpers, compiler, thread pool), and
 * unlike the wall clock it leaves out time spent waiting for a core, so it bounds how long the
 * event loop was busy, whatever else the machine is doing. Null where the file does not exist.
 */
export function threadCpuMs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}
