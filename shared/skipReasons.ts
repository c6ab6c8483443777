import { SkipReason } from './gen/tock/v1/events_pb.ts';

/**
 * The one list of reasons a run is skipped, by the name the API, the metric label
 * (`tock_runs_skipped_total{reason}`) and notifications give each. A fixed set: a new reason is a
 * new enum value and a new row here.
 */
export const SKIP_REASON_NAMES = {
  [SkipReason.INSTANCES]: 'instances',
  [SkipReason.FAIR_SHARE]: 'fair_share',
  [SkipReason.ACCOUNT_DISABLED]: 'account_disabled',
} as const satisfies Record<Exclude<SkipReason, SkipReason.UNSPECIFIED>, string>;

export type SkipReasonName = (typeof SKIP_REASON_NAMES)[keyof typeof SKIP_REASON_NAMES];

/** The reason's name, or null for none (a run that was not skipped, or a reason this build does not know). */
export const skipReasonName = (reason: SkipReason): SkipReasonName | null =>
  reason === SkipReason.UNSPECIFIED ? null : (SKIP_REASON_NAMES[reason] ?? null);
