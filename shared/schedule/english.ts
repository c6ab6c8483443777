import { daysFromCivil, daysInMonth, HOUR, MONTH_NAMES, MINUTE, SECOND, wallFields, wallOf, weekdayOfDays } from './civil.ts';
import { monthOfWord, tokenizeEnglish, weekdayOfWord, type EnglishToken } from './englishTokens.ts';
import { ScheduleError } from './scheduleError.ts';
import type { Zone } from './zone.ts';

/**
 * An English interval, evaluated like PHP strtotime on the previous run (timelib's order: set the
 * time of day, move to the weekday, add the relative amounts, then `first/last day of`, then
 * normalise with month overflow: Jan 31 + 1 month = Mar 2 or 3).
 */
export interface Interval {
  readonly years: number;
  readonly months: number;
  readonly days: number;
  readonly hours: number;
  readonly minutes: number;
  readonly seconds: number;
  /** Explicit time of day, or null. */
  readonly time: { hour: number; minute: number; second: number } | null;
  /** A weekday (or `tomorrow`) without a time means 00:00, as in PHP. */
  readonly midnight: boolean;
  /** 0 (Sunday)..6, or null. */
  readonly weekday: number | null;
  /** `next Friday` is strictly after the current day; a bare `Friday` may be the current day. */
  readonly weekdayStrict: boolean;
  readonly dayOf: 'first' | 'last' | null;
  /** Only seconds, minutes and hours: elapsed time, not wall-clock arithmetic (docs/schedule.md). */
  readonly elapsed: boolean;
}

/** What an English expression is: an interval or a one-time wall date (or absolute instant). */
export type English =
  | { kind: 'interval'; interval: Interval }
  | { kind: 'one-time'; wall: number; offset: number | null };

type Unit = 'years' | 'months' | 'days' | 'hours' | 'minutes' | 'seconds';
// A Map, not an object: user words such as 'constructor' must not find prototype members.
const UNITS = new Map<string, [Unit, number]>();
const unit = (u: Unit, factor: number, ...words: string[]) => words.forEach((w) => UNITS.set(w, [u, factor]));
unit('seconds', 1, 'sec', 'secs', 'second', 'seconds');
unit('minutes', 1, 'min', 'mins', 'minute', 'minutes');
unit('hours', 1, 'hour', 'hours', 'hr', 'hrs');
unit('days', 1, 'day', 'days');
unit('days', 7, 'week', 'weeks');
unit('days', 14, 'fortnight', 'fortnights');
unit('months', 1, 'month', 'months');
unit('years', 1, 'year', 'years');

const FILLERS = new Set(['at', 'on', 'and']);

const EXAMPLES = "an interval looks like '15 minutes', '1 day 17:05', 'next Friday 7:05 PM', 'first day of next month 17:05'";

/** Parses English: a one-time date when it names a year, month and day, else an interval. */
export function parseEnglish(text: string): English {
  const tokens = tokenizeEnglish(text);
  const named = tokens.some(
    (t) => t.type === 'date' || (t.type === 'number' && t.digits === 4 && tokens.some((u) => u.type === 'word' && monthOfWord(u.word))),
  );
  return named ? parseOneTime(text, tokens) : { kind: 'interval', interval: parseInterval(text, tokens) };
}

const isWord = (t: EnglishToken | undefined, w: string) => t?.type === 'word' && t.word === w;

function fail(text: string, tok: EnglishToken | undefined, problem: string): never {
  const where = tok ? ` at column ${tok.pos + 1}` : '';
  throw new ScheduleError('expression', `'${text}'${where}: ${problem}`);
}

function parseOneTime(text: string, tokens: EnglishToken[]): English {
  let year: number | undefined;
  let month: number | undefined;
  let day: number | undefined;
  let time: Extract<EnglishToken, { type: 'time' }> | undefined;
  for (const t of tokens) {
    if (t.type === 'date') {
      if (year !== undefined) fail(text, t, 'a second date');
      ({ year, month, day } = t);
    } else if (t.type === 'time') {
      if (time) fail(text, t, 'a second time of day');
      time = t;
    } else if (t.type === 'number' && t.digits === 4 && !t.ordinal && year === undefined) {
      year = t.value;
    } else if (t.type === 'number' && t.digits <= 2 && day === undefined && t.value > 0) {
      day = t.value;
    } else if (t.type === 'word' && monthOfWord(t.word) !== undefined && month === undefined) {
      month = monthOfWord(t.word);
    } else if (t.type === 'word' && (weekdayOfWord(t.word) !== undefined || FILLERS.has(t.word) || t.word === 'the' || t.word === 'of')) {
      // "Friday, Feb 14, 2030 at 7:30": the weekday is redundant, the rest is filler.
    } else if (t.type !== 'comma') {
      fail(text, t, `unexpected '${t.text}' in a date (write it like 'Feb 14, 2030, 7:30')`);
    }
  }
  if (year === undefined || month === undefined || day === undefined) {
    fail(text, undefined, 'a one-time date needs a month, a day and a year');
  }
  if (month < 1 || month > 12) fail(text, undefined, `there is no month ${month}`);
  if (day < 1 || day > daysInMonth(year, month)) {
    fail(text, undefined, `${MONTH_NAMES[month - 1]} ${day}, ${year} does not exist`);
  }
  const wall = wallOf(year, month, day, time?.hour ?? 0, time?.minute ?? 0, time?.second ?? 0);
  return { kind: 'one-time', wall, offset: time?.offset ?? null };
}

