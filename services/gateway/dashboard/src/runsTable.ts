import { h, replace } from './dom.ts';
import { excerpt, formatDuration, formatTime, resultText, type LogResult } from './format.ts';
import { relativeTime } from './health.ts';

const HEADINGS = ['Time', 'Result', 'HTTP', 'Duration', 'Lateness', 'Attempt', 'Error / output'];

const lateness = (r: LogResult) => {
  const late = r.lateness ?? (r.startTime && r.time ? Math.max(0, r.startTime - r.time) : undefined);
  return late === undefined ? '-' : late < 1 ? 'on time' : `+${formatDuration(late)}`;
};

/** Everything the log holds about a run: the whole stored output, and for a failure the body it answered. */
function details(r: LogResult, zone: string) {
  const item = (k: string, v: string) => [h('dt', {}, k), h('dd', {}, v)];
  return h(
    'div',
    { className: 'run-details' },
    h(
      'dl',
      { className: 'settings' },
      ...item('Scheduled', `${formatTime(r.time, zone)} (${zone})`),
      ...item('Started', r.startTime ? `${formatTime(r.startTime, zone)} (${zone})` : '-'),
      ...item('Result', resultText(r)),
      ...item('HTTP status', r.httpStatus ? String(r.httpStatus) : 'none'),
      ...item('Duration', formatDuration(r.executionTime)),
      ...item('Lateness', lateness(r)),
      ...item('Attempt', String(r.attempt || 1)),
      ...item('Kind', r.manual ? 'manual (run now)' : 'scheduled'),
      ...item('IP', r.ip || '-'),
      ...item('Server', r.server || '-'),
      ...item('Downloaded', r.downloaded === undefined ? '-' : `${r.downloaded} bytes`),
      ...(r.error ? item('Error', r.error) : []),
    ),
    h('h3', {}, r.status === 1 ? 'Response body' : 'Output'),
    r.output ? h('pre', { className: 'output-full' }, r.output) : h('p', { className: 'hint' }, 'empty'),
  );
}

/**
 * The runs of a job as a table (cards on a phone) whose rows open to the whole run. Rows are kept
 * by result id across refreshes: an opened row stays open and the focus stays where it was.
 */
export function runsTable(id: string, zone: string) {
  const body = h('tbody');
  const table = h('table', { className: 'cards runs', attrs: { id } }, h('thead', {}, h('tr', {}, ...HEADINGS.map((t) => h('th', { attrs: { scope: 'col' } }, t)))), body);
  const empty = h('p', { className: 'hint' });
  const root = h('div', {}, table, empty);
  const rows = new Map<number, { tr: HTMLTableRowElement; more: HTMLTableRowElement; when: HTMLElement; stamp: string }>();
  const open = new Set<number>();

  function update(results: LogResult[], emptyText: string) {
    const now = Date.now() / 1000;
    replace(empty, results.length ? '' : emptyText);
    table.hidden = !results.length;
    const keep = new Set(results.map((r) => r.id));
    for (const [rid, row] of rows) if (!keep.has(rid)) {
      row.tr.remove();
      row.more.remove();
      rows.delete(rid);
    }
    let at = 0;
    for (const r of results) {
      let row = rows.get(r.id);
      const stamp = `${r.status}|${r.willRetry}`;
      if (!row || row.stamp !== stamp) {
        const moreId = `${id}-run-${r.id}`;
        const more = h('tr', { className: 'more', attrs: { id: moreId } }, h('td', { attrs: { colspan: HEADINGS.length } }, details(r, zone)));
        const toggle = h('button', { className: 'link', attrs: { type: 'button', 'aria-expanded': open.has(r.id), 'aria-controls': moreId } });
        const when = h('span');
        toggle.append(when);
        toggle.addEventListener('click', () => {
          const opened = !open.has(r.id);
          if (opened) open.add(r.id);
          else open.delete(r.id);
          toggle.setAttribute('aria-expanded', String(opened));
          more.hidden = !opened;
        });
        const tr = h(
          'tr',
          { className: r.status === 0 ? 'ok' : r.status === 2 ? 'skipped' : 'failed', attrs: { 'data-run-id': r.id } },
          h('td', { className: 'time', attrs: { 'data-label': HEADINGS[0] } }, toggle),
          h('td', { className: 'result-status', attrs: { 'data-label': HEADINGS[1] } }, resultText(r), r.manual ? h('span', { className: 'hint' }, ' (manual)') : null),
          h('td', { attrs: { 'data-label': HEADINGS[2] } }, r.httpStatus ? String(r.httpStatus) : '-'),
          h('td', { attrs: { 'data-label': HEADINGS[3] } }, formatDuration(r.executionTime)),
          h('td', { attrs: { 'data-label': HEADINGS[4] } }, lateness(r)),
          h('td', { attrs: { 'data-label': HEADINGS[5] } }, String(r.attempt || 1)),
          h('td', { className: 'output', attrs: { 'data-label': HEADINGS[6] } }, excerpt(r.error && r.error !== `HTTP ${r.httpStatus}` ? `${r.error} ${r.output}` : r.output || r.error)),
        );
        if (row) {
          row.tr.replaceWith(tr);
          row.more.replaceWith(more);
        }
        more.hidden = !open.has(r.id);
        row = { tr, more, when, stamp };
        rows.set(r.id, row);
      }
      const text = relativeTime(r.time, now);
      if (row.when.textContent !== text) {
        replace(row.when, text);
        row.when.title = `${formatTime(r.time, zone)} (${zone})`;
      }
      if (body.children[at] !== row.tr) body.insertBefore(row.tr, body.children[at] ?? null);
      if (body.children[at + 1] !== row.more) body.insertBefore(row.more, body.children[at + 1] ?? null);
      at += 2;
    }
  }
  return { root, update };
}
