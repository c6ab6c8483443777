import { compileSchedule, type CronJob } from '../../shared/job/index.ts';
import { isSharable, type Schedule } from '../../shared/schedule/index.ts';
import { PrivateSchedule, remember } from './occurrences.ts';

/** Compiled schedules shared between jobs; cleared when it grows past this many. */
const SHARED_LIMIT = 10_000;

/** The schedule projection's compiled schedules: one per distinct schedule, shared by the jobs that have it. */
export class SharedSchedules {
  /** Schedules that failed to compile (never for events the jobs service validated). */
  compileErrors = 0;
  /** By (expression, zone, filter): the compiled schedule jobs share, or, for a private one (R), a template. */
  private readonly shared = new Map<string, Schedule>();

  /** Compiles once per schedule change; jobs with the same schedule (and no R or H) share one. */
  compile(job: CronJob): Schedule | null {
    const { expression, timezone, filter, dstGap, dstOverlap } = job.settings;
    const key = `${expression}\u0000${timezone}\u0000${filter}\u0000${dstGap}\u0000${dstOverlap}`;
    const hit = this.shared.get(key);
    // A private schedule's text is known valid; its per-job tables are built when first used.
    if (hit instanceof PrivateSchedule) return new PrivateSchedule(hit.kind, hit.expression, hit.timezone, hit.filter, job.id, hit.dst);
    if (hit) return hit;
    let schedule: Schedule;
    try {
      schedule = compileSchedule(job.settings, job.id);
    } catch {
      this.compileErrors++;
      return null;
    }
    if (this.shared.size >= SHARED_LIMIT) this.shared.clear();
    if (!isSharable(schedule)) {
      const own = new PrivateSchedule(schedule.kind, schedule.expression, schedule.timezone, schedule.filter, job.id, schedule.dst);
      this.shared.set(key, own);
      remember(own, schedule);
      return own;
    }
    this.shared.set(key, schedule);
    return schedule;
  }
}
