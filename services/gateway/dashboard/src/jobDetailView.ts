import type { ApiError, Call } from './api.ts';
import { h, link, replace } from './dom.ts';
import { formatTime, type LogResult } from './format.ts';
import { browserZone, healthState, STATE_TEXT, type JobWithHealth } from './health.ts';
import { badgeSection } from './badgeSection.ts';
import { historySection } from './historySection.ts';
import { runsTable } from './runsTable.ts';
import { mergeRuns } from './chartData.ts';
import { jobCharts } from './charts.ts';
import type { ViewContext } from './view.ts';
import { poll } from './poll.ts';

/** Runs shown: the newest of the kept ones, one call for the table and the failures alike. */
const RUNS = 100;
/** Runs charted: every kept one (the logs keep 1000 per job), loaded once; each refresh then asks for the newest RUNS. */
const KEPT = 1000;
/** After "Run now", look again this long after the run's time: enough for a quick call to be logged. */
const RUN_SETTLE_MS = 1500;
/** Pause lengths offered (cron_pause's `for`), besides "until resumed". */
const PAUSES = ['1 hour', '6 hours', '1 day', '1 week'];

/** The settings shown on the page, in an owner's words; the form shows all of them. */
const SHOWN: [string, string][] = [
  ['url', 'URL'],
  ['httpMethod', 'Method'],
  ['expression', 'Schedule'],
  ['timezone', 'Time zone'],
  ['filter', 'Only on'],
  ['timeout', 'Timeout (s)'],
  ['retries', 'Retries'],
  ['failureThreshold', 'Failures before disabling'],
  ['groupName', 'Group'],
];

/** The planner's next runs (cron_next), in the job's own time zone: the one its schedule is written in. */
async function loadNext(call: Call, job: JobWithHealth, into: HTMLElement) {
  const times = await call<number[]>('cron_next', { id: job.id, limit: 5 }).catch((e: ApiError) => e);
  if (!Array.isArray(times)) replace(into, h('span', { className: 'hint' }, times.message));
  else if (!times.length) replace(into, h('span', { className: 'hint' }, 'no run planned'));
  else replace(into, h('span', { className: 'hint' }, `in ${job.timezone}`), h('ul', {}, ...times.map((t) => h('li', { className: 'time' }, formatTime(t, job.timezone)))));
}

/**
 * One job: its health, settings, actions, next runs and runs (three calls: cron_get, cron_logs,
 * cron_next), refreshed every 5 s; its versions when the owner opens them.
 */
