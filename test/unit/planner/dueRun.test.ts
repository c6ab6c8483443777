import { equals, fromBinary } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { DueRunSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { evolveJob, type CronJob } from '../../../shared/job/index.ts';
import type { PlannedRun } from '../../../services/planner/catchUp.ts';
import { createDueRunEncoder, toDueRun } from '../../../services/planner/dueRun.ts';
import { jobCreated, jobEdited, failureCounted, SECOND, T0 } from './jobEvents.ts';

const created = (id: number) => evolveJob(null, jobCreated(id, T0, { httpHeaders: 'X-A: 1', postData: 'body', httpMethod: 'POST' }, 7))!;
const order = (job: CronJob, at: number, extra: Partial<PlannedRun> = {}): PlannedRun => ({
  jobId: job.id,
  runId: `${job.id}:${at}`,
  occurrenceAt: at,
  scheduledAt: at + 250,
  manual: false,
  payload: null,
  missed: 0,
  lateByMs: 0,
  ...extra,
});
const planning = { plannedAt: T0 - 40, planSince: T0 - 3600_000 };
const KEYS = [{ secret: 'sealed-current', validUntil: 0 }];

describe('due run encoding (each job target encoded once per version)', () => {
  it('decodes to the same due run as encoding it whole, for every field the run sets', () => {
    const encode = createDueRunEncoder();
    const job = created(1);
    for (const o of [order(job, T0), order(job, T0 + SECOND, { payload: 'p', missed: 3, lateByMs: 12_400.6, manual: true, skip: true })]) {
      const decoded = fromBinary(DueRunSchema, encode(job, o, planning, KEYS));
      expect(equals(DueRunSchema, decoded, toDueRun(job, o, planning, KEYS)), JSON.stringify(o)).to.equal(true);
    }
  });

  it('a later run of the same job carries its own instant and id with the job target', () => {
    const encode = createDueRunEncoder();
    const job = created(2);
    encode(job, order(job, T0), planning, KEYS);
    const second = fromBinary(DueRunSchema, encode(job, order(job, T0 + SECOND), planning, KEYS));
    expect(second.runId).to.equal(`2:${T0 + SECOND}`);
    expect(second.scheduledAt).to.equal(BigInt(T0 + SECOND + 250));
    expect(second.target?.url).to.equal('http://127.0.0.1/job/2');
    expect(second.target?.postData).to.equal('body');
  });

  it('an edit is in the next run: never a target of the version before', () => {
    const encode = createDueRunEncoder();
    const job = created(3);
    encode(job, order(job, T0), planning, KEYS);
    const counted = evolveJob(job, failureCounted(T0 + 1, 1))!;
    expect(fromBinary(DueRunSchema, encode(counted, order(counted, T0 + SECOND), planning, KEYS)).target?.url).to.equal('http://127.0.0.1/job/3');
    const edited = evolveJob(counted, jobEdited(T0 + 2, { url: 'http://127.0.0.1/edited' }))!;
    expect(fromBinary(DueRunSchema, encode(edited, order(edited, T0 + 2 * SECOND), planning, KEYS)).target?.url).to.equal('http://127.0.0.1/edited');
  });

  it('a rotated signing secret is in the next run, the previous one beside it until it expires', () => {
    const encode = createDueRunEncoder();
    const job = created(4);
    encode(job, order(job, T0), planning, KEYS);
    const rotated = [{ secret: 'sealed-new', validUntil: 0 }, { secret: 'sealed-current', validUntil: T0 + 86_400_000 }];
    const secrets = fromBinary(DueRunSchema, encode(job, order(job, T0 + SECOND), planning, rotated)).target?.signingSecrets;
    expect(secrets?.map((k) => [k.secret, Number(k.validUntil)])).to.deep.equal([['sealed-new', 0], ['sealed-current', T0 + 86_400_000]]);
    expect(fromBinary(DueRunSchema, encode(job, order(job, T0 + 2 * SECOND), planning, [])).target?.signingSecrets).to.deep.equal([]);
  });

  it('past its capacity it forgets the oldest job and still encodes every job right', () => {
    const encode = createDueRunEncoder(1);
    const jobs = [created(5), created(6)];
    for (const at of [T0, T0 + SECOND, T0 + 2 * SECOND]) {
      for (const job of jobs) {
        const o = order(job, at);
        expect(equals(DueRunSchema, fromBinary(DueRunSchema, encode(job, o, planning, KEYS)), toDueRun(job, o, planning, KEYS))).to.equal(true);
      }
    }
  });
});
