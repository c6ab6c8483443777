import { HOUR } from './civil.ts';
import type { DstMark } from './dstPolicy.ts';
import { compiled, type Schedule } from './schedule.ts';

/**
 * For each run (ms), how a daylight-saving change touched it, or null: `moved` when local times
 * of the schedule were skipped and the run stands at the jump in their place; `repeated` when its
 * local time happens twice that night (pass 1 or 2). For `cron_next` and the dashboard's warning.
 */
export function dstMarks(schedule: Schedule, runs: readonly number[]): (DstMark | null)[] {
  const s = compiled(schedule);
  if (s.zone.isUtc) return runs.map(() => null);
  return runs.map((run) => {
    const zone = s.zone;
    const before = zone.offsetAt(run - 1);
    const at = zone.offsetAt(run);
    if (at > before && s.cron) {
      // The run is at a forward jump: were times of its crontab skipped just before it?
      const skipped = s.cron.nextWall(run + before - 1, run + at);
      if (skipped === skipped && skipped < run + at) return { kind: 'moved' };
    }
    const wall = run + at;
    const first = zone.instantOf(wall);
    if (first < run) return { kind: 'repeated', pass: 2 };
    // Does the same local time come again after a backward change within a day?
    for (let end = zone.spanEnd(run + 1); end !== Infinity && end <= run + 26 * HOUR; end = zone.spanEnd(end)) {
      const later = zone.offsetAt(end);
      if (later !== at) return wall - later >= end ? { kind: 'repeated', pass: 1 } : null;
    }
    return null;
  });
}