export function jobDetailView({ call, main, go }: ViewContext, id: number) {
  const zone = browserZone();
  const title = h('h1');
  const toolbar = h('div', { className: 'toolbar actions' });
  const message = h('p', { className: 'error', attrs: { role: 'alert', id: 'detail-error' } });
  const notice = h('p', { className: 'notice', attrs: { role: 'status', id: 'detail-notice' } });
  const settings = h('dl', { className: 'settings' });
  const next = h('div', { attrs: { id: 'next-runs' } });
  const runs = runsTable('executions', zone);
  const charts = jobCharts(zone);
  const onlyFailed = h('input', { attrs: { type: 'checkbox', id: 'only-failed' }, on: { change: () => drawRuns() } });
  replace(
    main,
    title,
    toolbar,
    message,
    notice,
    settings,
    h('h2', {}, 'Next runs'),
    next,
    h('h2', {}, 'Duration and lateness'),
    charts.root,
    // A restore may change the schedule: the next runs are read again with the job.
    historySection(call, id, zone, async () => {
      await refresh();
      if (job) await loadNext(call, job, next);
    }),
    badgeSection(call, id),
    h('h2', {}, 'Runs'),
    h('p', { className: 'toolbar' }, onlyFailed, h('label', { attrs: { for: 'only-failed' } }, 'Failed runs only'), h('span', { className: 'hint' }, `Times in ${zone}; a row opens to the whole run.`)),
    runs.root,
  );

  let job: JobWithHealth | undefined;
  let results: LogResult[] = [];
  let drawnActions = '';
  const drawRuns = () => runs.update((onlyFailed.checked ? results.filter((r) => r.status === 1) : results).slice(0, RUNS), onlyFailed.checked ? 'No failure among the kept runs.' : 'No run yet.');

  async function act(fn: string, params: Record<string, string | number> = {}, confirmText?: string) {
    if (confirmText && !window.confirm(confirmText)) return;
    replace(message);
    replace(notice);
    try {
      const answer = await call<unknown>(fn, { id, ...params });
      if (fn === 'cron_delete') {
        go('/');
        return;
      }
      replace(notice, fn === 'cron_run' ? `Run queued for ${formatTime(answer as number)} (${zone}).` : 'Done.');
      // The run's result is worth seeing as soon as it exists, not at the next 5-second tick.
      if (fn === 'cron_run') setTimeout(() => void refresh(), Math.max(0, (answer as number) * 1000 - Date.now()) + RUN_SETTLE_MS);
      await refresh();
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  /** The action buttons a job's status allows; redrawn only when the status changes, so focus stays. */
  function drawActions(j: JobWithHealth) {
    const key = String(j.status);
    if (key === drawnActions) return;
    drawnActions = key;
    const button = (label: string, bid: string, onClick: () => void, className = '') => h('button', { className, attrs: { type: 'button', id: bid }, on: { click: onClick } }, label);
    const pauseFor = h('select', { attrs: { id: 'pause-for', 'aria-label': 'Pause for' } }, h('option', { value: '' }, 'until resumed'), ...PAUSES.map((p) => h('option', { value: p }, `for ${p}`)));
    const active = j.status === 0;
    replace(
      toolbar,
      active ? h('span', { className: 'pause' }, button('Pause', 'action-pause', () => void act('cron_pause', pauseFor.value ? { for: pauseFor.value } : {})), pauseFor) : button(j.status === 5 ? 'Resume' : 'Enable', 'action-resume', () => void act('cron_enable')),
      active || j.status === 5 ? button('Disable', 'action-disable', () => void act('cron_disable'), 'secondary') : null,
      j.status !== 1 && j.status !== 4 ? button('Run now', 'action-run', () => void act('cron_run')) : null,
      link(`/jobs/${j.id}/edit`, 'Edit'),
      link(`/jobs/${j.id}/clone`, 'Clone'),
      button('Delete', 'action-delete', () => void act('cron_delete', {}, `Delete cron job ${j.id} (${j.name || j.url})? This cannot be undone.`), 'danger'),
    );
  }

  function drawJob(j: JobWithHealth) {
    const state = healthState(j, Date.now() / 1000);
    replace(title, j.name || '(no name)', h('span', { className: 'hint' }, ` #${j.id} `), h('span', { className: `state state-${state}`, attrs: { id: 'job-status' } }, STATE_TEXT[state]));
    drawActions(j);
    const rows: [string, string][] = SHOWN.map(([key, label]) => [label, j[key] === null || j[key] === '' || j[key] === undefined ? '-' : String(j[key] as string | number)]);
    rows.push(['Consecutive failures', String(j.fail)]);
    rows.push(['Last 24 hours', j.runs24h === null || j.runs24h === undefined ? '-' : `${j.runs24h} runs, ${j.failures24h ?? 0} failed`]);
    if (j.status === 5) rows.push(['Paused until', j.pausedUntil ? `${formatTime(j.pausedUntil as number, zone)} (${zone})` : 'until resumed']);
    replace(settings, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  }

  async function refresh() {
    try {
      job = await call<JobWithHealth>('cron_get', { id });
      drawJob(job);
      const fresh = (await call<{ result: LogResult }[]>('cron_logs', { id, limit: results.length ? RUNS : KEPT })).map((l) => l.result);
      results = mergeRuns(results, fresh, KEPT);
      drawRuns();
      charts.update(results);
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  let first = true;
  const stop = poll(async () => {
    await refresh();
    if (first && job) {
      first = false;
      await loadNext(call, job, next);
    }
  });
  return () => {
    stop();
    charts.destroy();
  };
}
