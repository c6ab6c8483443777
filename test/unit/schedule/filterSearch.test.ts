import { expect } from 'chai';
import fc from 'fast-check';
import { DAY, daysFromCivil, wallFields, weekdayOfDays } from '../../../shared/schedule/civil.ts';
import { compileFilter, type FilterVars } from '../../../shared/schedule/filter.ts';
import { CAN_FALSE, CAN_TRUE, evalAbs, minuteMask, type Domains } from '../../../shared/schedule/filterAbstract.ts';
import { nextRun, parseSchedule, pointsPerDay, ScheduleError } from '../../../shared/schedule/index.ts';
import { compiled, type Schedule } from '../../../shared/schedule/schedule.ts';

const ZONES = ['UTC', 'America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/Santiago'];
const NAMES = ['minute', 'hour', 'day', 'month', 'weekday'] as const;
const RANGE: Record<(typeof NAMES)[number], [number, number]> = { minute: [0, 59], hour: [0, 23], day: [1, 31], month: [1, 12], weekday: [0, 6] };
const FILTER_HORIZON = 10 * 366 * DAY;
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

const between = (min: number, max: number) => fc.integer({ min, max });
const variable = fc.constantFrom(...NAMES);

/** One condition: a comparison with a value (sometimes out of range), a list, or two variables compared. */
const atom: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom('minute', 'hour', 'day', 'month'), fc.constantFrom('==', '!=', '<', '<=', '>', '>='), fc.nat(64)).map(([v, op, n]) => {
    const [lo, hi] = RANGE[v];
    return `${v} ${op} ${n % 4 === 0 ? n : lo + (n % (hi - lo + 1))}`;
  }) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('minute', 'hour', 'day', 'month'), fc.boolean(), fc.uniqueArray(fc.nat(59), { minLength: 1, maxLength: 5 })).map(([v, not, xs]) => {
    const [lo, hi] = RANGE[v];
    return `${v} ${not ? 'not in' : 'in'} [${xs.map((x) => lo + (x % (hi - lo + 1))).join(', ')}]`;
  }) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('==', '!='), fc.constantFrom(...WEEKDAYS)).map(([op, d]) => `weekday ${op} '${d}'`) },
  { weight: 1, arbitrary: fc.tuple(variable, fc.constantFrom('==', '!=', '<', '>='), variable).filter(([a, , b]) => a !== b && a !== 'weekday' && b !== 'weekday').map(([a, op, b]) => `${a} ${op} ${b}`) },
);

/** and / or / not over atoms, up to a few levels deep. */
const filterText: fc.Arbitrary<string> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 3, arbitrary: atom },
    { weight: 2, arbitrary: fc.tuple(tie('node') as fc.Arbitrary<string>, fc.constantFrom('and', 'or'), tie('node') as fc.Arbitrary<string>).map(([a, op, b]) => `(${a}) ${op} (${b})`) },
    { weight: 1, arbitrary: (tie('node') as fc.Arbitrary<string>).map((a) => `not (${a})`) },
  ),
})).node;

const crontab = fc
  .tuple(
    fc.constantFrom('*', '*/2', '0', '0,30', '*/7', '5-10'),
    fc.constantFrom('*', '*/3', '2', '1-3', '9-17'),
    fc.constantFrom('*', '1', '13', '*/10', '29', 'L'),
    fc.constantFrom('*', '2', '*/4', '1-6'),
    fc.constantFrom('*', '1-5', '5', '0,6'),
  )
  .map((f) => f.join(' '));
const withSeconds = fc.tuple(fc.constantFrom('*', '0', '*/20'), crontab).map(([s, c]) => `${s} ${c}`);

/** 2024 to 2027 at any second. */
const instant = between(Date.UTC(2024, 0, 1) / 1000, Date.UTC(2028, 0, 1) / 1000).map((s) => s * 1000);

