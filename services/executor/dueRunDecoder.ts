import { fromBinary } from '@bufbuild/protobuf';
import { BinaryReader } from '@bufbuild/protobuf/wire';
import { DueRunSchema, type DueRun, type RunTarget } from '../../shared/gen/tock/v1/events_pb.ts';

const TARGET_FIELD = 2;

/** Where the message's one `target` field lies (its tag to its end), or null: none, or more than one to merge. */
function targetSpan(data: Uint8Array): [number, number] | null {
  const reader = new BinaryReader(data);
  let span: [number, number] | null = null;
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const [field, wireType] = reader.tag();
    reader.skip(wireType, field);
    if (field !== TARGET_FIELD) continue;
    if (span) return null;
    span = [start, reader.pos];
  }
  return span;
}

/** Shared between runs, so written by none: a write throws (modules are strict) instead of reaching another run. */
function frozen(target: RunTarget): RunTarget {
  for (const key of target.signingSecrets) Object.freeze(key);
  Object.freeze(target.signingSecrets);
  return Object.freeze(target);
}

/**
 * Decodes due runs, each job's target once per version of its bytes: the runs of a job share one
 * decoded target (the planner encodes it once per version, dueRun.ts). That is most of a due run's
 * decoding, and most of what a run waiting for its instant holds, so less for the collector to
 * copy while thousands wait. Shared, so frozen. Bounded: the jobs that run often stay.
 */
export function createDueRunDecoder(capacity = 10_000) {
  const targets = new Map<string, RunTarget>();
  return (data: Uint8Array): DueRun => {
    const span = targetSpan(data);
    if (!span) return fromBinary(DueRunSchema, data);
    const [start, end] = span;
    const key = Buffer.from(data.buffer, data.byteOffset + start, end - start).toString('latin1');
    let target = targets.get(key);
    if (!target) {
      target = frozen(fromBinary(DueRunSchema, data.subarray(start, end)).target!);
      targets.set(key, target);
      if (targets.size > capacity) targets.delete(targets.keys().next().value!);
    }
    const rest = end === data.length ? data.subarray(0, start) : Buffer.concat([data.subarray(0, start), data.subarray(end)]);
    const run = fromBinary(DueRunSchema, rest);
    run.target = target;
    return run;
  };
}
