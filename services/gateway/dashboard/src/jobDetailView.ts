import type { ApiError, Call } from './api.ts';
import { h, link, replace } from './dom.ts';
import { excerpt, formatDuration, formatLateness, formatTime, resultText, statusGroup, statusText, type JobRecord, type LogResult } from './format.ts';
import type { ViewContext } from './view.ts';
import { poll } from './poll.ts';

/** Rows of the recent-executions table: enough to see a pattern, few enough to poll. */
const RECENT = 25;
const FAILURES = 10;
/** After "Run now", look again this long after the run's time: enough for a quick call to be logged. */
const RUN_SETTLE_MS = 1500;

/** The settings shown on the page, with labels; the form shows all of them. */
const SHOWN: [string, string][] = [
  ['url', 'URL'],
  ['httpMethod', 'Method'],
  ['expression', 'Schedule'],
  ['timezone', 'Time zone'],
  ['filter', 'Filter'],
  ['timeout', 'Timeout (s)'],
  ['retries', 'Retries'],
  ['retryBackoff', 'Retry backoff (s)'],
  ['failureThreshold', 'Failures before disabling'],
  ['notifyChannels', 'Notify channels'],
];

function logTable(id: string, results: LogResult[], empty: string) {
  if (!results.length) return h('p', { className: 'hint', attrs: { id } }, empty);
  const headings = ['Time', 'Status', 'HTTP', 'Duration', 'Lateness', 'Attempt', 'Error / output'];
  return h(
    'table',
    { attrs: { id } },
    h('thead', {}, h('tr', {}, ...headings.map((t) => h('th', {}, t)))),
    h(
      'tbody',
      {},
      ...results.map((r) =>
        h(
          'tr',
          { className: r.status === 0 ? 'ok' : r.status === 2 ? 'skipped' : 'failed' },
          h('td', { className: 'time' }, formatTime(r.time)),
          h('td', { className: 'result-status' }, resultText(r)),
          h('td', {}, r.httpStatus ? String(r.httpStatus) : '-'),
          h('td', {}, formatDuration(r.executionTime)),
          h('td', {}, formatLateness(r.time, r.startTime)),
          h('td', {}, String(r.attempt || 1)),
          h('td', { className: 'output' }, excerpt(r.error || r.output)),
        ),
      ),
    ),
  );
}

/** The action buttons a job's status allows. */
function actions(job: JobRecord, act: (fn: string, confirmText?: string) => void) {
  const group = statusGroup(job.status);
  const button = (label: string, id: string, fn: string, confirmText?: string, className = '') =>
    h('button', { className, attrs: { type: 'button', id }, on: { click: () => act(fn, confirmText) } }, label);
  return [
    group === 'enabled' ? button('Pause', 'action-pause', 'cron_pause') : button(group === 'paused' ? 'Resume' : 'Enable', 'action-resume', 'cron_enable'),
    group !== 'disabled' ? button('Disable', 'action-disable', 'cron_disable', undefined, 'secondary') : null,
    group !== 'disabled' ? button('Run now', 'action-run', 'cron_run') : null,
    link(`/jobs/${job.id}/edit`, 'Edit'),
    button('Delete', 'action-delete', 'cron_delete', `Delete cron job ${job.id} (${job.name || job.url})? This cannot be undone.`, 'danger'),
  ];
}

/** The planner's next runs (cron_next), in the job's own time zone: the one its schedule is written in. */
async function loadNext(call: Call, job: JobRecord, into: HTMLElement) {
  const times = await call<number[]>('cron_next', { id: job.id, limit: 5 }).catch((e: ApiError) => e);
  if (!Array.isArray(times)) replace(into, h('span', { className: 'hint' }, times.message));
  else if (!times.length) replace(into, h('span', { className: 'hint' }, 'no run planned'));
  else replace(into, h('span', { className: 'hint' }, `in ${job.timezone}`), h('ul', {}, ...times.map((t) => h('li', { className: 'time' }, formatTime(t, job.timezone)))));
}

/** One job: its settings, actions, next runs, recent executions and failures, refreshed every 5 s. */
export function jobDetailView({ call, main, go }: ViewContext, id: number) {
  const title = h('h1');
  const toolbar = h('div', { className: 'toolbar actions' });
  const message = h('p', { className: 'error', attrs: { role: 'alert', id: 'detail-error' } });
  const notice = h('p', { className: 'notice', attrs: { role: 'status', id: 'detail-notice' } });
  const settings = h('dl', { className: 'settings' });
  const next = h('div', { attrs: { id: 'next-runs' } });
  const recent = h('div');
  const failures = h('div');
  replace(
    main,
    title,
    toolbar,
    message,
    notice,
    settings,
    h('h2', {}, 'Next runs'),
    next,
    h('h2', {}, 'Recent executions'),
    recent,
    h('h2', {}, 'Failures'),
    failures,
  );

  let job: JobRecord | undefined;
  async function act(fn: string, confirmText?: string) {
    if (confirmText && !window.confirm(confirmText)) return;
    replace(message);
    try {
      const answer = await call<unknown>(fn, { id });
      if (fn === 'cron_delete') {
        go('/');
        return;
      }
      replace(notice, fn === 'cron_run' ? `Run queued for ${formatTime(answer as number)}.` : 'Done.');
      // The run's result is worth seeing as soon as it exists, not at the next 5-second tick.
      if (fn === 'cron_run') setTimeout(() => void refresh(), Math.max(0, (answer as number) * 1000 - Date.now()) + RUN_SETTLE_MS);
      await refresh();
      if (job) await loadNext(call, job, next);
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  function drawJob(j: JobRecord) {
    replace(title, j.name || '(no name)', h('span', { className: 'hint' }, ` #${j.id} `), h('span', { className: `status status-${statusGroup(j.status)}`, attrs: { id: 'job-status' } }, statusText(j.status)));
    replace(toolbar, ...actions(j, (fn, c) => void act(fn, c)));
    const rows: [string, string][] = SHOWN.map(([key, label]) => [label, j[key] === null || j[key] === '' || j[key] === undefined ? '-' : String(j[key] as string | number)]);
    rows.push(['Consecutive failures', String(j.fail)]);
    if (j.status === 5) rows.push(['Paused until', j.pausedUntil ? formatTime(j.pausedUntil as number) : 'until resumed']);
    replace(settings, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  }

  async function refresh() {
    try {
      job = await call<JobRecord>('cron_get', { id });
      drawJob(job);
      const logs = await call<{ result: LogResult }[]>('cron_logs', { id, limit: RECENT });
      replace(recent, logTable('executions', logs.map((l) => l.result), 'No execution yet.'));
      const failed = await call<{ result: LogResult }[]>('cron_failures', { id, limit: FAILURES });
      replace(failures, logTable('failures', failed.map((l) => l.result), 'No failure recorded.'));
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  let first = true;
  return poll(async () => {
    await refresh();
    if (first && job) {
      first = false;
      await loadNext(call, job, next);
    }
  });
}
