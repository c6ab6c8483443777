/**
 * Next-run throughput of the schedule module for a realistic mix of jobs (mostly crontab, some
 * in DST zones, some intervals, a few R and filtered jobs), and the time to compute the next run
 * of 1,000,000 jobs (target: under 5 s on this 2-core machine). Next to it, two yardsticks
 * measured in the same run: a bare `new Date(x).getUTCHours()` loop and cron-parser 5's next(),
 * so the figures can be compared across machines.
 *
 * Run: npx tsx test/bench/schedule.bench.ts
 */
import { CronExpressionParser } from 'cron-parser';
import { nextRun, parseSchedule, type Schedule } from '../../shared/schedule/index.ts';

const JOBS = 1_000_000;
const CRON_PARSER_SAMPLE = 20_000;

/** [weight %, expression, zone, filter] */
const MIX: [number, string, string, string | null][] = [
  [22, '*/5 * * * *', 'UTC', null],
  [10, '0 3 * * *', 'UTC', null],
  [10, '15 9 * * 1-5', 'America/New_York', null],
  [8, '*/15 * * * *', 'Europe/London', null],
  [8, '0 3 * * *', 'Europe/Berlin', null],
  [5, '30 2 * * *', 'America/New_York', null],
  [5, '0 */2 * * *', 'Asia/Tokyo', null],
  [5, '5 7 * * 1', 'Europe/London', null],
  [3, '0 0 1 * *', 'Australia/Sydney', null],
  [3, '0 0 L * *', 'UTC', null],
  [8, '15 minutes', 'UTC', null],
  [5, '1 day 17:05', 'Europe/Paris', null],
  [3, '10 seconds', 'UTC', null],
  [3, 'R R * * *', 'America/Chicago', null],
  [2, '0 8 * * *', 'UTC', "weekday not in ['Sat', 'Sun']"],
];

/** A small deterministic generator, so every run of the benchmark measures the same work. */
function lcg(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

function seconds(run: () => void): number {
  const start = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

// Jobs: each has its own Schedule (as the planner holds them) and its own previous run, spread
// over a day around 2025-03-09 (the US DST change) so zone caches and DST paths are exercised.
const random = lcg(42);
const base = Date.parse('2025-03-09T00:00:00Z');
const weights = MIX.flatMap(([w], i) => new Array<number>(w).fill(i));
let schedules: Schedule[] = [];
const froms = new Float64Array(JOBS);
const parseSeconds = seconds(() => {
  schedules = new Array<Schedule>(JOBS);
  for (let i = 0; i < JOBS; i++) {
    const [, expression, timezone, filter] = MIX[weights[Math.floor(random() * weights.length)]!]!;
    schedules[i] = parseSchedule({ expression, timezone, filter, jobId: i });
    froms[i] = base + Math.floor(random() * 86_400) * 1000;
  }
});

let sink = 0;
const runAll = () => {
  for (let i = 0; i < JOBS; i++) sink += nextRun(schedules[i]!, froms[i]!) ?? 0;
};
const cold = seconds(runAll);
const warm = seconds(runAll);

// Yardstick 1: the cheapest date work there is.
const dateLoop = seconds(() => {
  for (let i = 0; i < JOBS; i++) sink += new Date(froms[i]!).getUTCHours();
});

// Yardstick 2: a bare cron-parser 5 next() loop over the crontab kinds of the mix, each parsed
// once and reset to the job's previous run (sampled, then scaled to a million).
const parsed = MIX.filter(([, e, tz]) => parseSchedule({ expression: e, timezone: tz }).kind === 'crontab' && !e.includes('R')).map(
  ([, e, tz]) => CronExpressionParser.parse(e, { tz }),
);
const cronParser =
  seconds(() => {
    for (let i = 0; i < CRON_PARSER_SAMPLE; i++) {
      const expr = parsed[i % parsed.length]!;
      expr.reset(new Date(froms[i]!));
      sink += expr.next().getTime();
    }
  }) *
  (JOBS / CRON_PARSER_SAMPLE);

console.log(`schedule.nextRun, ${fmt(JOBS)} jobs, realistic mix (${MIX.length} kinds, ${MIX.filter(([, , z]) => z !== 'UTC').length} in non-UTC zones)`);
console.log(`  parseSchedule x ${fmt(JOBS)}:           ${parseSeconds.toFixed(3)} s`);
console.log(`  next run of ${fmt(JOBS)} jobs (cold): ${cold.toFixed(3)} s  (${fmt(JOBS / cold)} next-runs/s)`);
console.log(`  next run of ${fmt(JOBS)} jobs (warm): ${warm.toFixed(3)} s  (${fmt(JOBS / warm)} next-runs/s, ${((warm / JOBS) * 1e6).toFixed(3)} us each)`);
console.log(`  target: ${fmt(JOBS)} in under 5 s: ${cold < 5 && warm < 5 ? 'met' : 'NOT met'}`);
console.log('yardsticks, same run:');
console.log(`  ${fmt(JOBS)} x new Date(x).getUTCHours(): ${dateLoop.toFixed(3)} s  -> nextRun costs ${(warm / dateLoop).toFixed(1)}x that`);
console.log(
  `  cron-parser 5 next() (pre-parsed), ${fmt(CRON_PARSER_SAMPLE)} sampled, scaled to ${fmt(JOBS)}: ${cronParser.toFixed(1)} s  -> nextRun is ${(cronParser / warm).toFixed(0)}x faster`,
);
if (sink === 42) console.log(''); // keeps the loops from being optimised away
