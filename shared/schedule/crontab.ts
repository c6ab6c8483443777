import {
  civilFromDays,
  DAY,
  daysFromCivil,
  daysInMonth,
  MINUTE,
  SECOND,
  weekdayOfDays,
  type CivilDate,
} from './civil.ts';
import { parseCronField, type CronField, type CronFieldName } from './cronField.ts';
import { drawDistinct, drawSeed } from './random.ts';
import { ScheduleError } from './scheduleError.ts';

/*
 * Why not cron-parser at run time: its DST handling, day/weekday rule for `*` steps, missing
 * `@midnight`, leniency (4 fields, unknown zones) and lack of `R` all differ from docs/schedule.md, so
 * only its field grammar would remain, and that grammar is 100 lines here with error positions a
 * person can act on. The matcher below works on wall-clock integers with precomputed "next
 * allowed value" tables: two orders of magnitude faster than cron-parser's Luxon-based stepping
 * (test/bench/schedule.bench.ts prints both). cron-parser
 * is kept as the yardstick of the benchmark and as an oracle in the property tests for the cases
 * where both agree (UTC, no day/weekday OR).
 */

export const NICKNAMES: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const FIVE: CronFieldName[] = ['minute', 'hour', 'day', 'month', 'weekday'];
const SIX: CronFieldName[] = ['second', ...FIVE];

/** Next-allowed-value table: t[x] = smallest allowed value >= x, or -1; t[max + 1] = -1. */
function nextTable(values: readonly number[], size: number): Int8Array {
  const t = new Int8Array(size + 1).fill(-1);
  for (let x = size - 1, next = -1; x >= 0; x--) {
    if (values.includes(x)) next = x;
    t[x] = next;
  }
  return t;
}

function flags(values: readonly number[], size: number): Uint8Array {
  const f = new Uint8Array(size);
  for (const v of values) f[v] = 1;
  return f;
}

const scratch: CivilDate = { year: 0, month: 0, day: 0 };

function bitCount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * A parsed crontab (5 fields, or 6 with seconds first) that finds matching wall-clock times.
 * Zone and DST rules live in cronRuns.ts; this class only knows the local calendar. Instances
 * without `R` or `H` are immutable and shared between jobs; with either they belong to one job id.
 */
export class Crontab {
  readonly fields: Readonly<Record<CronFieldName, CronField>>;
  readonly hasSeconds: boolean;
  /** The hour field starts with `*`: the job follows real time across DST changes. */
  readonly followsRealTime: boolean;
  readonly isRandom: boolean;
  /** Has an `H` field: its times depend on the job id. */
  readonly isHashed: boolean;
  /** Bound to one job id (R or H): never shared between jobs. */
  readonly perJob: boolean;
  /** Day and weekday are ORed (both restricted, neither starting with `*`). */
  readonly dayOrWeekday: boolean;

  private readonly secNext: Int8Array;
  private minNext: Int8Array;
  private hourNext: Int8Array;
  private readonly monthOk: Uint8Array;
  private readonly domOk: Uint8Array;
  private readonly dowOk: Uint8Array;
  private drawnDay = NaN;

  /** Parses `text` (already known to be crontab-shaped); throws ScheduleError with a position. */
  constructor(
    readonly text: string,
    private readonly jobId = 0,
  ) {
    const expanded = NICKNAMES[text.toLowerCase()];
    if (text.startsWith('@') && expanded === undefined) {
      throw new ScheduleError(
        'expression',
        `unknown nickname '${text}'; use ${Object.keys(NICKNAMES).join(', ')}, or @<unix seconds>`,
      );
    }
    const source = expanded ?? text;
    const tokens = [...source.matchAll(/\S+/g)];
    if (tokens.length !== 5 && tokens.length !== 6) {
      throw new ScheduleError(
        'expression',
        `a crontab has 5 fields (minute hour day month weekday) or 6 (seconds first), not ${tokens.length}`,
      );
    }
    const names = tokens.length === 6 ? SIX : FIVE;
    const parsed = {} as Record<CronFieldName, CronField>;
    tokens.forEach((tok, i) => {
      parsed[names[i]!] = parseCronField(names[i]!, tok[0], expanded ? 1 : tok.index + 1, jobId);
    });
    parsed.second ??= parseCronField('second', '0', 1);
    this.fields = parsed;
    this.hasSeconds = tokens.length === 6;
    this.followsRealTime = parsed.hour.star;
    this.isRandom = parsed.minute.randomCount > 0 || parsed.hour.randomCount > 0;
    this.isHashed = Object.values(parsed).some((f) => f.hashed);
    this.perJob = this.isRandom || this.isHashed;
    this.dayOrWeekday = !parsed.day.star && !parsed.weekday.star;
    this.secNext = nextTable(parsed.second.values, 60);
    this.minNext = nextTable(parsed.minute.values, 60);
    this.hourNext = nextTable(parsed.hour.values, 24);
    this.monthOk = flags(parsed.month.values, 13);
    this.domOk = flags(parsed.day.values, 32);
    this.dowOk = flags(parsed.weekday.values, 7);
    this.checkDaysExist();
  }

