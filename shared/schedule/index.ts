/**
 * The schedule language (docs/schedule.md): crontab with FastCron's R, English intervals, one-time
 * dates, @timestamps, manual; filters; IANA zones with our DST rule. Pure: no I/O, no clock.
 */
export { ScheduleError } from './scheduleError.ts';
export { isValidTimeZone } from './zone.ts';
export { CLASSIC_DST, DST_GAP_RULES, DST_OVERLAP_RULES, type DstMark, type DstPolicy } from './dstPolicy.ts';
export { dstMarks } from './dstMarks.ts';
export {
  addDuration,
  nextRun,
  nextRuns,
  parseSchedule,
  type Schedule,
  type ScheduleKind,
} from './schedule.ts';
export { pointsPerDay } from './points.ts';
export { describeSchedule } from './describe.ts';
export { checkFires, FIRES_WITHIN } from './fires.ts';
export { elapsedStep, isSharable } from './traits.ts';
// The hash behind the R draws, for other draws that must agree across processes (the planner's delay).
export { mix } from './random.ts';
