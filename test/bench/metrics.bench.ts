// What the metrics cost a run: the executor's three records per execution (outcome counter,
// lateness and target-duration histograms), and one API request's histogram, in CPU nanoseconds,
// next to an empty loop; plus how long a scrape of the whole registry takes.
// Run: npx tsx test/bench/metrics.bench.ts
import { apiRequestDuration, registry, runMetrics } from '../../shared/metrics.ts';

const N = 2_000_000;
function cpuNs(fn: (i: number) => void) {
  for (let i = 0; i < 100_000; i++) fn(i); // warm-up
  const start = process.cpuUsage();
  for (let i = 0; i < N; i++) fn(i);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / N;
}

let sink = 0;
const empty = cpuNs((i) => (sink += i & 1));
const perRun = cpuNs((i) => {
  runMetrics.executions.succeeded.inc();
  runMetrics.targetDuration.succeeded.observe((i % 500) / 1000);
  runMetrics.lateness.observe((i % 50) / 1000);
});
const perApi = cpuNs((i) => apiRequestDuration.observe({ function: 'cron_get', code: i % 10 === 0 ? 2 : 0 }, (i % 100) / 1000));
const scrapes = 200;
const t0 = process.cpuUsage();
for (let i = 0; i < scrapes; i++) await registry.metrics();
const t1 = process.cpuUsage(t0);
console.log(`empty loop              : ${empty.toFixed(0)} ns CPU per iteration`);
console.log(`executor, per execution : ${perRun.toFixed(0)} ns CPU (counter + 2 histogram observations)`);
console.log(`gateway, per API request: ${perApi.toFixed(0)} ns CPU (histogram with function and code labels)`);
console.log(`scrape of this registry : ${((t1.user + t1.system) / scrapes / 1000).toFixed(2)} ms CPU`);
if (sink < 0) console.log(sink);
