import { create, toBinary } from '@bufbuild/protobuf';
import { DueRunSchema, SkipReason, type DueRun } from '../../shared/gen/tock/v1/events_pb.ts';
import { targetOf, type CronJob } from '../../shared/job/index.ts';
import type { SigningKey } from '../../shared/signing.ts';
import type { PlannedRun } from './catchUp.ts';

/**
 * The edge between the planner's domain and the wire: a run order plus a snapshot of what the
 * executor needs to call the job (taken when the run falls due, so an edit made before then
 * counts and one made after does not).
 */
/** When a run was put on the bus, and the job change (`since`) its plan follows. */
export interface Planning {
  plannedAt: number;
  planSince: number;
}
const UNPLANNED: Planning = { plannedAt: 0, planSince: 0 };

export function toDueRun(job: CronJob, order: PlannedRun, planning: Planning = UNPLANNED, keys: readonly SigningKey[] = NO_KEYS): DueRun {
  return create(DueRunSchema, {
    runId: order.runId,
    // The settings the table marks as the request's (`target`), copied as one literal.
    target: {
      jobId: BigInt(job.id),
      accountId: BigInt(job.accountId),
      ...targetOf(job.settings),
      signingSecrets: keys.map((k) => ({ secret: k.secret, validUntil: BigInt(k.validUntil) })),
    },
    scheduledAt: BigInt(order.scheduledAt),
    occurrenceAt: BigInt(order.occurrenceAt),
    payload: order.payload ?? undefined,
    missed: order.missed,
    lateByMs: BigInt(Math.max(0, Math.round(order.lateByMs))),
    manual: order.manual,
    plannedAt: BigInt(planning.plannedAt),
    planSince: BigInt(planning.planSince),
    skip: order.skip ? SkipReason.ACCOUNT_DISABLED : SkipReason.UNSPECIFIED,
  });
}

const NO_KEYS: readonly SigningKey[] = [];

export const encodeDueRun = (job: CronJob, order: PlannedRun, planning: Planning = UNPLANNED, keys: readonly SigningKey[] = NO_KEYS): Uint8Array =>
  toBinary(DueRunSchema, toDueRun(job, order, planning, keys));

/** Encoding deferred to the publish (see Outgoing). A returned arrow, not a named one: tsx would
 * give a named closure its name at run time, once per run. */
export const encodeLater = (job: CronJob, order: PlannedRun, planning: Planning, keys: readonly SigningKey[]) => () => encodeDueRun(job, order, planning, keys);
