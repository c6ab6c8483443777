/**
 * The one behavioural contract of the logs read model port (services/logs/logsView.ts), run
 * against every adapter (test/contract/logsView.test.ts).
 */
import { equals } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { isAppError } from '../../shared/errors.ts';
import { ExecutionOutcome, ExecutionSchema } from '../../shared/gen/tock/v1/events_pb.ts';
import type { LogsQuery, LogsView, LogsViewOptions } from '../../services/logs/logsView.ts';
import { T0, execution, failure } from '../unit/logs/executions.ts';
import { nth } from '../support/nth.ts';
import { rejection } from '../support/rejection.ts';
import { modelContract } from './logsViewModelContract.ts';

const DAY = 86_400n;
const runIds = async (view: LogsView, q: Partial<LogsQuery> = {}) =>
  (await view.query({ accountId: 1n, jobId: 1n, ...q })).map((e) => e.execution.runId);
/** n executions of job 1, one a minute from T0, run ids r0..r(n-1). */
const series = (n: number, from = 0) => Array.from({ length: n }, (_, i) => execution({ runId: `r${from + i}`, time: T0 + BigInt(60 * (from + i)) }));
const all = (executions: ReturnType<typeof execution>[]) => executions.map((execution) => ({ execution }));

export interface LogsViewFixture {
  /** Opens a view on the store named `place` (another open of the same name sees the same data); a fresh one when absent. */
  open(options?: LogsViewOptions, place?: string): Promise<LogsView>;
  /** Removes every store this fixture opened. */
  cleanup(): Promise<void>;
  /** Runs of the model-based property (each one opens a fresh store). */
  propertyRuns: number;
}

