import type { ApiError } from './api.ts';
import { h, link, replace } from './dom.ts';
import { formatTime, matches, resultSummary } from './format.ts';
import { browserZone, healthState, outcomeMarks, relativeTime, sortJobs, STATE_TEXT, totals, type HealthState, type JobWithHealth, type SortKey } from './health.ts';
import type { ViewContext } from './view.ts';
import { poll } from './poll.ts';
import { hourlyChart } from './charts.ts';
import { bulkActions } from './bulkActions.ts';

/** The table's columns: heading (the cell's label on a phone, where rows are cards), sort key, class. */
const COLUMNS: [string, SortKey, string][] = [
  ['Name', 'name', 'name'],
  ['State', 'state', 'state'],
  ['Last 20 runs', 'failures', 'marks'],
  ['Last run', 'lastRun', 'last'],
  ['Next run', 'nextRun', 'next'],
  ['Schedule', 'schedule', 'schedule'],
  ['URL', 'url', 'url'],
  ['Failures', 'fail', 'fail'],
];

/** An absolute time with its zone named, for a relative time's hover. */
const absolute = (t: number | null | undefined, zone: string) => (t ? `${formatTime(t, zone)} (${zone})` : '');

/** A time element: relative text, the absolute one (with its zone) on hover. */
function timeCell(t: number | null | undefined, now: number, zone: string) {
  if (!t) return h('span', { className: 'hint' }, '-');
  return h('time', { attrs: { datetime: new Date(t * 1000).toISOString(), title: absolute(t, zone) } }, relativeTime(t, now));
}

function marks(outcomes: number[] | null | undefined) {
  const list = outcomeMarks(outcomes);
  if (!list.length) return h('span', { className: 'hint' }, outcomes ? 'no run yet' : '-');
  const failed = list.filter((o) => o === 1).length;
  const skipped = list.filter((o) => o === 2).length;
  const label = `last ${list.length} runs, oldest first: ${list.length - failed - skipped} succeeded, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
  return h('span', { className: 'marks', attrs: { role: 'img', 'aria-label': label, title: label } }, ...list.map((o) => h('span', { className: `mark mark-${o === 0 ? 'ok' : o === 2 ? 'skipped' : 'failed'}` })));
}

/** The cells of a job's row, each with a key of what it shows: a refresh touches only cells whose key changed. */
function cells(j: JobWithHealth, now: number, zone: string): [string, () => Node][] {
  const state = healthState(j, now);
  const last = j.lastResult;
  return [
    [`${j.id}|${j.name}`, () => link(`/jobs/${j.id}`, j.name || `(no name) #${j.id}`)],
    [state, () => h('span', { className: `state state-${state}` }, STATE_TEXT[state])],
    [JSON.stringify(j.recentOutcomes), () => marks(j.recentOutcomes)],
    [last ? `${last.id}|${relativeTime(last.time, now)}` : '-', () => (last ? h('span', {}, timeCell(last.time, now, zone), h('span', { className: `result result-${last.status}` }, ` ${resultSummary(last)}`)) : h('span', { className: 'hint' }, 'no run yet'))],
    [`${j.nextRun}|${relativeTime(j.nextRun, now)}`, () => timeCell(j.nextRun, now, zone)],
    [`${j.expression}|${j.timezone}`, () => h('span', {}, j.expression, h('span', { className: 'hint' }, ` ${j.timezone}`))],
    [j.url, () => h('span', {}, j.url)],
    [String(j.fail), () => h('span', { className: j.fail > 0 ? 'failing' : '' }, String(j.fail))],
  ];
}

