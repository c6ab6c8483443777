import { ScheduleError } from './scheduleError.ts';

/**
 * What a crontab does when a daylight-saving change skips or repeats its local time. `classic` is
 * the rule of classic cron (docs/schedule.md): fixed hours shift a skipped time to the jump and
 * take the first pass of a repeated one; `*` hours follow real time (skip, both).
 */
export const DST_GAP_RULES = ['classic', 'shift', 'skip'] as const;
export const DST_OVERLAP_RULES = ['classic', 'first', 'last', 'both'] as const;
export type DstGapRule = (typeof DST_GAP_RULES)[number];
export type DstOverlapRule = (typeof DST_OVERLAP_RULES)[number];

export interface DstPolicy {
  readonly gap: DstGapRule;
  readonly overlap: DstOverlapRule;
}

export const CLASSIC_DST: DstPolicy = { gap: 'classic', overlap: 'classic' };

/** The rule a crontab actually follows once `classic` is resolved by its hour field. */
export interface ResolvedDst {
  readonly gap: 'shift' | 'skip';
  readonly overlap: 'first' | 'last' | 'both';
}

export function resolveDst(policy: DstPolicy, followsRealTime: boolean): ResolvedDst {
  return {
    gap: policy.gap === 'classic' ? (followsRealTime ? 'skip' : 'shift') : policy.gap,
    overlap: policy.overlap === 'classic' ? (followsRealTime ? 'both' : 'first') : policy.overlap,
  };
}

/** Checks a policy given from outside (API, CLI); throws ScheduleError naming the setting. */
export function checkDstPolicy(policy: { gap?: string; overlap?: string } | undefined): DstPolicy {
  const gap = policy?.gap || 'classic';
  const overlap = policy?.overlap || 'classic';
  if (!(DST_GAP_RULES as readonly string[]).includes(gap)) {
    throw new ScheduleError('dstGap', `'${gap}' is not a gap rule; use ${DST_GAP_RULES.join(', ')}`);
  }
  if (!(DST_OVERLAP_RULES as readonly string[]).includes(overlap)) {
    throw new ScheduleError('dstOverlap', `'${overlap}' is not an overlap rule; use ${DST_OVERLAP_RULES.join(', ')}`);
  }
  return { gap: gap as DstGapRule, overlap: overlap as DstOverlapRule };
}

/** How a daylight-saving change touched one run: moved to the jump, or at one pass of a repeated time. */
export type DstMark = { readonly kind: 'moved' } | { readonly kind: 'repeated'; readonly pass: 1 | 2 };