function tryParse(expression: string, timezone: string, filter: string | null): Schedule | null {
  try {
    return parseSchedule({ expression, timezone, filter, jobId: 9 });
  } catch (e) {
    if (e instanceof ScheduleError) return null;
    throw e;
  }
}

const varsAt = (s: Schedule, t: number): FilterVars => wallFields(compiled(s).zone.wallAt(t));

/** Brute force over a crontab: every run of the unfiltered schedule in turn, the first the filter keeps. */
function bruteCron(plain: Schedule, filtered: Schedule, from: number, steps: number) {
  const test = compiled(filtered).compiledFilter!.test;
  let t = from;
  for (let i = 0; i < steps; i++) {
    const run = nextRun(plain, t);
    // nextRun looks 10 years ahead when there is a filter.
    if (run === null || run > from + FILTER_HORIZON) return { run: null, until: Infinity };
    if (test(varsAt(filtered, run))) return { run, until: run };
    t = run;
  }
  return { run: undefined, until: t };
}

/** Brute force over an elapsed interval: every candidate of the chain, the first the filter keeps. */
function bruteChain(filtered: Schedule, step: number, from: number, steps: number) {
  const test = compiled(filtered).compiledFilter!.test;
  for (let i = 1; i <= steps; i++) if (test(varsAt(filtered, from + i * step))) return { run: from + i * step, until: from + i * step };
  return { run: undefined, until: from + steps * step };
}

/** Whatever the brute force found, or (when it gave up) nothing up to where it looked. */
function agree(fast: number | null, brute: { run: number | null | undefined; until: number }, what: string) {
  if (brute.run === undefined) {
    if (fast !== null) expect(fast, what).to.be.greaterThan(brute.until);
  } else expect(fast, what).to.equal(brute.run);
}

