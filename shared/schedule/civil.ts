/**
 * Proleptic Gregorian calendar arithmetic on plain numbers. A "wall" value is the local clock
 * reading encoded as milliseconds since 1970-01-01T00:00 of that clock (no zone attached), so the
 * same integer maths serves UTC and every zone. Hinnant's days/civil algorithms: no Date objects
 * in the hot path.
 */

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** Days since 1970-01-01 of the civil date (month 1..12; day may overflow like Date.UTC). */
export function daysFromCivil(y: number, m: number, d: number): number {
  // Normalise the month first so callers can pass m = 13 or m = 0 (PHP-style overflow).
  y += Math.floor((m - 1) / 12);
  m = ((((m - 1) % 12) + 12) % 12) + 1;
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The civil date of a day number; written into `out` to keep the hot path allocation-free. */
export interface CivilDate {
  year: number;
  month: number;
  day: number;
}

export function civilFromDays(days: number, out: CivilDate): CivilDate {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  out.year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  out.month = month;
  out.day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  return out;
}

/** 0 = Sunday .. 6 = Saturday (1970-01-01 was a Thursday). */
export function weekdayOfDays(days: number): number {
  return (((days + 4) % 7) + 7) % 7;
}

export function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(y: number, m: number): number {
  return m === 2 && isLeapYear(y) ? 29 : MONTH_DAYS[m - 1]!;
}

/** Wall milliseconds of a civil date and time; every part may overflow (normalised like PHP). */
export function wallOf(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number {
  return daysFromCivil(y, mo, 1) * DAY + (d - 1) * DAY + h * HOUR + mi * MINUTE + s * SECOND;
}

/** The broken-down fields of a wall value. */
export interface WallFields extends CivilDate {
  hour: number;
  minute: number;
  second: number;
  /** 0 = Sunday .. 6 = Saturday */
  weekday: number;
}

export function wallFields(wall: number): WallFields {
  const days = Math.floor(wall / DAY);
  const ms = wall - days * DAY;
  const out = civilFromDays(days, { year: 0, month: 0, day: 0 }) as WallFields;
  out.hour = Math.floor(ms / HOUR);
  out.minute = Math.floor((ms % HOUR) / MINUTE);
  out.second = Math.floor((ms % MINUTE) / SECOND);
  out.weekday = weekdayOfDays(days);
  return out;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** "2030-02-14 07:30" (seconds only when not zero), for people. */
export function formatWall(wall: number): string {
  const f = wallFields(wall);
  const base = `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)} ${pad(f.hour)}:${pad(f.minute)}`;
  return f.second ? `${base}:${pad(f.second)}` : base;
}

export const WEEKDAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
export const MONTH_NAMES = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
];
