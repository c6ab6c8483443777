import type { ApiError } from './api.ts';
import { h, link, replace } from './dom.ts';
import { formatTime } from './format.ts';
import { browserZone } from './health.ts';
import { poll } from './poll.ts';
import type { ViewContext } from './view.ts';

interface CalendarRun {
  id: number;
  name: string;
  time: number;
  timezone: string;
  local: string;
}
interface Calendar {
  from: number;
  until: number;
  truncated: boolean;
  runs: CalendarRun[];
}

/** Redrawn this often: runs drop off the top as their time passes. */
const REFRESH_MS = 60_000;

/**
 * The account's next 24 hours (account_calendar), grouped by hour of the browser's clock. Each run
 * links to its job and says its time in the job's own zone when that differs. A list, not a table:
 * it wraps at any width, so a phone shows it without sideways scrolling.
 */
export function calendarView({ call, main }: ViewContext) {
  const zone = browserZone();
  const message = h('p', { className: 'error', attrs: { role: 'alert', id: 'calendar-error' } });
  const note = h('p', { className: 'notice', attrs: { role: 'status', id: 'calendar-note' } });
  const hours = h('div', { attrs: { id: 'calendar' } });
  replace(main, h('h1', {}, 'Next 24 hours'), h('p', { className: 'hint' }, `Every run of your jobs, in time order. Times in ${zone}.`), message, note, hours);

  async function load() {
    try {
      draw(await call<Calendar>('account_calendar'));
      replace(message);
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  function draw(calendar: Calendar) {
    replace(note, calendar.truncated ? 'Not every run is shown: at most 100 of one job and 1000 in all.' : '');
    if (!calendar.runs.length) {
      replace(hours, h('p', { attrs: { id: 'calendar-empty' } }, 'No run in the next 24 hours.'));
      return;
    }
    const groups = new Map<string, CalendarRun[]>();
    for (const run of calendar.runs) {
      // "2030-01-01 14:05:00" -> its hour, on the browser's clock.
      const hour = `${formatTime(run.time, zone).slice(0, 13)}:00`;
      const list = groups.get(hour);
      if (list) list.push(run);
      else groups.set(hour, [run]);
    }
    replace(
      hours,
      ...[...groups].map(([hour, runs]) =>
        h(
          'section',
          { className: 'calendar-hour', attrs: { 'aria-label': hour } },
          h('h2', {}, hour, h('span', { className: 'hint' }, ` · ${runs.length} run${runs.length === 1 ? '' : 's'}`)),
          h(
            'ul',
            { className: 'calendar-runs' },
            ...runs.map((r) =>
              h(
                'li',
                { attrs: { 'data-job': r.id, 'data-time': r.time } },
                h('span', { className: 'time' }, formatTime(r.time, zone).slice(11)),
                ' ',
                link(`/jobs/${r.id}`, r.name || `cron job ${r.id}`),
                r.timezone !== zone ? h('span', { className: 'hint' }, ` (${r.local.slice(11, 16)} in ${r.timezone})`) : null,
              ),
            ),
          ),
        ),
      ),
    );
  }

  return poll(load, REFRESH_MS);
}