  /** A schedule that can never run is a mistake worth reporting now, not a silent job. */
  private checkDaysExist(): void {
    const { day, month } = this.fields;
    if (this.dayOrWeekday || day.last) return;
    const possible = month.values.some((m) => day.values.some((d) => d <= daysInMonth(2000, m)));
    if (!possible) {
      throw new ScheduleError(
        'expression',
        `day '${day.text}' never occurs in month '${month.text}', so this crontab would never run`,
      );
    }
  }

  /** True when the day (days since epoch) matches the day, month and weekday fields. */
  private dayMatches(days: number, c: CivilDate): boolean {
    if (!this.monthOk[c.month]) return false;
    const dom = this.domOk[c.day] === 1 || (this.fields.day.last && c.day === daysInMonth(c.year, c.month));
    const dow = this.dowOk[weekdayOfDays(days)] === 1;
    return this.dayOrWeekday ? dom || dow : dom && dow;
  }

  /** True when the local date (days since epoch, and its civil form) matches the day, month and weekday fields. */
  matchesDate(days: number, c: CivilDate): boolean {
    return this.dayMatches(days, c);
  }

  /** Loads the R draws of one local date (cached for the last date asked). */
  private drawFor(days: number, c: CivilDate): void {
    if (days === this.drawnDay) return;
    this.drawnDay = days;
    const { minute, hour } = this.fields;
    if (minute.randomCount > 0) {
      const seed = drawSeed(this.jobId, c.year, c.month, c.day, 'minute');
      this.minNext = nextTable(drawDistinct(minute.values, minute.randomCount, seed), 60);
    }
    if (hour.randomCount > 0) {
      const seed = drawSeed(this.jobId, c.year, c.month, c.day, 'hour');
      this.hourNext = nextTable(drawDistinct(hour.values, hour.randomCount, seed), 24);
    }
  }

  /** The minutes and hours an R crontab uses on a local date (for tests and the dashboard). */
  drawnValues(year: number, month: number, day: number): { minutes: number[]; hours: number[] } {
    const days = daysFromCivil(year, month, day);
    this.drawFor(days, { year, month, day });
    const list = (t: Int8Array) => [...t].filter((v, i, a) => v === i && i < a.length - 1);
    return { minutes: list(this.minNext), hours: list(this.hourNext) };
  }

  /** First second of the day >= sod that matches hour/minute/second, or -1. */
  private timeOfDay(sod: number): number {
    const hN = this.hourNext;
    const mN = this.minNext;
    const sFirst = this.secNext[0]!;
    const h = (sod / 3600) | 0;
    const rem = sod - h * 3600;
    const mi = (rem / 60) | 0;
    let H = hN[h]!;
    if (H < 0) return -1;
    if (H === h) {
      let M = mN[mi]!;
      if (M === mi) {
        const S = this.secNext[rem - mi * 60]!;
        if (S >= 0) return h * 3600 + mi * 60 + S;
        M = mN[mi + 1]!;
      }
      if (M >= 0) return h * 3600 + M * 60 + sFirst;
      H = hN[h + 1]!;
      if (H < 0) return -1;
    }
    return H * 3600 + mN[0]! * 60 + sFirst;
  }

