/**
 * The charts, drawn by uPlot on a canvas. Each is a figure: a title and a legend in words, the
 * plot (an image to assistive technology, described by the summary under it), and the summary,
 * which says in words what the chart shows. uPlot styles its elements through the CSSOM only
 * (element.style), which the page's Content-Security-Policy allows; its rules are in style.css.
 */
import uPlot from 'uplot';
import { h, replace } from './dom.ts';
import { accountHourly, durationSummary, hourLabel, hourlySummary, latenessSummary, runSeries, type Hourly } from './chartData.ts';
import { formatDuration, type LogResult } from './format.ts';
import type { JobWithHealth } from './health.ts';

/** The stylesheet's colours, for the canvas (which CSS does not reach). */
const COLOUR = { ok: '#1d7a3a', failed: '#b42318', skipped: '#9a6700', late: '#2456c8', axis: '#5b6474', grid: '#e3e7ee' };
const HEIGHT = 180;
/** A count axis steps by whole numbers. */
const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000];

const axes = (values: uPlot.Axis['values'], incrs?: number[]): uPlot.Axis[] => [
  { stroke: COLOUR.axis, grid: { stroke: COLOUR.grid, width: 1 }, ticks: { stroke: COLOUR.grid, width: 1 } },
  { stroke: COLOUR.axis, grid: { stroke: COLOUR.grid, width: 1 }, ticks: { stroke: COLOUR.grid, width: 1 }, values, size: 64, incrs },
];

/** Runs close together (a few "Run now" in a row) still get a time axis of minutes, not of milliseconds. */
const MIN_SPAN_S = 120;
const timeRange: uPlot.Scale.Range = (_u, min, max) => (max - min < MIN_SPAN_S ? [(min + max) / 2 - MIN_SPAN_S / 2, (min + max) / 2 + MIN_SPAN_S / 2] : [min, max]);

const pointsOnly = (label: string, colour: string): uPlot.Series => ({ label, stroke: colour, paths: () => null, points: { show: true, size: 7, fill: colour, stroke: colour } });

/** One figure around a uPlot, made when it first has data and the page has laid it out, resized with its box. */
function figure(id: string, title: string, legend: [string, keyof typeof COLOUR][], options: (width: number) => uPlot.Options) {
  const summary = h('p', { className: 'chart-summary', attrs: { id: `${id}-summary` } });
  const box = h('div', { className: 'chart-plot', attrs: { role: 'img', 'aria-label': `Chart: ${title}`, 'aria-describedby': `${id}-summary` } });
  const key = h('span', { className: 'chart-legend' }, ...legend.map(([label, colour]) => h('span', { className: 'chart-key' }, h('span', { className: `swatch swatch-${colour}` }), label)));
  const root = h('figure', { className: 'chart', attrs: { id } }, h('figcaption', {}, h('strong', {}, title), ' ', key), box, summary);
  let plot: uPlot | undefined;
  let width = 0;
  const observer = new ResizeObserver(([entry]) => {
    const w = Math.floor(entry?.contentRect.width ?? 0);
    if (!plot || !w || w === width) return;
    width = w;
    plot.setSize({ width, height: HEIGHT });
  });
  observer.observe(box);
  return {
    root,
    draw(data: uPlot.AlignedData, text: string) {
      replace(summary, text);
      box.hidden = !data[0].length;
      if (box.hidden) return;
      if (plot) plot.setData(data);
      else {
        width = Math.floor(box.clientWidth) || 600;
        plot = new uPlot(options(width), data, box);
      }
    },
    destroy() {
      observer.disconnect();
      plot?.destroy();
    },
  };
}