describe('filter search by field sets (fast path) against brute force', () => {
  it('the set evaluation never says "cannot" wrongly, and is exact when every variable has one value', () => {
    const domain = (v: (typeof NAMES)[number]) => fc.uniqueArray(between(...RANGE[v]), { minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(filterText, fc.tuple(domain('minute'), domain('hour'), domain('day'), domain('month'), domain('weekday')), (text, values) => {
        const f = compileFilter(text);
        const d: Domains = { lo: [0, 0, 0, 0, 0], hi: [0, 0, 0, 0, 0] };
        values.forEach((xs, v) => xs.forEach((x) => (x < 32 ? (d.lo[v]! |= 1 << x) : (d.hi[v]! |= 1 << (x - 32)))));
        let seen = 0;
        const probe = (i: number, vars: FilterVars): void => {
          if (i === 5) {
            seen |= f.test(vars) ? CAN_TRUE : CAN_FALSE;
            return;
          }
          for (const x of values[i]!) probe(i + 1, { ...vars, [NAMES[i]!]: x });
        };
        probe(0, { minute: 0, hour: 0, day: 0, month: 0, weekday: 0 });
        const claimed = evalAbs(f.abs, d);
        expect(claimed & seen, text).to.equal(seen);
        if (values.every((xs) => xs.length === 1)) expect(claimed, text).to.equal(seen);
        // The minutes of one hour, exactly.
        const vars = { minute: 0, hour: values[1][0]!, day: values[2][0]!, month: values[3][0]!, weekday: values[4][0]! };
        const [lo, hi] = minuteMask(f.abs, vars);
        for (let m = 0; m < 60; m++) expect(((m < 32 ? lo >>> m : hi >>> (m - 32)) & 1) === 1, `${text} at minute ${m}`).to.equal(f.test({ ...vars, minute: m }));
      }),
      { numRuns: 400 },
    );
  });

  it('a filtered crontab gives the run brute force finds, in any zone', () => {
    fc.assert(
      fc.property(fc.oneof(crontab, withSeconds), filterText, fc.constantFrom(...ZONES), instant, (expr, text, zone, from) => {
        const filtered = tryParse(expr, zone, text);
        fc.pre(filtered !== null);
        const plain = parseSchedule({ expression: expr, timezone: zone, jobId: 9 });
        agree(nextRun(filtered, from), bruteCron(plain, filtered, from, 3000), `${expr} | ${text} | ${zone} from ${new Date(from).toISOString()}`);
      }),
      { numRuns: 300 },
    );
  });

  it('a filtered interval of seconds, minutes or hours gives the candidate brute force finds, in any zone', () => {
    fc.assert(
      fc.property(fc.constantFrom(1, 7, 59, 60, 61, 300, 3599, 3600, 5400, 7200), filterText, fc.constantFrom(...ZONES), instant, (seconds, text, zone, from) => {
        const filtered = tryParse(`${seconds} seconds`, zone, text);
        fc.pre(filtered !== null);
        agree(nextRun(filtered, from), bruteChain(filtered, seconds * 1000, from, 20_000), `${seconds} seconds | ${text} | ${zone} from ${new Date(from).toISOString()}`);
      }),
      { numRuns: 300 },
    );
  });

  it('R crontabs and DST gaps: the filter sees the wall time of the real run', () => {
    for (const [expr, zone, text, from] of [
      ['30 2 * * *', 'America/New_York', 'hour == 3', '2025-03-01T00:00:00Z'],
      ['R R * * *', 'Europe/London', "weekday == 'Sun' and hour >= 12", '2025-03-01T00:00:00Z'],
      ['*/10 * * * *', 'Australia/Lord_Howe', 'hour == 2 and minute >= 20', '2025-04-05T10:00:00Z'],
    ] as const) {
      const filtered = parseSchedule({ expression: expr, timezone: zone, filter: text, jobId: 4 });
      const plain = parseSchedule({ expression: expr, timezone: zone, jobId: 4 });
      let t = Date.parse(from);
      for (let i = 0; i < 20; i++) {
        const brute = bruteCron(plain, filtered, t, 100_000);
        agree(nextRun(filtered, t), brute, `${expr} | ${text} | ${zone}`);
        if (!brute.run) break;
        t = brute.run;
      }
    }
  });

  it('the points estimate equals counting every candidate', () => {
    const bruteCronPoints = (s: Schedule) => {
      const c = compiled(s);
      let total = 0;
      for (let d = daysFromCivil(2025, 1, 1); d < daysFromCivil(2026, 1, 1); d++) {
        const weekday = weekdayOfDays(d);
        total += c.cron!.countOnDay(d, (hour, minute, date) => c.compiledFilter!.test({ minute, hour, day: date.day, month: date.month, weekday }));
      }
      return Math.max(1, Math.ceil(total / 365 - 1e-9));
    };
    const bruteChainPoints = (s: Schedule, step: number) => {
      const c = compiled(s);
      const days = Math.max(1, Math.min(7, Math.floor((200_000 * step) / DAY)));
      const start = c.zone.instantOfShifted(daysFromCivil(2025, 1, 6) * DAY);
      let kept = 0;
      for (let t = start + step; t < start + days * DAY; t += step) if (c.compiledFilter!.test(varsAt(s, t))) kept++;
      return Math.max(1, Math.ceil(kept / days - 1e-9));
    };
    fc.assert(
      fc.property(crontab, fc.constantFrom(7, 60, 61, 3600), filterText, fc.constantFrom(...ZONES), (expr, seconds, text, zone) => {
        const cron = tryParse(expr, zone, text);
        if (cron) expect(pointsPerDay(cron), `${expr} | ${text}`).to.equal(bruteCronPoints(cron));
        const chain = parseSchedule({ expression: `${seconds} seconds`, timezone: zone, filter: text });
        expect(pointsPerDay(chain), `${seconds} seconds | ${text}`).to.equal(bruteChainPoints(chain, seconds * 1000));
      }),
      { numRuns: 40 },
    );
  });
});
