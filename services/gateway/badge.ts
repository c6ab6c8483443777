import type { CronJob } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { compileSchedule } from '../../shared/job/index.ts';

/** A badge's message and its colour (the shields.io palette, so it sits well beside other badges). */
export const BADGE_STATES = {
  ok: '#4c1',
  failing: '#e05d44',
  late: '#fe7d37',
  paused: '#dfb317',
  disabled: '#9f9f9f',
  'auto-disabled': '#e05d44',
  done: '#007ec6',
  pending: '#9f9f9f',
} as const;
export type BadgeState = keyof typeof BADGE_STATES;

/** What a badge needs of the job's last run (from the logs service; absent when it cannot answer). */
export interface LastRun {
  /** Unix seconds. */
  time: number;
  /** The API's result status: 0 succeeded, 1 failed, 2 skipped. */
  status: number;
}

const LATE_GRACE_S = 60;

/**
 * The job's health in one word (docs/api.md, cron_badge). `late`: a job that runs more than once a
 * day (points >= 2) whose last run, or its creation when it never ran, is older than twice its
 * average interval plus a minute; a daily or rarer schedule (or a filter that skips whole days)
 * cannot be judged from an average, so it is never called late.
 */
export function badgeState(job: CronJob, last: LastRun | null, nowMs: number): BadgeState {
  switch (job.status) {
    case 1:
      return 'disabled';
    case 4:
      return 'auto-disabled';
    case 5:
      return 'paused';
    case 6:
      return 'done';
  }
  if (job.fail > 0 || last?.status === 1) return 'failing';
  const since = last ? last.time : Number(job.createdAt);
  if (job.points >= 2 && isRepeating(job) && nowMs / 1000 - since > (2 * 86_400) / job.points + LATE_GRACE_S) return 'late';
  return last ? 'ok' : 'pending';
}

function isRepeating(job: CronJob): boolean {
  try {
    const kind = compileSchedule(job, Number(job.id)).kind;
    return kind === 'crontab' || kind === 'interval';
  } catch {
    return false;
  }
}

/** Characters of the label kept: a long job name is cut with an ellipsis. */
export const LABEL_MAX = 40;

/**
 * XML text: the five markup characters escaped, and what XML 1.0 forbids (control characters,
 * lone surrogates, U+FFFE/U+FFFF) dropped, so no job name can break the document or add markup.
 */
export function xmlText(text: string): string {
  return text
    // eslint-disable-next-line no-control-regex -- the control characters are what it removes
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '')
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Verdana 11px widths, roughly (shields.io measures the same font): narrow, wide and the rest. */
function textWidth(text: string): number {
  let w = 0;
  for (const c of text) {
    if ('iljtf.,:;!|\'I ()[]'.includes(c)) w += 4;
    else if ('mwMW@%'.includes(c)) w += 10;
    else if (c >= 'A' && c <= 'Z') w += 7.5;
    else w += c.charCodeAt(0) > 0x2e7f ? 11 : 6.5;
  }
  return Math.ceil(w);
}

/** The label of a job's badge: its name, cut to LABEL_MAX characters, or "cron" when it has none. */
export function badgeLabel(name: string): string {
  const chars = [...name.trim()];
  if (!chars.length) return 'cron';
  return chars.length > LABEL_MAX ? `${chars.slice(0, LABEL_MAX - 1).join('')}…` : chars.join('');
}

/** A flat two-part badge (label | message), an SVG of text and rectangles only: no script, no link, no external reference. */
export function badgeSvg(label: string, state: BadgeState): string {
  const lw = textWidth(label) + 10;
  const mw = textWidth(state) + 10;
  const w = lw + mw;
  const l = xmlText(label);
  const title = `${l}: ${state}`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="20" role="img" aria-label="${title}">` +
    `<title>${title}</title>` +
    `<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>` +
    `<clipPath id="r"><rect width="${w}" height="20" rx="3" fill="#fff"/></clipPath>` +
    `<g clip-path="url(#r)"><rect width="${lw}" height="20" fill="#555"/><rect x="${lw}" width="${mw}" height="20" fill="${BADGE_STATES[state]}"/><rect width="${w}" height="20" fill="url(#s)"/></g>` +
    `<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" font-size="11">` +
    `<text x="${lw / 2}" y="15" fill="#010101" fill-opacity=".3">${l}</text><text x="${lw / 2}" y="14">${l}</text>` +
    `<text x="${lw + mw / 2}" y="15" fill="#010101" fill-opacity=".3">${state}</text><text x="${lw + mw / 2}" y="14">${state}</text>` +
    `</g></svg>`
  );
}
