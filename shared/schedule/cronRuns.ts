import type { Crontab } from './crontab.ts';
import { CLASSIC_DST, resolveDst, type DstPolicy, type ResolvedDst } from './dstPolicy.ts';
import type { GapInfo, Zone } from './zone.ts';

const gap: GapInfo = { transition: 0, offsetBefore: 0 };

/**
 * The first run of `cron` in `zone` strictly after the instant `from`, no later than
 * `from + horizon`; null when there is none. Implements the DST rules of docs/schedule.md: the
 * classic ones by the hour field, or the job's own choice for gaps and overlaps.
 */
export function nextCronRun(cron: Crontab, zone: Zone, from: number, horizon: number, policy: DstPolicy = CLASSIC_DST): number | null {
  if (zone.isUtc) {
    const w = cron.nextWall(from, from + horizon);
    return w === w ? w : null;
  }
  const rule = resolveDst(policy, cron.followsRealTime);
  // The two classic rules have walks of their own that need no per-wall checks.
  if (rule.gap === 'skip' && rule.overlap === 'both') return nextRealTime(cron, zone, from, horizon);
  if (rule.gap === 'shift' && rule.overlap === 'first') return nextFixedHour(cron, zone, from, horizon);
  return nextByRule(cron, zone, from, horizon, rule);
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

/**
 * Any combination of rules: walk the spans of constant offset as nextRealTime does (which gives
 * skip and both), and at each change of offset apply the rule. A wall time repeated by a
 * backward change lies in two spans: `first` drops it from the later span, `last` from the
 * earlier. Wall times skipped by a forward change lie in no span: `shift` runs once at the jump
 * when any of them matches (a match at the jump itself is the same run).
 */
export function nextByRule(cron: Crontab, zone: Zone, from: number, horizon: number, rule: ResolvedDst): number | null {
  const limit = from + horizon;
  let t = from;
  while (t < limit) {
    const offset = zone.offsetAt(t + 1);
    const end = zone.spanEnd(t + 1);
    const after = end === Infinity ? offset : zone.offsetAt(end);
    // Walls at or past `lastWall` come again after a backward change: `last` takes them there.
    const lastWall = rule.overlap === 'last' && after < offset ? end + after : end + offset;
    let w = t + offset;
    for (;;) {
      w = cron.nextWall(w, Math.min(lastWall, limit + offset));
      if (w !== w || w >= lastWall) break;
      const run = w - offset;
      if (run > limit) return null;
      // A second pass: the zone maps this wall time to an earlier instant.
      if (rule.overlap === 'first' && zone.instantOf(w) < run) continue;
      return run;
    }
    if (end > limit) return null;
    if (rule.gap === 'shift' && after > offset && end > from) {
      const skipped = cron.nextWall(end + offset - 1, end + after);
      if (skipped === skipped && skipped < end + after) return end;
    }
    t = end - 1;
  }
  return null;
}
