import { HOUR, MINUTE, SECOND } from './civil.ts';
import { compiled, type Schedule } from './schedule.ts';

const steps = new WeakMap<Schedule, number>();

/**
 * The fixed step of an interval made only of seconds, minutes and hours (ms): its chain of runs
 * can be jumped along arithmetically instead of walked. 0 for anything else (days, months and
 * crontabs move with the calendar and the zone).
 */
export function elapsedStep(schedule: Schedule): number {
  let step = steps.get(schedule);
  if (step === undefined) {
    const iv = schedule.kind === 'interval' ? compiled(schedule).interval : null;
    step = iv?.elapsed ? iv.hours * HOUR + iv.minutes * MINUTE + iv.seconds * SECOND : 0;
    if (!(step > 0)) step = 0;
    steps.set(schedule, step);
  }
  return step;
}

/**
 * Whether jobs with the same expression, zone and filter may share one compiled Schedule: all
 * but crontabs with FastCron's R or a stable-spread H, which depend on the job id.
 */
export function isSharable(schedule: Schedule): boolean {
  return schedule.kind !== 'crontab' || compiled(schedule).cron?.perJob !== true;
}
