import { formatWall, MONTH_NAMES, WEEKDAY_NAMES } from './civil.ts';
import type { CronField } from './cronField.ts';
import type { Crontab } from './crontab.ts';
import type { Interval } from './english.ts';
import { compiled, type Schedule } from './schedule.ts';

/**
 * A sentence for people, e.g. "At 07:05 on Monday (Europe/London)", "Every 15 minutes",
 * "Once, at 2030-02-14 07:30 (UTC)", "Only when run manually". The zone is named whenever the
 * times depend on it; a filter is quoted at the end.
 */
export function describeSchedule(schedule: Schedule): string {
  const s = compiled(schedule);
  const zone = ` (${s.timezone})`;
  let text: string;
  switch (s.kind) {
    case 'manual':
      return 'Only when run manually';
    case 'one-time':
    case 'timestamp':
      text = `Once, at ${formatWall(s.zone.wallAt(s.at!))}${zone}`;
      break;
    case 'crontab':
      text = describeCron(s.cron!);
      if (s.filter || !(['hour', 'day', 'month', 'weekday'] as const).every((f) => s.cron!.fields[f].text === '*')) text += zone;
      break;
    case 'interval':
      text = describeInterval(s.interval!);
      if (s.filter || !s.interval!.elapsed) text += zone;
      break;
  }
  return s.filter ? `${text}, only when ${s.filter}` : text;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** "a", "a and b", "a, b and c" */
function list(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

const plural = (n: number, unit: string) => (n === 1 ? unit : `${n} ${unit}s`);

/** Runs of 3+ consecutive values read as "9 through 17": "0, 15 and 30 through 35". */
function compact(values: readonly number[], show: (v: number) => string = String): string {
  const parts: string[] = [];
  for (let i = 0; i < values.length; ) {
    let j = i;
    while (j + 1 < values.length && values[j + 1] === values[j]! + 1) j++;
    if (j - i >= 2) parts.push(`${show(values[i]!)} through ${show(values[j]!)}`);
    else for (let k = i; k <= j; k++) parts.push(show(values[k]!));
    i = j + 1;
  }
  return list(parts);
}

function ordinal(n: number): string {
  const s = n % 100 >= 11 && n % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${s}`;
}

/** "*\/n" -> n, else null */
function starStep(f: CronField): number | null {
  const m = /^\*\/(\d+)$/.exec(f.text);
  return m ? Number(m[1]) : null;
}

/** One time-of-day field (second, minute or hour) as a phrase, or '' when it adds nothing. */
function timeField(f: CronField, unit: string): string {
  if (f.randomCount > 0) {
    const what = f.randomCount === 1 ? `a random ${unit}` : `${f.randomCount} random ${unit}s`;
    return f.text.includes(',') ? `at ${what} from ${compact(f.values)}` : `at ${what}`;
  }
  if (f.text === '*') return unit === 'hour' ? '' : `every ${unit}`;
  const step = starStep(f);
  if (step !== null) return `every ${plural(step, unit)}`;
  const units = f.values.length === 1 ? unit : `${unit}s`;
  if (unit === 'hour') return `during ${units} ${compact(f.values)}`;
  if (f.name === 'second' && f.values.length === 1 && f.values[0] === 0) return '';
  return `at ${units} ${compact(f.values)}`;
}

function describeTimes(cron: Crontab): string {
  const { second, minute, hour } = cron.fields;
  const explicit = (f: CronField) => f.randomCount === 0 && !f.text.includes('*');
  if (explicit(minute) && explicit(hour) && (explicit(second) || !cron.hasSeconds)) {
    const count = second.values.length * minute.values.length * hour.values.length;
    if (count <= 6) {
      const times: string[] = [];
      for (const h of hour.values) {
        for (const m of minute.values) {
          for (const s of second.values) times.push(`${pad(h)}:${pad(m)}${cron.hasSeconds && s ? `:${pad(s)}` : ''}`);
        }
      }
      return `At ${list(times)}`;
    }
  }
  const secondsCover = second.text === '*' || starStep(second) !== null;
  const minutes = secondsCover && minute.text === '*' ? '' : timeField(minute, 'minute');
  const parts = [
    cron.hasSeconds ? timeField(second, 'second') : '',
    hour.text === '*' && explicit(minute) ? `${minutes} past every hour` : minutes,
    timeField(hour, 'hour'),
  ].filter(Boolean);
  const text = parts.join(', ') || 'every minute';
  return text[0]!.toUpperCase() + text.slice(1);
}

const WEEK_ORDER = [1, 2, 3, 4, 5, 6, 0];

function weekdays(f: CronField): string {
  const days = WEEK_ORDER.filter((d) => f.values.includes(d));
  const first = WEEK_ORDER.indexOf(days[0]!);
  const contiguous = days.length >= 3 && days.every((d, i) => WEEK_ORDER[first + i] === d);
  const names = days.map((d) => WEEKDAY_NAMES[d]!);
  return contiguous ? `${names[0]} through ${names[names.length - 1]}` : list(names);
}

function monthDays(f: CronField): string {
  const step = starStep(f);
  if (step !== null) return `every ${ordinal(step)} day of the month`;
  const days = compact(f.values, ordinal);
  const count = f.values.length + (f.last ? 1 : 0);
  return `the ${f.last ? list([days, 'last'].filter(Boolean)) : days} ${count === 1 ? 'day' : 'days'} of the month`;
}

function describeCron(cron: Crontab): string {
  const { day, month, weekday } = cron.fields;
  let text = describeTimes(cron);
  const hasDay = day.text !== '*';
  const hasWeekday = weekday.text !== '*';
  if (hasDay && hasWeekday) {
    text += cron.dayOrWeekday
      ? ` on ${monthDays(day)} or on ${weekdays(weekday)}`
      : ` on ${monthDays(day)}, if it is a ${weekdays(weekday).replace(' and ', ' or ')}`;
  } else if (hasDay && day.values.length === 1 && !day.last && month.values.length === 1) {
    return `${text} on ${MONTH_NAMES[month.values[0]! - 1]} ${day.values[0]}`;
  } else if (hasDay) {
    text += ` on ${monthDays(day)}`;
  } else if (hasWeekday) {
    text += ` on ${weekdays(weekday)}`;
  }
  if (month.text !== '*') text += ` in ${compact(month.values, (m) => MONTH_NAMES[m - 1]!)}`;
  return text;
}

function describeInterval(iv: Interval): string {
  const amounts: string[] = [];
  const add = (n: number, unit: string) => n > 0 && amounts.push(`${n} ${unit}${n === 1 ? '' : 's'}`);
  add(iv.years, 'year');
  add(iv.months, 'month');
  if (iv.days > 0 && iv.days % 7 === 0) add(iv.days / 7, 'week');
  else add(iv.days, 'day');
  add(iv.hours, 'hour');
  add(iv.minutes, 'minute');
  add(iv.seconds, 'second');
  const weekday = iv.weekday === null ? '' : WEEKDAY_NAMES[iv.weekday]!;
  let text: string;
  if (iv.dayOf) {
    const months = iv.years * 12 + iv.months;
    text = `On the ${iv.dayOf} day of every ${plural(months, 'month')}`;
  } else if (weekday && amounts.length === 0) {
    text = `Every ${weekday}`;
  } else {
    // "Every hour", but "Every 1 minute and 30 seconds".
    const amount = amounts.length === 1 ? amounts[0]!.replace(/^1 /, '') : list(amounts);
    text = `Every ${amount}${weekday ? ` on ${weekday}` : ''}`;
  }
  const time = iv.time ?? (iv.midnight ? { hour: 0, minute: 0, second: 0 } : null);
  if (time) text += ` at ${pad(time.hour)}:${pad(time.minute)}${time.second ? `:${pad(time.second)}` : ''}`;
  return text;
}
