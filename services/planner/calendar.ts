import { slicedMap } from '../../shared/timeSlice.ts';
import { upcomingRuns, type JobPlan } from './occurrences.ts';
import type { ScheduleProjection } from './scheduleProjection.ts';

/** One run of an account's calendar: the job and when its run is published (ms). */
export interface CalendarRun {
  job: JobPlan['job'];
  at: number;
}

/** A job's runs fetched so far, from `now`: fetched again, more each time, when they run out. */
interface Cursor {
  plan: JobPlan;
  runs: number[];
  fetched: number;
  next: number;
  taken: number;
}

const at = (c: Cursor) => c.runs[c.next]!;
const before = (a: Cursor, b: Cursor) => at(a) < at(b) || (at(a) === at(b) && a.plan.job.id < b.plan.job.id);

/** A binary min-heap of cursors by their next run (then job id, so equal instants come out in a stable order). */
class CursorHeap {
  private items: Cursor[] = [];
  get size() {
    return this.items.length;
  }
  push(c: Cursor) {
    const a = this.items;
    a.push(c);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!before(a[i]!, a[p]!)) break;
      [a[i], a[p]] = [a[p]!, a[i]!];
      i = p;
    }
  }
  pop(): Cursor | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (!a.length || !last) return top;
    a[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && before(a[l]!, a[m]!)) m = l;
      if (r < a.length && before(a[r]!, a[m]!)) m = r;
      if (m === i) break;
      [a[i], a[m]] = [a[m]!, a[i]!];
      i = m;
    }
    return top;
  }
}

/**
 * The runs of some jobs from `now` to `until` (ms, inclusive), in time order, by the same
 * occurrence rules as cron_next (`upcomingRuns`): at most `perJob` of one job and `limit` in all,
 * `truncated` when either cap left a run out. Costs about one occurrence per job plus a few per run
 * answered, never the jobs' whole day: an account of thousands of every-second jobs is answered
 * from the first runs of each and the `limit` earliest runs.
 *
 * `first`: each plan's first run (upcomingRuns(plan, now, 1)), computed by the caller in time slices.
 */
export function calendarRuns(plans: JobPlan[], first: number[][], now: number, until: number, perJob: number, limit: number): { runs: CalendarRun[]; truncated: boolean } {
  const heap = new CursorHeap();
  plans.forEach((plan, i) => {
    const runs = first[i] ?? [];
    if (runs.length && runs[0]! <= until) heap.push({ plan, runs, fetched: 1, next: 0, taken: 0 });
  });
  const out: CalendarRun[] = [];
  let truncated = false;
  for (let c = heap.pop(); c; c = heap.pop()) {
    if (out.length === limit || c.taken === perJob) {
      truncated = true;
      if (out.length === limit) break;
      continue;
    }
    out.push({ job: c.plan.job, at: at(c) });
    c.taken++;
    c.next++;
    if (c.next >= c.runs.length && c.runs.length === c.fetched && c.fetched <= perJob) {
      // Fetched again from `now` (the walk's state is not kept): eight times as many each time,
      // so a job's runs cost at most about twice what is answered of it.
      c.fetched = Math.min(c.fetched * 8, perJob + 1);
      c.runs = upcomingRuns(c.plan, now, c.fetched);
    }
    if (c.next < c.runs.length && at(c) <= until) heap.push(c);
  }
  return { runs: out, truncated };
}

/** The calendar of an account's jobs, the first run of each found in time slices (an account may have thousands). */
export async function accountCalendar(projection: ScheduleProjection, accountId: number, now: number, until: number, perJob: number, limit: number) {
  const plans = projection.plansOf(accountId);
  const first = await slicedMap(plans, (plan) => upcomingRuns(plan, now, 1));
  return { ...calendarRuns(plans, first, now, until, perJob, limit), from: now };
}
