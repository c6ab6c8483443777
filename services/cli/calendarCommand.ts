import { apiFrom } from './apiClient.ts';
import { noPositionals, parse } from './args.ts';
import type { Io } from './io.ts';
import { json, table } from './output.ts';

export const CALENDAR_USAGE = `usage:
  tock calendar [--hours N] [--json]   every run of your jobs in the next N hours (1-24, default 24), in time order:
                                       the job's own wall-clock time, its id and name
At most 100 runs of one job and 1000 in all; a note says when runs were left out.
Connection: --url (TOCK_URL, default http://127.0.0.1:8080) and --token (TOCK_TOKEN).`;

interface Calendar {
  from: number;
  until: number;
  truncated: boolean;
  runs: { id: number; name: string; time: number; timezone: string; local: string }[];
}

/** `tock calendar`: account_calendar, one line per run. */
export async function calendarCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, { hours: { type: 'string' } }, CALENDAR_USAGE);
  noPositionals(parsed, CALENDAR_USAGE);
  const api = apiFrom(parsed, io.env, CALENDAR_USAGE);
  const hours = parsed.values.hours as string | undefined;
  const calendar = await api<Calendar>('account_calendar', hours === undefined ? {} : { hours });
  if (parsed.values.json === true) {
    json(io.out, calendar);
    return 0;
  }
  table(io.out, ['time', 'id', 'name'], calendar.runs.map((r) => [r.local, r.id, r.name]));
  if (calendar.truncated) io.err('more runs than shown: at most 100 of one job and 1000 in all (try --hours with fewer hours)');
  return 0;
}
