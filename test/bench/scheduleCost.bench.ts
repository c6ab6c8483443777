/**
 * The cost of the worst schedules Tock accepts: sparse filters over 1-second intervals and
 * crontabs, and crontabs whose day and weekday fields rarely meet. For each: the time to
 * validate it at cron_add (parse + the "fires within a year" check), its points estimate (once,
 * uncached), and the time of one next-run from random instants (median and worst of a sample).
 * Targets: under 5 ms to validate, under 1 ms per next-run (judged on medians; p99 and max are
 * printed too, and on a shared machine they include waiting for a core). Yardsticks measured in the same run:
 * one `new Date()` field extraction, and one cron-parser 5 next() of a leap-day crontab.
 *
 * Run: npx tsx test/bench/scheduleCost.bench.ts
 */
import os from 'node:os';
import { CronExpressionParser } from 'cron-parser';
import { checkFires, nextRun, parseSchedule, pointsPerDay } from '../../shared/schedule/index.ts';

const NOW = Date.parse('2026-11-23T16:00:00Z');
const SAMPLES = 300;

/** [expression, zone, filter] */
const WORST: [string, string, string | null][] = [
  ['1 second', 'UTC', 'month == 2 and day == 29'],
  ['1 second', 'Europe/Paris', 'month == 12 and day == 31 and hour == 23 and minute == 59'],
  ['1 second', 'America/New_York', "day == 13 and weekday == 'Fri' and hour == 13 and minute == 13"],
  ['1 second', 'UTC', 'minute == hour and day == month'],
  ['7 seconds', 'Australia/Lord_Howe', 'month == 6 and day == 30 and hour == 2 and minute in [1, 59]'],
  ['* * * * * *', 'Europe/Paris', 'month == 2 and day == 29 and hour == 12 and minute == 0'],
  ['*/2 * * * *', 'UTC', 'minute in [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43, 45, 47, 49, 51, 53, 55, 57, 58]'],
  ['0 0 29 2 *', 'America/New_York', null],
  ['30 2 */13 * 5', 'America/New_York', null],
  ['R R */15 * */6', 'Europe/London', "weekday == 'Sun' and month in [2, 8]"],
];

function lcg(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}
const random = lcg(7);
const froms = Array.from({ length: SAMPLES }, () => NOW + Math.floor(random() * 366 * 86_400) * 1000);
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
let sink = 0;

/** Median, 99th percentile and max of `n` timings of `run(i)` (ms), after one warm-up pass. */
function time(n: number, run: (i: number) => void) {
  for (let i = 0; i < n; i++) run(i);
  const t: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    run(i);
    t.push(ms(start));
  }
  t.sort((a, b) => a - b);
  return { median: t[Math.floor(n / 2)]!, p99: t[Math.min(n - 1, Math.floor(n * 0.99))]!, max: t[n - 1]! };
}

const f3 = (x: number) => x.toFixed(3).padStart(7);
let worstValidate = 0;
let worstNext = 0;
console.log(`worst accepted schedules, validated at ${new Date(NOW).toISOString()}; next-run from ${SAMPLES} instants in the year after`);
console.log(`(load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores: on a busy machine p99 and max include time spent waiting for a core)`);
console.log('  validate ms (median / p99 / max) | points ms (cold) | next-run ms (median / p99 / max) | schedule');
for (const [expression, timezone, filter] of WORST) {
  const validate = time(50, (i) => checkFires(parseSchedule({ expression, timezone, filter, jobId: i }), NOW));
  const schedule = parseSchedule({ expression, timezone, filter, jobId: 1 });
  const start = process.hrtime.bigint();
  sink += pointsPerDay(schedule);
  const points = ms(start);
  const next = time(SAMPLES, (i) => (sink += nextRun(schedule, froms[i]!) ?? 0));
  worstValidate = Math.max(worstValidate, validate.median);
  worstNext = Math.max(worstNext, next.median);
  console.log(
    `  ${f3(validate.median)} / ${f3(validate.p99)} / ${f3(validate.max)} | ${f3(points)} | ${f3(next.median)} / ${f3(next.p99)} / ${f3(next.max)} | '${expression}' ${timezone}${filter ? ` filter: ${filter}` : ''}`,
  );
}
console.log(
  `targets (medians): validate under 5 ms: ${worstValidate < 5 ? 'met' : 'NOT met'} (worst ${worstValidate.toFixed(3)} ms); next-run under 1 ms: ${worstNext < 1 ? 'met' : 'NOT met'} (worst ${worstNext.toFixed(3)} ms)`,
);

const N = 100_000;
const dateStart = process.hrtime.bigint();
for (let i = 0; i < N; i++) {
  const d = new Date(froms[i % SAMPLES]! + i);
  sink += d.getUTCFullYear() + d.getUTCMonth() + d.getUTCDate() + d.getUTCHours() + d.getUTCMinutes() + d.getUTCDay();
}
const dateUs = (ms(dateStart) / N) * 1000;
const leap = CronExpressionParser.parse('0 0 29 2 *', { tz: 'America/New_York' });
const cp = time(SAMPLES, (i) => {
  leap.reset(new Date(froms[i]!));
  sink += leap.next().getTime();
});
console.log('yardsticks, same run:');
console.log(`  one new Date(x) with its six UTC fields read: ${dateUs.toFixed(3)} us`);
console.log(`  cron-parser 5 next() of '0 0 29 2 *' America/New_York: ${cp.median.toFixed(3)} ms median, ${cp.max.toFixed(3)} ms max`);
if (sink === 42) console.log('');