/** The account's jobs from one cron_list call, filtered and sorted in the page, refreshed every 5 s while the tab shows. */
export function jobListView({ call, main }: ViewContext) {
  let jobs: JobWithHealth[] = [];
  let sortKey: SortKey = 'name';
  let descending = false;
  const zone = browserZone();
  const rows = new Map<number, { tr: HTMLTableRowElement; select: HTMLTableCellElement; cells: HTMLTableCellElement[]; keys: string[] }>();
  let shown: JobWithHealth[] = [];
  const bulk = bulkActions({
    call,
    shown: () => shown,
    done(records, deleted) {
      const gone = new Set(deleted);
      const fresh = new Map(records.map((r) => [r.id, r]));
      jobs = jobs.filter((j) => !gone.has(j.id)).map((j) => fresh.get(j.id) ?? j);
      drawGroups();
      draw();
    },
    redraw: () => draw(),
  });

  const text = h('input', { attrs: { type: 'search', id: 'filter-text', placeholder: 'id, name, URL, schedule' }, on: { input: () => draw() } });
  const group = h('select', { attrs: { id: 'filter-group' }, on: { change: () => draw() } });
  // A link from the groups page (#/?group=ID) opens the list on that group's jobs.
  let linkedGroup = new URLSearchParams(location.hash.split('?')[1] ?? '').get('group') ?? '';
  const state = h('select', { attrs: { id: 'filter-state' }, on: { change: () => draw() } }, h('option', { value: '' }, 'any state'), ...Object.entries(STATE_TEXT).map(([v, t]) => h('option', { value: v }, t)));
  const message = h('p', { className: 'error', attrs: { role: 'alert' } });
  const updated = h('span', { className: 'hint', attrs: { id: 'updated' } });
  const summary = h('section', { className: 'totals', attrs: { id: 'totals', 'aria-label': 'Account totals' } });
  const hourly = hourlyChart(zone);
  const body = h('tbody');
  const heads = COLUMNS.map(([title, key], i) =>
    h('th', { attrs: { scope: 'col', 'data-col': i } }, h('button', { className: 'sort', attrs: { type: 'button', 'data-sort': key }, on: { click: () => sortBy(key) } }, title)),
  );
  const label = (forId: string, t: string) => h('label', { attrs: { for: forId } }, t);
  const table = h(
    'table',
    { className: 'cards', attrs: { id: 'jobs' } },
    h('caption', { className: 'visually-hidden' }, 'Cron jobs; the column buttons sort'),
    h('thead', {}, h('tr', {}, h('th', { className: 'col-select', attrs: { scope: 'col' } }, bulk.all), ...heads)),
    body,
  );
  replace(
    main,
    h('h1', {}, 'Cron jobs'),
    summary,
    hourly.root,
    h('div', { className: 'toolbar' }, h('span', { className: 'filter' }, label('filter-text', 'Search'), text), h('span', { className: 'filter' }, label('filter-group', 'Group'), group), h('span', { className: 'filter' }, label('filter-state', 'State'), state), link('/jobs/new', 'New job'), bulk.toggle, updated),
    bulk.bar,
    message,
    table,
  );

  function sortBy(key: SortKey) {
    descending = key === sortKey ? !descending : false;
    sortKey = key;
    draw();
  }

  function drawGroups() {
    const chosen = linkedGroup || group.value;
    linkedGroup = '';
    const names = new Map<number, string>();
    for (const j of jobs) if (j.group !== null) names.set(j.group, j.groupName ?? `group ${j.group}`);
    replace(group, h('option', { value: '' }, 'any group'), h('option', { value: 'none' }, 'no group'), ...[...names].sort((a, b) => a[1].localeCompare(b[1])).map(([id, name]) => h('option', { value: String(id) }, name)));
    group.value = chosen;
  }

  function drawTotals(now: number) {
    const t = totals(jobs, now);
    const chip = (s: HealthState) =>
      h('button', { className: `chip state-${s}`, attrs: { type: 'button', 'data-state': s, 'aria-pressed': state.value === s }, on: { click: () => { state.value = state.value === s ? '' : s; draw(); } } }, `${t.byState[s]} ${STATE_TEXT[s]}`);
    replace(
      summary,
      h('span', {}, `${jobs.length} jobs:`),
      ...(Object.keys(STATE_TEXT) as HealthState[]).filter((s) => t.byState[s] > 0 || s === 'failing').map(chip),
      h('span', { attrs: { id: 'totals-24h' } }, `last 24 h: ${t.runs} runs, ${t.failures} failed`),
    );
  }

  /** Updates the rows in place: unchanged cells (and the focus in them) stay, rows move only when out of place. */
  function draw() {
    const now = Date.now() / 1000;
    const filter = { text: text.value, group: group.value, status: '' };
    shown = sortJobs(jobs.filter((j) => matches(j, filter) && (!state.value || healthState(j, now) === state.value)), sortKey, descending, now);
    table.classList.toggle('selecting', bulk.selecting);
    for (const [i, th] of heads.entries()) th.setAttribute('aria-sort', COLUMNS[i]![1] === sortKey ? (descending ? 'descending' : 'ascending') : 'none');
    const keep = new Set(shown.map((j) => j.id));
    for (const [id, row] of rows) if (!keep.has(id)) {
      row.tr.remove();
      rows.delete(id);
    }
    body.querySelector('tr.empty')?.remove();
    shown.forEach((j, i) => {
      const built = cells(j, now, zone);
      let row = rows.get(j.id);
      if (!row) {
        const select = h('td', { className: 'col-select' });
        const tds = built.map((_, c) => h('td', { attrs: { 'data-label': COLUMNS[c]![0] }, className: `col-${COLUMNS[c]![2]}` }));
        row = { tr: h('tr', { attrs: { 'data-job-id': j.id } }, select, ...tds), select, cells: tds, keys: built.map(() => '') };
        rows.set(j.id, row);
      }
      bulk.fill(row.select, j);
      built.forEach(([key, make], c) => {
        if (row.keys[c] === key) return;
        row.keys[c] = key;
        replace(row.cells[c]!, make());
      });
      if (body.children[i] !== row.tr) body.insertBefore(row.tr, body.children[i] ?? null);
    });
    if (!shown.length) body.append(h('tr', { className: 'empty' }, h('td', { attrs: { colspan: COLUMNS.length + 1 }, className: 'hint' }, jobs.length ? 'No job matches the filter.' : 'No cron jobs yet.')));
    drawTotals(now);
    bulk.update();
  }

  const stop = poll(async () => {
    try {
      jobs = await call<JobWithHealth[]>('cron_list', { limit: 1000 });
      replace(message);
    } catch (error) {
      replace(message, `Could not load the jobs: ${(error as ApiError).message}`);
      return;
    }
    drawGroups();
    draw();
    hourly.update(jobs);
    replace(updated, 'updated ', timeCell(Date.now() / 1000, Date.now() / 1000, zone));
  });
  return () => {
    stop();
    hourly.destroy();
  };
}