export function logsViewContract(name: string, fixture: () => LogsViewFixture) {
  describe(`LogsView contract: ${name}`, function () {
    this.timeout(120_000);
    let stores: LogsViewFixture;
    let view: LogsView;
    beforeEach(async () => {
      stores = fixture();
      view = await stores.open();
    });
    afterEach(async () => {
      await view.close();
      await stores.cleanup();
    });

    describe('recording', () => {
      it('stores a redelivered execution once and says it was a duplicate', async () => {
        const e = execution({ runId: '1:1000' });
        expect(await view.record(e)).to.equal(true);
        expect(await view.record(execution({ runId: '1:1000', output: 'a second copy' }))).to.equal(false);
        expect(await view.recordMany([{ execution: execution({ runId: '1:2000' }) }, { execution: execution({ runId: '1:2000' }) }])).to.deep.equal([true, false]);
        expect(await view.size()).to.deep.equal({ log: 2, failures: 0 });
        expect((await view.query({ accountId: 1n, jobId: 1n })).find((x) => x.execution.runId === '1:1000')!.execution.output).to.equal('ok');
      });

      it('gives back every field as recorded', async () => {
        const e = failure({ runId: 'all', payload: 'a=1', lateByMs: 1500n, downloaded: 12345n, manual: true, missed: 3, executionTime: 1.5 });
        const bare = execution({ runId: 'bare', payload: undefined });
        await view.recordMany([{ execution: e }, { execution: bare }]);
        const got = new Map((await view.query({ accountId: 1n })).map((x) => [x.execution.runId, x.execution]));
        expect(equals(ExecutionSchema, got.get('all')!, e)).to.equal(true);
        expect(got.get('bare')!.payload).to.equal(undefined);
        expect(equals(ExecutionSchema, (await view.query({ accountId: 1n, failuresOnly: true }))[0]!.execution, e)).to.equal(true);
      });

      it('keeps the bytes it is given: fields this version does not know read back', async () => {
        const sent = new Uint8Array([...(await import('@bufbuild/protobuf')).toBinary(ExecutionSchema, execution({ runId: 'newer' })), 0x98, 0x06, 0x07]);
        await view.recordMany([{ execution: execution({ runId: 'newer' }), data: sent }]);
        const stored = nth(await view.query({ accountId: 1n }));
        expect(stored.execution.$unknown?.map((u) => [u.no, [...u.data]])).to.deep.equal([[99, [0x07]]]);
      });

      it('uses the id it is given when free, and a fresh one when taken', async () => {
        expect(await view.record(execution({ runId: 'a' }), { id: 7 })).to.equal(true);
        await view.record(execution({ runId: 'b', time: T0 + 1n }), { id: 7 });
        await view.record(execution({ runId: 'c', time: T0 + 2n }));
        expect((await view.query({ accountId: 1n })).map((e) => [e.execution.runId, e.id])).to.deep.equal([['c', 9], ['b', 8], ['a', 7]]);
      });

      it('refuses an execution that could never be found, and records nothing of its batch', async () => {
        for (const bad of [execution({ runId: '' }), execution({ jobId: 0n, runId: 'x' }), execution({ accountId: 0n })]) {
          expect(await rejection(view.recordMany([{ execution: execution({ runId: 'fine' }) }, { execution: bad }]))).to.satisfy(isAppError);
        }
        expect(await view.size()).to.deep.equal({ log: 0, failures: 0 });
        expect(await view.record(execution({ runId: 'fine' }))).to.equal(true);
      });
    });

    describe('summaries', () => {
      it("gives each asked job's newest result, newest outcomes and counts since an instant, in the order asked", async () => {
        const of = (jobId: bigint, i: number, failed: boolean) =>
          (failed ? failure : execution)({ runId: `${jobId}:${i}`, jobId, time: T0 + BigInt(60 * i), output: `run ${i}` });
        // Job 1: 25 runs, every 5th failed; job 2: one failure; job 3: nothing; job 4: another account's.
        await view.recordMany(all(Array.from({ length: 25 }, (_, i) => of(1n, i, i % 5 === 4))));
        await view.recordMany(all([of(2n, 3, true), execution({ runId: 'other', jobId: 4n, accountId: 2n })]));
        const got = await view.summaries({ accountId: 1n, jobIds: [3n, 1n, 2n, 4n], recent: 20, since: Number(T0) + 60 * 15 });
        expect(got.map((s) => s.jobId)).to.deep.equal([3n, 1n, 2n, 4n]);
        const [none, one, two, foreign] = got;
        expect(none).to.deep.include({ last: undefined, recent: [], runsSince: 0, failuresSince: 0 });
        expect(one!.last!.execution.runId).to.equal('1:24');
        expect(one!.recent).to.have.length(20);
        expect(one!.recent.slice(0, 6)).to.deep.equal([2, 1, 1, 1, 1, 2].map((o) => o as ExecutionOutcome));
        expect(one).to.include({ runsSince: 10, failuresSince: 2 });
        expect(two!.last!.execution.output).to.equal('run 3');
        expect(two).to.deep.include({ recent: [ExecutionOutcome.FAILED], runsSince: 0, failuresSince: 0 });
        expect(foreign).to.deep.include({ last: undefined, recent: [] });
        expect(await view.summaries({ accountId: 1n, jobIds: [], recent: 20, since: 0 })).to.deep.equal([]);
        expect(one).to.deep.include({ runsByHour: [], failuresByHour: [] });
      });

      it('counts runs and failures per asked hour, oldest first, within the hours asked only', async () => {
        const hour = Number(T0);
        const at = (jobId: bigint, s: number, failed = false) => (failed ? failure : execution)({ runId: `${jobId}:${s}`, jobId, time: BigInt(hour + s) });
        // Job 1: two runs (one failed) in the first hour, none in the second, three in the third
        // (the last failed), one just past the asked hours and one just before them.
        await view.recordMany(all([at(1n, -1), at(1n, 0), at(1n, 3599, true), at(1n, 7200), at(1n, 7300), at(1n, 10_799, true), at(1n, 10_800)]));
        await view.recordMany(all([at(2n, 60, true), execution({ runId: 'foreign', jobId: 1n, accountId: 2n, time: BigInt(hour + 60) })]));
        const [one, two, none] = await view.summaries({ accountId: 1n, jobIds: [1n, 2n, 3n], recent: 5, since: 0, hours: { from: hour, count: 3 } });
        expect(one).to.deep.include({ runsByHour: [2, 0, 3], failuresByHour: [1, 0, 1] });
        expect(two).to.deep.include({ runsByHour: [1, 0, 0], failuresByHour: [1, 0, 0] });
        expect(none).to.deep.include({ runsByHour: [0, 0, 0], failuresByHour: [0, 0, 0] });
        // Counted since an instant inside the asked hours: the day's counts start there, the hours do not.
        const [mid] = await view.summaries({ accountId: 1n, jobIds: [1n], recent: 5, since: hour + 7200, hours: { from: hour, count: 3 } });
        expect(mid).to.deep.include({ runsSince: 4, failuresSince: 1, runsByHour: [2, 0, 3], failuresByHour: [1, 0, 1] });
        // Hours that start after the instant, and an instant before 1970.
        const [late] = await view.summaries({ accountId: 1n, jobIds: [1n], recent: 5, since: hour - 10, hours: { from: hour + 3600, count: 2 } });
        expect(late).to.deep.include({ runsSince: 7, failuresSince: 2, runsByHour: [0, 3], failuresByHour: [0, 1] });
        const [always] = await view.summaries({ accountId: 1n, jobIds: [1n], recent: 5, since: -1e18, hours: { from: -1e18, count: 2 } });
        expect(always).to.deep.include({ runsSince: 7, failuresSince: 2, runsByHour: [0, 0], failuresByHour: [0, 0] });
        // At most a week of hours.
        const [week] = await view.summaries({ accountId: 1n, jobIds: [1n], recent: 1, since: 0, hours: { from: hour, count: 1000 } });
        expect(week!.runsByHour).to.have.length(168);
      });
    });

    describe('querying', () => {
      it('answers newest first by scheduled time, then by arrival', async () => {
        await view.record(execution({ runId: 'mid', time: T0 + 60n }));
        await view.record(execution({ runId: 'old', time: T0 }));
        await view.record(execution({ runId: 'new', time: T0 + 120n }));
        await view.record(execution({ runId: 'mid-later', time: T0 + 60n }));
        expect(await runIds(view)).to.deep.equal(['new', 'mid-later', 'mid', 'old']);
      });

      it('pages with a 1-based page, limit 100 by default and at most 1000', async () => {
        await view.recordMany(all(series(1200)));
        expect(await runIds(view)).to.have.length(100);
        expect(await runIds(view, { limit: 5000 })).to.have.length(1000);
        expect(await runIds(view, { limit: 3 })).to.deep.equal(['r1199', 'r1198', 'r1197']);
        expect(await runIds(view, { limit: 3, page: 2 })).to.deep.equal(['r1196', 'r1195', 'r1194']);
        expect(await runIds(view, { limit: 500, page: 3 })).to.have.length(0); // the job keeps 1000
        for (const limit of [0, -1, NaN, Infinity]) expect(await runIds(view, { limit })).to.have.length(100);
        for (const page of [0, -3, NaN]) expect(await runIds(view, { page, limit: 1 })).to.deep.equal(['r1199']);
        expect(await runIds(view, { page: 1e300, limit: 1000 })).to.deep.equal([]);
        expect(await runIds(view, { page: 2.7, limit: 2 })).to.deep.equal(['r1197', 'r1196']);
      });

      it('searches the keyword, ignoring case, in output, error, IP, HTTP status and run time', async () => {
        await view.recordMany(
          all([
            execution({ runId: 'out', output: 'Deploy DONE: Échec évité' }),
            failure({ runId: 'err', error: 'Connection refused by 198.51.100.7', ip: '', time: T0 + DAY }),
            execution({ runId: 'ip', ip: '2001:DB8::1', time: T0 + 2n * DAY }),
            execution({ runId: 'status', httpStatus: 204, output: '', time: T0 + 3n * DAY }),
          ]),
        );
        const find = async (keyword: string) => (await runIds(view, { keyword })).sort();
        expect(await find('deploy done')).to.deep.equal(['out']);
        expect(await find('ÉCHEC')).to.deep.equal(['out']); // beyond ASCII too
        expect(await find('REFUSED')).to.deep.equal(['err']);
        expect(await find('198.51.100.7')).to.deep.equal(['err']);
        expect(await find('2001:db8')).to.deep.equal(['ip']);
        expect(await find('204')).to.deep.equal(['status']);
        expect(await find('2024-10-16')).to.deep.equal(['out']);
        expect(await find('2024-10-17T08:30')).to.deep.equal(['err']);
        expect(await find('2024-10-18 08:30:00')).to.deep.equal(['ip']);
        expect(await find('2024-10-19t08')).to.deep.equal(['status']);
        expect(await find(String(T0 + DAY))).to.deep.equal(['err']);
        expect(await find('')).to.have.length(4);
        expect(await find('nowhere')).to.deep.equal([]);
        expect(await find('%')).to.deep.equal([]); // no pattern language: a wildcard is a character
        expect(await find('ok\u001f')).to.deep.equal([]); // fields are searched one by one, never across two
      });

      it("never shows another account's results", async () => {
        await view.record(execution({ runId: 'mine', accountId: 1n, jobId: 1n }));
        await view.record(failure({ runId: 'theirs', accountId: 2n, jobId: 2n }));
        expect(await runIds(view, { accountId: 2n, jobId: 1n })).to.deep.equal([]);
        expect(await runIds(view, { accountId: 1n, jobId: 2n, failuresOnly: true })).to.deep.equal([]);
        expect(await runIds(view, { accountId: 1n, jobId: 0n, failuresOnly: true })).to.deep.equal([]);
        expect(await runIds(view, { accountId: 2n, jobId: 0n, failuresOnly: true })).to.deep.equal(['theirs']);
        expect(await runIds(view, { accountId: 2n ** 70n, jobId: -1 })).to.deep.equal([]); // nonsense ids match nothing
      });

      it('lists failures of one job, or of every job of the account when the job id is 0', async () => {
        await view.recordMany(
          all([
            failure({ runId: 'j1-f', jobId: 1n, time: T0 }),
            execution({ runId: 'j1-ok', jobId: 1n, time: T0 + 1n }),
            failure({ runId: 'j2-f', jobId: 2n, time: T0 + 2n }),
            execution({ runId: 'j2-skip', jobId: 2n, outcome: ExecutionOutcome.SKIPPED, time: T0 + 3n }),
          ]),
        );
        expect(await runIds(view, { failuresOnly: true })).to.deep.equal(['j1-f']);
        expect(await runIds(view, { jobId: 2n, failuresOnly: true })).to.deep.equal(['j2-f']);
        expect(await runIds(view, { jobId: 0n, failuresOnly: true })).to.deep.equal(['j2-f', 'j1-f']);
        expect(await runIds(view, { jobId: 0n, failuresOnly: true, keyword: '2024-10-16' })).to.deep.equal(['j2-f', 'j1-f']);
        expect(await runIds(view, { jobId: 2n })).to.deep.equal(['j2-skip', 'j2-f']);
      });
    });

    describe('retention', () => {
      it('keeps the last 1000 results per job and, apart from them, its failures', async () => {
        const failures = Array.from({ length: 5 }, (_, i) => failure({ runId: `f${i}`, time: T0 - 3600n + BigInt(i) }));
        await view.recordMany(all([...failures, ...series(2000)]));
        await view.record(execution({ runId: 'other-job', jobId: 2n }));
        expect(await view.size()).to.deep.equal({ log: 1001, failures: 5 });
        const log = await runIds(view, { limit: 1000 });
        expect(log[0]).to.equal('r1999');
        expect(log.at(-1)).to.equal('r1000');
        expect(await runIds(view, { failuresOnly: true })).to.deep.equal(['f4', 'f3', 'f2', 'f1', 'f0']);
        expect(await runIds(view, { jobId: 2n })).to.deep.equal(['other-job']);
      });

      it('never gives an id twice, even one whose entry was pruned as soon as it was written', async () => {
        const small = await stores.open({ keepPerJob: 1, keepFailuresPerJob: 1 });
        try {
          await small.record(execution({ runId: 'new', time: T0 }));
          await small.record(execution({ runId: 'late', time: T0 - 60n })); // pruned at once: older than the one kept
          await small.record(execution({ runId: 'next', jobId: 2n, time: T0 }));
          const ids = (await small.query({ accountId: 1n })).map((e) => [e.execution.runId, e.id]);
          expect(ids).to.deep.equal([['next', 3], ['new', 1]]);
        } finally {
          await small.close();
        }
      });

      it('keeps the newest by scheduled time: a late old result does not push out a newer one', async () => {
        const small = await stores.open({ keepPerJob: 3, keepFailuresPerJob: 2 });
        try {
          await small.recordMany(all(series(3)));
          expect(await small.record(execution({ runId: 'late', time: T0 - 60n }))).to.equal(true);
          expect(await runIds(small)).to.deep.equal(['r2', 'r1', 'r0']);
          for (let i = 0; i < 4; i++) await small.record(failure({ runId: `f${i}`, time: T0 + 1000n + BigInt(i) }));
          expect(await runIds(small, { failuresOnly: true })).to.deep.equal(['f3', 'f2']);
          expect(await runIds(small)).to.deep.equal(['f3', 'f2', 'f1']);
          // f2 left nothing behind in the log but is still held as a failure: a redelivery is a duplicate.
          await small.recordMany(all(series(3, 100)));
          expect(await small.record(failure({ runId: 'f2', time: T0 + 1002n }))).to.equal(false);
        } finally {
          await small.close();
        }
      });

      it('applies a lowered setting to every job when opened again, and keeps meta', async () => {
        const first = await stores.open({}, 'reopened');
        const failures = Array.from({ length: 4 }, (_, i) => failure({ runId: `f${i}`, time: T0 - BigInt(i) }));
        await first.recordMany(all([...series(10), ...failures]));
        await first.setMeta('durable', 'logs-abc');
        await first.close();
        const again = await stores.open({ keepPerJob: 4, keepFailuresPerJob: 2 }, 'reopened');
        try {
          expect(await again.getMeta('durable')).to.equal('logs-abc');
          expect(await again.size()).to.deep.equal({ log: 4, failures: 2 });
          expect(await runIds(again)).to.deep.equal(['r9', 'r8', 'r7', 'r6']);
          expect(await runIds(again, { failuresOnly: true })).to.deep.equal(['f0', 'f1']);
        } finally {
          await again.close();
        }
      });

      it('refuses a keep setting below 1', async () => {
        expect(await rejection(stores.open({ keepPerJob: 0 }))).to.match(/keepPerJob/);
      });
    });

    describe('meta', () => {
      it('lets the first claim of a key win and tells the others its value', async () => {
        expect(await view.getMeta('durable')).to.equal(undefined);
        const claims = await Promise.all(['logs-a', 'logs-b', 'logs-c'].map((v) => view.claimMeta('durable', v)));
        expect(new Set(claims).size).to.equal(1);
        expect(await view.getMeta('durable')).to.equal(claims[0]);
        await view.setMeta('durable', 'logs-z');
        expect(await view.claimMeta('durable', 'logs-y')).to.equal('logs-z');
      });
    });

    modelContract(() => stores);
  });
}
