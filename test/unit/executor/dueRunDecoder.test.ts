import { create, equals, fromBinary, toBinary } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { DueRunSchema, type DueRun } from '../../../shared/gen/tock/v1/events_pb.ts';
import { evolveJob } from '../../../shared/job/index.ts';
import { createDueRunDecoder } from '../../../services/executor/dueRunDecoder.ts';
import { retryOf } from '../../../services/executor/dueRunMessages.ts';
import { createDueRunEncoder } from '../../../services/planner/dueRun.ts';
import { jobCreated, jobEdited, T0 } from '../planner/jobEvents.ts';

const KEYS = [{ secret: 'sealed-current', validUntil: 0 }];
const planning = { plannedAt: T0 - 40, planSince: T0 - 3600_000 };
const order = (jobId: number, at: number) => ({ jobId, runId: `${jobId}:${at}`, occurrenceAt: at, scheduledAt: at, manual: false, payload: null, missed: 0, lateByMs: 0 });
const job = (id: number) => evolveJob(null, jobCreated(id, T0, { httpHeaders: 'X-A: 1', postData: 'body' }, 7))!;
const same = (a: DueRun, b: DueRun) => equals(DueRunSchema, a, b);

describe('due run decoding (the runs of a job share its decoded target)', () => {
  it('reads what the planner wrote exactly as a whole decoding does', () => {
    const encode = createDueRunEncoder();
    const decode = createDueRunDecoder();
    for (const at of [T0, T0 + 1000]) {
      const bytes = encode(job(1), order(1, at), planning, KEYS);
      expect(same(decode(bytes), fromBinary(DueRunSchema, bytes))).to.equal(true);
    }
  });

  it('reads a target anywhere in the message (a retry, encoded whole), and a run without one', () => {
    const decode = createDueRunDecoder();
    const first = fromBinary(DueRunSchema, createDueRunEncoder()(job(2), order(2, T0), planning, KEYS));
    const retry = toBinary(DueRunSchema, retryOf(first, T0 + 10_000));
    expect(same(decode(retry), fromBinary(DueRunSchema, retry))).to.equal(true);
    const bare = toBinary(DueRunSchema, create(DueRunSchema, { runId: 'x', scheduledAt: BigInt(T0) }));
    expect(decode(bare).target).to.equal(undefined);
  });

  it('merges a target written twice, as protobuf says, instead of taking either', () => {
    const decode = createDueRunDecoder();
    const a = toBinary(DueRunSchema, create(DueRunSchema, { runId: 'r', target: { url: 'http://a.example/', timeout: 5 } }));
    const b = toBinary(DueRunSchema, create(DueRunSchema, { target: { httpMethod: 'POST' } }));
    const both = new Uint8Array([...a, ...b]);
    const decoded = decode(both);
    expect(decoded.target).to.include({ url: 'http://a.example/', timeout: 5, httpMethod: 'POST' });
    expect(same(decoded, fromBinary(DueRunSchema, both))).to.equal(true);
  });

  it("shares one target between a job's runs, and an edited job's next run has the new one", () => {
    const encode = createDueRunEncoder();
    const decode = createDueRunDecoder();
    const before = job(3);
    const one = decode(encode(before, order(3, T0), planning, KEYS));
    const two = decode(encode(before, order(3, T0 + 1000), planning, KEYS));
    expect(two.target).to.equal(one.target);
    expect(() => Object.assign(two.target!, { url: 'http://elsewhere/' })).to.throw(TypeError);
    expect(() => two.target!.signingSecrets.push({ secret: 'x' } as never)).to.throw(TypeError);
    expect(two.runId).to.equal(`3:${T0 + 1000}`);
    const edited = evolveJob(before, jobEdited(T0 + 1, { url: 'http://127.0.0.1/edited' }))!;
    const three = decode(encode(edited, order(3, T0 + 2000), planning, KEYS));
    expect(three.target?.url).to.equal('http://127.0.0.1/edited');
    expect(one.target?.url).to.equal('http://127.0.0.1/job/3');
  });

  it('past its capacity it forgets the oldest target and still reads every run right', () => {
    const encode = createDueRunEncoder();
    const decode = createDueRunDecoder(1);
    for (const at of [T0, T0 + 1000]) {
      for (const id of [4, 5]) {
        const bytes = encode(job(id), order(id, at), planning, KEYS);
        expect(same(decode(bytes), fromBinary(DueRunSchema, bytes))).to.equal(true);
      }
    }
  });
});