  /**
   * The first matching wall time strictly after `wall`, searching no further than `limit`
   * (wall ms); NaN when there is none.
   */
  nextWall(wall: number, limit: number): number {
    const step = this.hasSeconds ? SECOND : MINUTE;
    const x = Math.floor(wall / step) * step + step;
    let days = Math.floor(x / DAY);
    let sod = (x - days * DAY) / SECOND;
    const lastDay = Math.floor(limit / DAY);
    const c = civilFromDays(days, scratch);
    while (days <= lastDay) {
      if (!this.monthOk[c.month]) {
        // Jump to the first day of the next allowed month rather than walking day by day.
        do {
          if (++c.month > 12) {
            c.month = 1;
            c.year++;
          }
        } while (!this.monthOk[c.month]);
        c.day = 1;
        days = daysFromCivil(c.year, c.month, 1);
        sod = 0;
        continue;
      }
      if (this.dayMatches(days, c)) {
        if (this.isRandom) this.drawFor(days, c);
        const s = this.timeOfDay(sod);
        if (s >= 0) return days * DAY + s * SECOND;
      }
      days++;
      sod = 0;
      if (++c.day > daysInMonth(c.year, c.month)) {
        c.day = 1;
        if (++c.month > 12) {
          c.month = 1;
          c.year++;
        }
      }
    }
    return NaN;
  }

  /**
   * How many runs fall on one local date by the wall clock (DST ignored); `keep` can drop
   * (hour, minute) pairs, e.g. by a filter. For pointsPerDay.
   */
  countOnDay(days: number, keep?: (hour: number, minute: number, date: CivilDate) => boolean): number {
    const c = civilFromDays(days, { year: 0, month: 0, day: 0 });
    if (!this.dayMatches(days, c)) return 0;
    if (this.isRandom) this.drawFor(days, c);
    const perMinute = this.fields.second.values.length;
    let n = 0;
    for (let h = this.hourNext[0]!; h >= 0; h = this.hourNext[h + 1]!) {
      for (let m = this.minNext[0]!; m >= 0; m = this.minNext[m + 1]!) if (!keep || keep(h, m, c)) n += perMinute;
    }
    return n;
  }

  /** Like countOnDay, the minutes kept given once per hour as masks (lo: minutes 0..31, hi: 32..59). */
  countOnDayByHour(days: number, minutesOf: (hour: number, date: CivilDate) => readonly [number, number]): number {
    const c = civilFromDays(days, { year: 0, month: 0, day: 0 });
    if (!this.dayMatches(days, c)) return 0;
    if (this.isRandom) this.drawFor(days, c);
    let mLo = 0;
    let mHi = 0;
    for (let m = this.minNext[0]!; m >= 0; m = this.minNext[m + 1]!) m < 32 ? (mLo |= 1 << m) : (mHi |= 1 << (m - 32));
    let n = 0;
    for (let h = this.hourNext[0]!; h >= 0; h = this.hourNext[h + 1]!) {
      const [lo, hi] = minutesOf(h, c);
      n += bitCount(lo & mLo) + bitCount(hi & mHi);
    }
    return n * this.fields.second.values.length;
  }

  /** True when the wall time matches every field (seconds included). */
  matchesWall(wall: number): boolean {
    const days = Math.floor(wall / DAY);
    const c = civilFromDays(days, { year: 0, month: 0, day: 0 });
    if (!this.dayMatches(days, c)) return false;
    if (this.isRandom) this.drawFor(days, c);
    const sod = (wall - days * DAY) / SECOND;
    return Number.isInteger(sod) && this.timeOfDay(sod) === sod;
  }
}

/** True when whitespace-separated `tokens` look like a crontab rather than English. */
export function looksLikeCrontab(tokens: readonly string[]): boolean {
  // Letters are legal in crontab (names, L, R, H), so a character test alone would take
  // "1 day 2 hours 30 min" for a crontab; but English always has a letter or ':' in its first
  // two words, and the first two crontab fields (second/minute/hour) never hold a letter but R or H.
  // `H` and its parentheses are no English either: no unit or word is written with them.
  return tokens.length >= 2 && tokens.slice(0, 2).every((t) => /^[0-9*,/RH()-]+$/i.test(t));
}
