import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * Root hooks (mocha --require): what a test file leaves open. Mocha runs without "exit": a timer,
 * socket, server, child process or worker left behind keeps the run from ending. In a parallel
 * run each file runs in a worker that mocha ends itself, so what a file leaves open is looked for
 * here, after each file: the resources Node reports beyond those present before it.
 */
const count = () => {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
};
const extra = (before: Map<string, number>) => [...count()].filter(([type, n]) => n > (before.get(type) ?? 0)).map(([type, n]) => `${type} x${n - (before.get(type) ?? 0)}`);

const nextTurn = () => new Promise((r) => setImmediate(r));

/**
 * CPU ms of this worker and of the children it has reaped (a spawned service, CLI or browser),
 * from /proc: a file's cost on a shared machine, where wall time mostly says how busy the others were.
 */
function cpuMs(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    // utime, stime, cutime, cstime are fields 14 to 17 of stat(5), counted from the state (field 3).
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    return ticks * 10;
  } catch {
    return 0;
  }
}

let before = new Map<string, number>();
let startedAt = 0;
let cpuAt = 0;
export const mochaHooks = {
  // Both hooks count after a turn, once mocha has armed the hook's own timeout timer: counted in
  // one and not the other, that timer would be reported as left open.
  async beforeAll() {
    startedAt = performance.now();
    cpuAt = cpuMs();
    await nextTurn();
    before = count();
  },
  async afterAll(this: Mocha.Context) {
    this.timeout(10_000);
    // TOCK_TEST_TIMES=<file>: each file's wall time (to keep test/mocharc.all.cjs's longest-first
    // list true) and CPU time, its own and its children's (what makes the whole run slow).
    const times = process.env.TOCK_TEST_TIMES;
    const file = this.test?.parent?.suites[0]?.file;
    if (times && file) appendFileSync(times, `${Math.round(performance.now() - startedAt)}\t${cpuMs() - cpuAt}\t${relative(process.cwd(), file)}\n`);
    await nextTurn();
    // Closing handles finish on later turns (a socket's close, a child's exit): give them time.
    const deadline = Date.now() + 3000;
    let left = extra(before);
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50).unref());
      left = extra(before);
    }
    if (left.length > 0) console.error(`      left open: ${left.join(', ')}\n${describeHandles()}`);
  },
};

/** Which handles they are, enough to find where each was opened. */
function describeHandles(): string {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles
    .map((h: any) => {
      const name = h?.constructor?.name ?? typeof h;
      if (name === 'Socket') return `Socket ${h.localAddress}:${h.localPort} -> ${h.remoteAddress}:${h.remotePort}${h._handle?.fd <= 2 ? ' (stdio)' : ''}`;
      if (name === 'Server') return `Server ${JSON.stringify(h.address?.())}`;
      if (name === 'ChildProcess') return `ChildProcess ${h.spawnargs?.join(' ')}`;
      if (name === 'Timeout') return `Timeout ${h._idleTimeout} ms: ${String(h._onTimeout).slice(0, 160).replace(/\s+/g, ' ')}`;
      return name;
    })
    .map((line: string) => `        ${line}`)
    .join('\n');
}
