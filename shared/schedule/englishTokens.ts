import { ScheduleError } from './scheduleError.ts';

/** A token of an English schedule; `pos` is the 0-based offset in the text. */
export type EnglishToken =
  | { type: 'number'; pos: number; text: string; value: number; digits: number; ordinal: boolean }
  | { type: 'word'; pos: number; text: string; word: string }
  | { type: 'time'; pos: number; text: string; hour: number; minute: number; second: number; offset: number | null }
  | { type: 'date'; pos: number; text: string; year: number; month: number; day: number }
  | { type: 'comma'; pos: number; text: string };

const RULES: { re: RegExp; make: (m: RegExpExecArray, pos: number) => EnglishToken | null }[] = [
  { re: /\s+/y, make: () => null },
  {
    re: /(\d{4})-(\d{1,2})-(\d{1,2})T?/y,
    make: (m, pos) => ({ type: 'date', pos, text: m[0], year: +m[1]!, month: +m[2]!, day: +m[3]! }),
  },
  {
    re: /(\d{1,2})\/(\d{1,2})\/(\d{4})/y,
    make: (m, pos) => ({ type: 'date', pos, text: m[0], year: +m[3]!, month: +m[1]!, day: +m[2]! }),
  },
  {
    // 17:05, 7:05:30, 7:05 PM, 7:05pm, and an ISO offset glued to the time (07:30Z, 07:30+01:00).
    re: /(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?(?:\s*([ap])\.?m\.?(?![a-z]))?(Z|[+-]\d{2}:?\d{2})?/iy,
    make: (m, pos) => time(m[0], pos, +m[1]!, +m[2]!, m[3] ? +m[3] : 0, m[4], m[5]),
  },
  { re: /(\d{1,2})\s*([ap])\.?m\.?(?![a-z])/iy, make: (m, pos) => time(m[0], pos, +m[1]!, 0, 0, m[2], undefined) },
  {
    re: /([+-]?)(\d+)(st|nd|rd|th)?/iy,
    make: (m, pos) => ({
      type: 'number',
      pos,
      text: m[0],
      value: Number(m[1] + m[2]!),
      digits: m[2]!.length,
      ordinal: m[3] !== undefined,
    }),
  },
  { re: /[a-z]+\.?/iy, make: (m, pos) => ({ type: 'word', pos, text: m[0], word: m[0].toLowerCase().replace('.', '') }) },
  { re: /,/y, make: (m, pos) => ({ type: 'comma', pos, text: m[0] }) },
];

function time(
  text: string,
  pos: number,
  hour: number,
  minute: number,
  second: number,
  ampm: string | undefined,
  zone: string | undefined,
): EnglishToken {
  const where = `'${text.trim()}' at column ${pos + 1}`;
  if (ampm) {
    if (hour < 1 || hour > 12) throw new ScheduleError('expression', `${where}: a 12-hour clock runs from 1 to 12`);
    hour = (hour % 12) + (ampm.toLowerCase() === 'p' ? 12 : 0);
  } else if (hour > 23) {
    throw new ScheduleError('expression', `${where}: the hour must be 0-23`);
  }
  if (minute > 59 || second > 59) throw new ScheduleError('expression', `${where}: minutes and seconds must be 0-59`);
  let offset: number | null = null;
  if (zone) {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
    offset = z ? (z[1] === '-' ? -1 : 1) * (+z[2]! * 60 + +z[3]!) * 60000 : 0;
  }
  return { type: 'time', pos, text, hour, minute, second, offset };
}

/** Splits English schedule text into tokens; throws ScheduleError at the first unknown character. */
export function tokenizeEnglish(text: string): EnglishToken[] {
  const out: EnglishToken[] = [];
  let pos = 0;
  outer: while (pos < text.length) {
    for (const rule of RULES) {
      rule.re.lastIndex = pos;
      const m = rule.re.exec(text);
      if (m && m[0].length > 0) {
        const tok = rule.make(m, pos);
        if (tok) out.push(tok);
        pos += m[0].length;
        continue outer;
      }
    }
    throw new ScheduleError('expression', `'${text}' at column ${pos + 1}: unexpected '${text[pos]}'`);
  }
  return out;
}

// Maps, not objects: user words such as 'constructor' must not find prototype members.
const MONTH_WORDS = new Map<string, number>();
[
  ['january', 'jan'], ['february', 'feb'], ['march', 'mar'], ['april', 'apr'], ['may'], ['june', 'jun'],
  ['july', 'jul'], ['august', 'aug'], ['september', 'sep', 'sept'], ['october', 'oct'],
  ['november', 'nov'], ['december', 'dec'],
].forEach((names, i) => names.forEach((n) => MONTH_WORDS.set(n, i + 1)));

const WEEKDAY_WORDS = new Map<string, number>();
[
  ['sunday', 'sun'], ['monday', 'mon'], ['tuesday', 'tue', 'tues'], ['wednesday', 'wed'],
  ['thursday', 'thu', 'thur', 'thurs'], ['friday', 'fri'], ['saturday', 'sat'],
].forEach((names, i) => names.forEach((n) => WEEKDAY_WORDS.set(n, i)));

/** 1..12 for a month name or abbreviation, else undefined. */
export const monthOfWord = (w: string): number | undefined => MONTH_WORDS.get(w);
/** 0 (Sunday)..6 for a weekday name or abbreviation, else undefined. */
export const weekdayOfWord = (w: string): number | undefined => WEEKDAY_WORDS.get(w);