function parseInterval(text: string, tokens: EnglishToken[]): Interval {
  const amounts: Record<Unit, number> = { years: 0, months: 0, days: 0, hours: 0, minutes: 0, seconds: 0 };
  let time: Interval['time'] = null;
  let midnight = false;
  let weekday: number | null = null;
  let weekdayStrict = false;
  let dayOf: Interval['dayOf'] = null;
  let i = 0;
  const every = isWord(tokens[0], 'every');
  if (every) i++;
  if (i >= tokens.length) fail(text, undefined, `expected a schedule after 'every'; ${EXAMPLES}`);

  const addUnit = (tok: EnglishToken | undefined, n: number, numberTok: EnglishToken) => {
    const u = tok?.type === 'word' ? UNITS.get(tok.word) : undefined;
    if (!u) fail(text, tok ?? numberTok, `expected a unit (seconds, minutes, hours, days, weeks, months, years) after '${numberTok.text}'`);
    if (n < 0) fail(text, numberTok, 'an interval moves forward; negative amounts are not allowed');
    amounts[u[0]] += n * u[1];
  };
  const setWeekday = (tok: EnglishToken, wd: number, strict: boolean) => {
    if (weekday !== null) fail(text, tok, 'only one weekday can be given');
    weekday = wd;
    weekdayStrict = strict;
    midnight = true;
  };

  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    const next = tokens[i + 1];
    if (t.type === 'number') {
      addUnit(next, t.value, t);
      i++;
    } else if (t.type === 'time') {
      if (time) fail(text, t, 'a second time of day');
      if (t.offset !== null) fail(text, t, 'an interval uses the job time zone; remove the offset');
      time = { hour: t.hour, minute: t.minute, second: t.second };
    } else if (t.type === 'word') {
      const w = t.word;
      const wd = weekdayOfWord(w);
      if (w === 'next' && next?.type === 'word' && weekdayOfWord(next.word) !== undefined) {
        setWeekday(next, weekdayOfWord(next.word)!, true);
        i++;
      } else if (w === 'next' && next?.type === 'word' && UNITS.has(next.word)) {
        addUnit(next, 1, t);
        i++;
      } else if ((w === 'first' || w === 'last') && isWord(next, 'day') && isWord(tokens[i + 2], 'of')) {
        if (dayOf) fail(text, t, `'${w} day of' given twice`);
        dayOf = w;
        i += 2;
        // "first day of every month" reads better than PHP's "of next month"; both mean +1 month.
        if (isWord(tokens[i + 1], 'every')) i++;
      } else if (wd !== undefined) {
        // "every Friday" means each week, like "next Friday"; a bare "Friday" may be today.
        setWeekday(t, wd, every && i === 1);
      } else if (UNITS.has(w) && isWord(tokens[i - 1], 'every')) {
        addUnit(t, 1, t);
      } else if (w === 'tomorrow') {
        amounts.days += 1;
        midnight = true;
      } else if (w === 'noon' || w === 'midnight') {
        if (time) fail(text, t, 'a second time of day');
        time = { hour: w === 'noon' ? 12 : 0, minute: 0, second: 0 };
      } else if (w === 'next') {
        fail(text, t, "'next' needs a unit or a weekday, e.g. 'next month' or 'next Friday'");
      } else if (!FILLERS.has(w)) {
        const hint = UNITS.has(w) ? `'${t.text}' needs an amount, e.g. '1 ${w}'` : `unknown word '${t.text}'; ${EXAMPLES}`;
        fail(text, t, hint);
      }
    } else if (t.type === 'date') {
      fail(text, t, 'a date here needs a year, month and day');
    }
  }

  const { years, months, days, hours, minutes, seconds } = amounts;
  const elapsed = !years && !months && !days && !time && weekday === null && !dayOf;
  const dayStep = years > 0 || months > 0 || days > 0 || (weekday !== null && weekdayStrict);
  if (elapsed && hours + minutes + seconds <= 0) fail(text, undefined, `the interval is zero; ${EXAMPLES}`);
  if (!elapsed && !dayStep) {
    const problem =
      weekday !== null
        ? "a bare weekday does not move forward from a run on that day; write 'next Friday' or '2 weeks Friday'"
        : "a time of day needs a step of days, weeks or months ('1 day 17:05') or a weekday ('next Friday 17:05')";
    fail(text, undefined, problem);
  }
  if (dayOf && !years && !months) fail(text, undefined, `'${dayOf} day of' needs 'next month' or a number of months`);
  return { years, months, days, hours, minutes, seconds, time, midnight: midnight && !time, weekday, weekdayStrict, dayOf, elapsed };
}

/**
 * The instant the interval gives when applied to `from` (the previous run) in `zone`. Wall-clock
 * results inside a DST gap move forward by the gap; repeated wall times take the earlier instant.
 */
export function applyInterval(iv: Interval, from: number, zone: Zone): number {
  if (iv.elapsed) return from + iv.hours * HOUR + iv.minutes * MINUTE + iv.seconds * SECOND;
  const wall = zone.wallAt(from);
  const f = wallFields(wall);
  let { year, month, day, hour, minute, second } = f;
  let ms = wall - Math.floor(wall / SECOND) * SECOND;
  if (iv.time) ({ hour, minute, second } = iv.time);
  else if (iv.midnight) hour = minute = second = 0;
  if (iv.time || iv.midnight) ms = 0;
  if (iv.weekday !== null) {
    // timelib's do_adjust_for_weekday, before the relative amounts are added.
    let diff = iv.weekday - weekdayOfDays(daysFromCivil(year, month, day));
    if (diff <= (iv.weekdayStrict ? 0 : -1)) diff += 7;
    day += diff;
  }
  year += iv.years;
  month += iv.months;
  day += iv.days;
  if (iv.dayOf === 'first') day = 1;
  else if (iv.dayOf === 'last') {
    day = 0;
    month++;
  }
  const target = wallOf(year, month, day, hour + iv.hours, minute + iv.minutes, second + iv.seconds) + ms;
  return zone.instantOfShifted(target);
}
