// Memory under load (issue 23's row): Tock as `npm start` starts it, JOBS jobs every second (half
// a rate it sustains here) for MINUTES minutes. Each minute: the occurrences that arrived at the
// sink (its own process) out of those due, doubled ones, lateness p99; the RSS of Tock's process tree
// (from /proc) and its heap in use (its own /metrics). Memory is flat when the RSS at the end is
// within 10% of the RSS after the first minute.
// Run: npm run bench -- soak   (TOCK_SOAK_JOBS, default 1500; TOCK_SOAK_MINUTES, default 10)
import { loadavg } from 'node:os';
import { bound } from './bound.ts';
import { treeUsage } from './versus/procTree.ts';
import { registerTicking, startSink } from './versus/sinkProcess.ts';
import { sleep, startTock } from './versus/tock.ts';

const JOBS = Number(process.env.TOCK_SOAK_JOBS ?? 1500);
const MINUTES = Number(process.env.TOCK_SOAK_MINUTES ?? 10);

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0);

console.log(`Soak: ${JOBS} jobs every second for ${MINUTES} min (load average ${loadavg().map((x) => x.toFixed(1)).join(' ')})`);
const sink = await startSink();
const tock = await startTock();
try {
  const registeredIn = await registerTicking(tock, sink.url, JOBS);
  const start = Math.ceil((Date.now() + 2000) / 1000) * 1000;
  console.log(`  ${JOBS} jobs registered in ${registeredIn.toFixed(1)} s`);
  const rss: number[] = [];
  let missing = 0;
  let doubled = 0;
  for (let m = 1; m <= MINUTES; m++) {
    const end = start + m * 60_000;
    await sleep(end - Date.now());
    const usage = treeUsage(tock.pid);
    rss.push(usage.rss);
    const [heap] = await tock.metrics(['nodejs_heap_size_used_bytes']);
    // Lateness is read a minute behind the RSS, so late runs of the minute have arrived; the last is read after a wait.
    if (m === MINUTES) await sleep(3000);
    const s = await sink.stats(end - 60_000, end);
    missing += JOBS * 60 - s.distinct;
    doubled += s.doubled;
    console.log(`  minute ${String(m).padStart(2)}: ${s.distinct}/${JOBS * 60} arrived, ${s.doubled} doubled, lateness p99 ${s.p99} ms max ${s.max} ms; RSS ${mb(usage.rss)} MB, heap in use ${mb(heap!)} MB`);
  }
  const growth = rss.at(-1)! / rss[0]! - 1;
  console.log(`  RSS after the first minute ${mb(rss[0]!)} MB, at the end ${mb(rss.at(-1)!)} MB (${growth >= 0 ? '+' : ''}${(100 * growth).toFixed(1)}%)`);
  bound('RSS growth from the first minute to the end', 100 * growth, 10, '%');
  bound('occurrences missing', missing, 1, '');
  bound('occurrences doubled', doubled, 1, '');
} finally {
  await tock.stop();
  await sink.stop();
}
process.exit(process.exitCode ?? 0);
