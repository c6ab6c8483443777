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
const NO_KEYS: readonly SigningKey[] = [];

// The settings the table marks as the request's (`target`), copied as one literal.
const targetInit = (job: CronJob, keys: readonly SigningKey[]) => ({
  jobId: BigInt(job.id),
  accountId: BigInt(job.accountId),
  ...targetOf(job.settings),
  signingSecrets: keys.map((k) => ({ secret: k.secret, validUntil: BigInt(k.validUntil) })),
});

/** Every field of the due run but its target: what changes from one run to the next. */
const runInit = (order: PlannedRun, planning: Planning) => ({
  runId: order.runId,
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

export function toDueRun(job: CronJob, order: PlannedRun, planning: Planning = UNPLANNED, keys: readonly SigningKey[] = NO_KEYS): DueRun {
  return create(DueRunSchema, { ...runInit(order, planning), target: targetInit(job, keys) });
}

const sameKeys = (a: readonly SigningKey[], b: readonly SigningKey[]) => a.length === b.length && a.every((k, i) => k.secret === b[i]!.secret && k.validUntil === b[i]!.validUntil);

export type DueRunEncoder = (job: CronJob, order: PlannedRun, planning: Planning, keys?: readonly SigningKey[]) => Uint8Array;

/**
 * Encodes due runs, each job's target once per version of its settings and signing keys, not once
 * per run: the target (URL, headers, body, sealed secrets) is most of a due run's bytes and most of
 * its encoding. A message's encoding followed by another's decodes as the two merged (protobuf's
 * rule for concatenated messages), so the run's own fields and the target's bytes are joined as
 * they are. The job state is immutable (evolveJob makes new objects): an edit is a new `settings`.
 * Bounded: the jobs that run often stay, the others are encoded again when they come back.
 */
export function createDueRunEncoder(capacity = 20_000): DueRunEncoder {
  const targets = new Map<number, { settings: CronJob['settings']; keys: readonly SigningKey[]; bytes: Uint8Array }>();
  const targetBytes = (job: CronJob, keys: readonly SigningKey[]) => {
    const cached = targets.get(job.id);
    if (cached && cached.settings === job.settings && sameKeys(cached.keys, keys)) return cached.bytes;
    const bytes = toBinary(DueRunSchema, create(DueRunSchema, { target: targetInit(job, keys) }));
    targets.delete(job.id);
    targets.set(job.id, { settings: job.settings, keys, bytes });
    if (targets.size > capacity) targets.delete(targets.keys().next().value!);
    return bytes;
  };
  return (job, order, planning, keys = NO_KEYS) => {
    const run = toBinary(DueRunSchema, create(DueRunSchema, runInit(order, planning)));
    const target = targetBytes(job, keys);
    const bytes = new Uint8Array(run.length + target.length);
    bytes.set(run);
    bytes.set(target, run.length);
    return bytes;
  };
}

/** Encoding deferred to the publish (see Outgoing). A returned arrow, not a named one: tsx would
 * give a named closure its name at run time, once per run. */
export const encodeLater = (encode: DueRunEncoder, job: CronJob, order: PlannedRun, planning: Planning, keys: readonly SigningKey[]) => () => encode(job, order, planning, keys);
