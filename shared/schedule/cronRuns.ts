import type { Crontab } from './crontab.ts';
import type { GapInfo, Zone } from './zone.ts';

const gap: GapInfo = { transition: 0, offsetBefore: 0 };

/**
 * The first run of `cron` in `zone` strictly after the instant `from`, no later than
 * `from + horizon`; null when there is none. Implements the DST rule of docs/schedule.md.
 */
export function nextCronRun(cron: Crontab, zone: Zone, from: number, horizon: number): number | null {
  if (zone.isUtc) {
    const w = cron.nextWall(from, from + horizon);
    return w === w ? w : null;
  }
  return cron.followsRealTime ? nextRealTime(cron, zone, from, horizon) : nextFixedHour(cron, zone, from, horizon);
}

/**
 * Hour field starting with `*`: every real instant whose wall time matches. Walk the spans of
 * constant offset; inside one, wall and real time move together, so a plain wall search works.
 * A skipped wall time belongs to no span (never runs); a repeated one belongs to two (runs twice).
 */
function nextRealTime(cron: Crontab, zone: Zone, from: number, horizon: number): number | null {
  const limit = from + horizon;
  let t = from;
  while (t < limit) {
    const offset = zone.offsetAt(t + 1);
    const end = zone.spanEnd(t + 1);
    const w = cron.nextWall(t + offset, Math.min(end, limit) + offset);
    if (w === w && w - offset < end) return w - offset <= limit ? w - offset : null;
    t = end - 1;
  }
  return null;
}

/**
 * Fixed hours: walk matching wall times in order and map each to one instant. A wall time inside
 * a gap maps to the instant the clock jumps (so several skipped matches, and a match at the jump
 * itself, collapse into one run); a repeated wall time maps to its first pass. The map is
 * monotonic, so the first match whose instant is after `from` is the answer; matches before it
 * only occur when `from` lies in the second pass of a repeated hour.
 */
function nextFixedHour(cron: Crontab, zone: Zone, from: number, horizon: number): number | null {
  const limit = from + horizon;
  let w = zone.wallAt(from);
  const wallLimit = w + horizon;
  for (;;) {
    w = cron.nextWall(w, wallLimit);
    if (w !== w) return null;
    let t = zone.instantOf(w, gap);
    if (t !== t) t = gap.transition;
    if (t > from) return t <= limit ? t : null;
  }
}
