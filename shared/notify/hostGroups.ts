import type { Trigger } from './trigger.ts';

/**
 * One alert for many jobs failing against the same host: a merged message names each host that
 * two or more of its failing jobs call, how many, since when, and the error most of them got,
 * before the jobs one by one. A host that is down (or refusing) shows as one line, not fifty.
 */

export interface HostGroup {
  /** host[:port] of the jobs' URL. */
  host: string;
  /** The distinct failing jobs of the message that call it, in message order. */
  jobs: number[];
  /** The earliest time (Unix seconds) any of them is known to be failing since. */
  since: number;
  /** The error most of them got (the first of equals), at most 120 characters; '' when none said. */
  error: string;
}

/** The fewest failing jobs on one host that make a group: one job is just a job. */
export const HOST_GROUP_MIN_JOBS = 2;

const hostOf = (url: string): string | null => {
  try {
    return new URL(url).host.toLowerCase() || null;
  } catch {
    return null;
  }
};

/** The failing triggers of a message grouped by host, largest group first; hosts with fewer than two jobs left out. */
export function hostGroups(triggers: readonly Trigger[]): HostGroup[] {
  const byHost = new Map<string, Trigger[]>();
  for (const t of triggers) {
    if (!t.execution.failed) continue;
    const host = hostOf(t.job.url);
    if (host) byHost.set(host, [...(byHost.get(host) ?? []), t]);
  }
  const groups: HostGroup[] = [];
  for (const [host, failing] of byHost) {
    const jobs = [...new Set(failing.map((t) => t.job.id))];
    if (jobs.length < HOST_GROUP_MIN_JOBS) continue;
    const errors = new Map<string, number>();
    for (const t of failing) if (t.execution.error) errors.set(t.execution.error, (errors.get(t.execution.error) ?? 0) + 1);
    const error = [...errors].reduce<[string, number]>((best, e) => (e[1] > best[1] ? e : best), ['', 0])[0];
    const since = Math.min(...failing.map((t) => t.failingSince ?? t.execution.time));
    groups.push({ host, jobs, since, error: error.length > 120 ? `${error.slice(0, 119)}…` : error });
  }
  return groups.sort((a, b) => b.jobs.length - a.jobs.length);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `10:02 UTC`, or with its date when it is not within the day before `nowMs`. */
export function sinceText(unixSeconds: number, nowMs: number): string {
  const d = new Date(unixSeconds * 1000);
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
  return nowMs - d.getTime() < 24 * 3600_000 ? time : `${d.toISOString().slice(0, 10)} ${time}`;
}

/** "api.example.com: 37 jobs failing since 10:02 UTC, connect ECONNREFUSED" */
export function hostLine(g: HostGroup, nowMs: number): string {
  return `${g.host}: ${g.jobs.length} jobs failing since ${sinceText(g.since, nowMs)}${g.error ? `, ${g.error}` : ''}`;
}
