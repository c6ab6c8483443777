import type { ApiError } from './api.ts';
import { h, link, replace } from './dom.ts';
import { formatTime, matches, resultSummary, statusGroup, statusText, type JobRecord, type LogResult } from './format.ts';
import type { ViewContext } from './view.ts';
import { poll } from './poll.ts';

interface Group {
  id: number;
  name: string;
}

/** Last results cost one call per job: at most this many are fetched per refresh. */
const LAST_RESULTS_MAX = 100;

/** The account's jobs, filtered in the page, refreshed every 5 seconds while the tab shows. */
export function jobListView({ call, main }: ViewContext) {
  let jobs: JobRecord[] = [];
  let groups: Group[] = [];
  const lastResults = new Map<number, LogResult | null>();
  const resultCells = new Map<number, HTMLElement>();

  const text = h('input', { attrs: { type: 'search', id: 'filter-text', placeholder: 'Filter by id, name, URL, schedule' }, on: { input: () => draw() } });
  const group = h('select', { attrs: { id: 'filter-group' }, on: { change: () => draw() } });
  const status = h(
    'select',
    { attrs: { id: 'filter-status' }, on: { change: () => draw() } },
    h('option', { value: '' }, 'any status'),
    h('option', { value: 'enabled' }, 'enabled'),
    h('option', { value: 'paused' }, 'paused'),
    h('option', { value: 'disabled' }, 'disabled'),
  );
  const message = h('p', { className: 'error', attrs: { role: 'alert' } });
  const updated = h('span', { className: 'hint' });
  const body = h('tbody');
  replace(
    main,
    h('div', { className: 'toolbar' }, text, group, status, link('/jobs/new', 'New job'), updated),
    message,
    h(
      'table',
      { attrs: { id: 'jobs' } },
      h('thead', {}, h('tr', {}, ...['ID', 'Name', 'URL', 'Schedule', 'Status', 'Next run', 'Failures', 'Last result'].map((t) => h('th', {}, t)))),
      body,
    ),
  );

  function drawGroups() {
    const chosen = group.value;
    replace(group, h('option', { value: '' }, 'any group'), h('option', { value: 'none' }, 'no group'), ...groups.map((g) => h('option', { value: String(g.id) }, g.name)));
    group.value = chosen;
  }

  function lastResultText(id: number) {
    const r = lastResults.get(id);
    return r === undefined ? '…' : r === null ? 'no run yet' : `${resultSummary(r)} at ${formatTime(r.time)}`;
  }

  function draw() {
    const filter = { text: text.value, group: group.value, status: status.value };
    const shown = jobs.filter((j) => matches(j, filter));
    resultCells.clear();
    replace(
      body,
      ...shown.map((j) => {
        const last = h('td', { className: 'last-result' }, lastResultText(j.id));
        resultCells.set(j.id, last);
        return h(
          'tr',
          { attrs: { 'data-job-id': j.id } },
          h('td', {}, link(`/jobs/${j.id}`, String(j.id))),
          h('td', { className: 'job-name' }, link(`/jobs/${j.id}`, j.name || '(no name)')),
          h('td', { className: 'url' }, j.url),
          h('td', {}, j.expression, h('span', { className: 'hint' }, ` ${j.timezone}`)),
          h('td', { className: `status status-${statusGroup(j.status)}` }, statusText(j.status)),
          h('td', { className: 'time' }, formatTime(j.nextRun)),
          h('td', { className: j.fail > 0 ? 'failing' : '' }, String(j.fail)),
          last,
        );
      }),
    );
    if (!shown.length) body.append(h('tr', {}, h('td', { attrs: { colspan: 8 }, className: 'hint' }, jobs.length ? 'No job matches the filter.' : 'No cron jobs yet.')));
    return shown;
  }

  /** One cron_logs call per shown job, one at a time, so a low rate limit paces them instead of refusing them. */
  async function refreshLastResults(shown: JobRecord[]) {
    for (const job of shown.slice(0, LAST_RESULTS_MAX)) {
      if (stopped || document.hidden) return;
      const logs = await call<{ result: LogResult }[]>('cron_logs', { id: job.id, limit: 1 }).catch(() => undefined);
      if (!logs) continue;
      lastResults.set(job.id, logs[0]?.result ?? null);
      const cell = resultCells.get(job.id);
      if (cell) replace(cell, lastResultText(job.id));
    }
  }

  let stopped = false;
  const stop = poll(async () => {
    try {
      [jobs, groups] = [await call<JobRecord[]>('cron_list', { limit: 1000 }), await call<Group[]>('group_list')];
      replace(message);
    } catch (error) {
      replace(message, `Could not load the jobs: ${(error as ApiError).message}`);
      return;
    }
    drawGroups();
    const shown = draw();
    replace(updated, `updated ${formatTime(Date.now() / 1000)}`);
    await refreshLastResults(shown);
  });
  return () => {
    stopped = true;
    stop();
  };
}