/** A job's charts: each kept run's duration, coloured by outcome, and its lateness. */
export function jobCharts(zone: string) {
  const duration = figure('chart-duration', 'Duration of each run', [['succeeded', 'ok'], ['failed', 'failed'], ['skipped', 'skipped']], (width) => ({
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true, range: timeRange }, y: { range: (_u, _min, max) => [0, Math.max(max, 0.01) * 1.1] } },
    axes: axes((_u, values) => values.map((v) => formatDuration(v))),
    series: [{}, pointsOnly('succeeded', COLOUR.ok), pointsOnly('failed', COLOUR.failed), pointsOnly('skipped', COLOUR.skipped)],
  }));
  const lateness = figure('chart-lateness', 'Lateness of each run', [['seconds after its time', 'late']], (width) => ({
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true, range: timeRange }, y: { range: (_u, _min, max) => [0, Math.max(max, 1) * 1.1] } },
    axes: axes((_u, values) => values.map((v) => (v ? formatDuration(v) : '0'))),
    series: [{}, { label: 'lateness', stroke: COLOUR.late, width: 1.5, points: { show: true, size: 5, fill: COLOUR.late, stroke: COLOUR.late } }],
  }));
  const root = h('div', { className: 'charts', attrs: { id: 'job-charts' } }, duration.root, lateness.root);
  let drawn = '';
  return {
    root,
    /** Redraws when the runs changed (results newest first, as cron_logs answers). */
    update(results: readonly LogResult[]) {
      const key = results.map((r) => r.id).join(',');
      if (key === drawn) return;
      drawn = key;
      const s = runSeries(results);
      duration.draw([s.x, s.succeeded, s.failed, s.skipped], durationSummary(results, zone));
      lateness.draw([s.x, s.lateness], latenessSummary(results, zone));
    },
    destroy() {
      duration.destroy();
      lateness.destroy();
    },
  };
}

/** The account's runs and failures per hour over the last 24 h (the sum of the list's hourly24h), with a table of the counts. */
export function hourlyChart(zone: string) {
  const bars = uPlot.paths.bars!({ size: [0.8, 40] });
  const chart = figure('chart-hourly', 'Runs per hour, last 24 h', [['succeeded or skipped', 'ok'], ['failed', 'failed']], (width) => ({
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { y: { range: (_u, _min, max) => [0, Math.max(max, 1)] } },
    axes: axes((_u, values) => values.map((v) => String(v)), COUNT_STEPS),
    // The failures' bar is drawn over the runs' bar of its hour: red up to the failures, green above.
    series: [{}, { label: 'runs', fill: COLOUR.ok, width: 0, paths: bars, points: { show: false } }, { label: 'failed', fill: COLOUR.failed, width: 0, paths: bars, points: { show: false } }],
  }));
  const rows = h('tbody');
  const table = h(
    'details',
    { className: 'chart-table', attrs: { id: 'hourly-table' } },
    h('summary', {}, 'The counts per hour'),
    h('table', {}, h('caption', { className: 'visually-hidden' }, `Runs and failures per hour, last 24 h (${zone})`), h('thead', {}, h('tr', {}, h('th', { attrs: { scope: 'col' } }, `Hour (${zone})`), h('th', { attrs: { scope: 'col' } }, 'Runs'), h('th', { attrs: { scope: 'col' } }, 'Failed'))), rows),
  );
  chart.root.append(table);
  let drawn = '';
  return {
    root: chart.root,
    update(jobs: readonly JobWithHealth[]) {
      const hourly: Hourly | null = accountHourly(jobs);
      chart.root.hidden = !hourly;
      if (!hourly) return;
      const key = JSON.stringify(hourly);
      if (key === drawn) return;
      drawn = key;
      const x = hourly.runs.map((_, i) => hourly.from + i * 3600 + 1800);
      chart.draw([x, hourly.runs, hourly.failures], hourlySummary(hourly, zone));
      replace(rows, ...hourly.runs.map((runs, i) => h('tr', {}, h('th', { attrs: { scope: 'row' } }, hourLabel(hourly.from + i * 3600, zone)), h('td', {}, String(runs)), h('td', {}, String(hourly.failures[i] ?? 0)))));
    },
    destroy: chart.destroy,
  };
}
