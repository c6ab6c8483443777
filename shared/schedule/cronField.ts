import { spreadHash } from './random.ts';
import { ScheduleError } from './scheduleError.ts';

/** One crontab field, parsed. */
export interface CronField {
  readonly name: CronFieldName;
  /** The field as written. */
  readonly text: string;
  /** Allowed values, ascending (weekday 7 folded into 0). For an R field: the pool drawn from. */
  readonly values: readonly number[];
  /** Starts with `*` (or is `?`): Vixie treats it as unrestricted for the day/weekday rule. */
  readonly star: boolean;
  /** `L` present (day field only): the last day of the month. */
  readonly last: boolean;
  /** How many values an R field draws each day; 0 when the field is not random. */
  readonly randomCount: number;
  /** Holds an `H`: its values depend on the job id. */
  readonly hashed: boolean;
}

export type CronFieldName = 'second' | 'minute' | 'hour' | 'day' | 'month' | 'weekday';

interface Range {
  min: number;
  max: number;
  names?: readonly string[];
  nameBase?: number;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

const RANGES: Record<CronFieldName, Range> = {
  second: { min: 0, max: 59 },
  minute: { min: 0, max: 59 },
  hour: { min: 0, max: 23 },
  day: { min: 1, max: 31 },
  month: { min: 1, max: 12, names: MONTHS, nameBase: 1 },
  weekday: { min: 0, max: 7, names: WEEKDAYS, nameBase: 0 },
};

/**
 * Parses one field of a crontab. `column` (1-based) is where the field starts in the whole
 * expression, so errors can point at it; `jobId` places the field's `H` items.
 */
export function parseCronField(name: CronFieldName, text: string, column: number, jobId = 0): CronField {
  const range = RANGES[name];
  const fail = (problem: string): never => {
    throw new ScheduleError('expression', `${name} field '${text}' at column ${column}: ${problem}`);
  };

  let randomCount = 0;
  let listText = text;
  const random = /^R(\d*)(?:,(.*))?$/i.exec(text);
  if (random) {
    if (name !== 'minute' && name !== 'hour') fail('R (random) is allowed only in the minute and hour fields');
    randomCount = random[1] === '' ? 1 : Number(random[1]);
    if (randomCount < 1) fail(`R${random[1]} draws no value; write R or Rn with n of at least 1`);
    listText = random[2] ?? '*';
    if (listText === '') fail('R, needs a list of values after the comma (e.g. R,1-7)');
  }

  const values = new Set<number>();
  let last = false;
  let hashed = false;
  for (const item of listText.split(',')) {
    if (item === '') fail('an empty list item (two commas, or a comma at an end)');
    if (name === 'day' && item.toUpperCase() === 'L') {
      last = true;
      continue;
    }
    const h = HASHED.exec(item);
    if (h && random) fail('H cannot be combined with R in one field');
    if (h) hashed = true;
    const expanded = h ? expandHashed(h, range, name, spreadHash(jobId, name), fail) : expandItem(item, range, name, fail);
    for (const v of expanded) values.add(name === 'weekday' && v === 7 ? 0 : v);
  }
  const sorted = [...values].sort((a, b) => a - b);
  if (randomCount > sorted.length) {
    fail(`R${randomCount} draws ${randomCount} distinct values but only ${sorted.length} are allowed`);
  }
  return {
    name,
    text,
    values: sorted,
    star: !random && (text.startsWith('*') || text === '?'),
    last,
    randomCount,
    hashed,
  };
}

/** `H`, `H(a-b)`, `H/n`, `H(a-b)/n` (Jenkins' stable spread). */
const HASHED = /^H(?:\(([^()-]+)-([^()-]+)\))?(?:\/(.*))?$/i;

/**
 * Places an `H` item by the job's hash: one value of the range, or for `/n` the series of step n
 * that starts at an offset below n. A bare `H` in the day field stays within 1-28, so it exists
 * in every month; in the weekday field it means Sunday to Saturday.
 */
function expandHashed(m: RegExpExecArray, range: Range, name: CronFieldName, hash: number, fail: (p: string) => never): number[] {
  const [item, fromText, toText, stepText] = m;
  let lo = range.min;
  let hi = name === 'weekday' ? 6 : name === 'day' ? 28 : range.max;
  if (fromText !== undefined) {
    lo = parseValue(fromText, range, name, fail);
    hi = parseValue(toText!, range, name, fail);
    if (hi < lo) fail(`the range in '${item}' goes backwards`);
  }
  const span = hi - lo + 1;
  if (stepText === undefined) return [lo + (hash % span)];
  if (!/^\d+$/.test(stepText)) fail(`the step '/${stepText}' must be a whole number`);
  const step = Number(stepText);
  if (step < 1) fail('a step of 0 never advances; use 1 or more');
  if (step > range.max) fail(`the step /${step} exceeds ${range.max}`);
  const out: number[] = [];
  for (let v = lo + (hash % Math.min(step, span)); v <= hi; v += step) out.push(v);
  return out;
}

function expandItem(item: string, range: Range, name: CronFieldName, fail: (p: string) => never): number[] {
  const m = /^([^/-]+)(?:-([^/-]+))?(?:\/([^/-]*))?$/.exec(item);
  if (!m) fail(`'${item}' is not a value, range (a-b) or step (*/n, a-b/n)`);
  const [, startText, endText, stepText] = m;
  let step = 1;
  if (stepText !== undefined) {
    if (!/^\d+$/.test(stepText)) fail(`the step '/${stepText}' must be a whole number`);
    step = Number(stepText);
    if (step < 1) fail('a step of 0 never advances; use 1 or more');
    if (step > range.max) fail(`the step /${step} exceeds ${range.max}`);
  }
  let start: number;
  let end: number;
  if (startText === '*' || startText === '?') {
    if (endText !== undefined) fail(`'${item}': * cannot start a range`);
    if (startText === '?' && (name !== 'day' && name !== 'weekday')) fail('? is allowed only in the day and weekday fields');
    start = name === 'weekday' ? 0 : range.min;
    end = name === 'weekday' ? 6 : range.max;
  } else {
    start = parseValue(startText!, range, name, fail);
    // `a/n` means from a to the end of the field, as in Vixie cron.
    end = endText !== undefined ? parseValue(endText, range, name, fail) : stepText !== undefined ? range.max : start;
    if (end < start) fail(`the range ${startText}-${endText} goes backwards; write it as a list instead`);
  }
  const out: number[] = [];
  for (let v = start; v <= end; v += step) out.push(v);
  return out;
}

function parseValue(text: string, range: Range, name: CronFieldName, fail: (p: string) => never): number {
  if (/^\d+$/.test(text)) {
    const v = Number(text);
    if (v < range.min || v > range.max) fail(`${v} is outside ${range.min}-${range.max}`);
    return v;
  }
  if (range.names && /^[a-z]+$/i.test(text)) {
    const i = range.names.indexOf(text.toLowerCase());
    if (i >= 0) return i + range.nameBase!;
    const list = name === 'month' ? 'Jan..Dec or 1-12' : 'Sun..Sat or 0-7';
    fail(`unknown ${name} name '${text}' (use ${list})`);
  }
  if (name === 'day' && text.toUpperCase() === 'L') fail('L cannot be part of a range or step');
  return fail(`'${text}' is not a value, range (a-b) or step (*/n, a-b/n)`);
}
