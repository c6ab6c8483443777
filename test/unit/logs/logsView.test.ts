import { equals } from '@bufbuild/protobuf';
import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAppError } from '../../../shared/errors.ts';
import { ExecutionOutcome, ExecutionSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { LogsView, type LogsQuery } from '../../../services/logs/logsView.ts';
import { T0, execution, failure } from './executions.ts';
import { LogsModel } from './logsModel.ts';

const DAY = 86_400n;
const runIds = (view: LogsView, q: Partial<LogsQuery> = {}) => view.query({ accountId: 1n, jobId: 1n, ...q }).map((e) => e.execution.runId);
/** n executions of job 1, one a minute from T0, run ids r0..r(n-1). */
const series = (n: number, from = 0) => Array.from({ length: n }, (_, i) => execution({ runId: `r${from + i}`, time: T0 + BigInt(60 * (from + i)) }));

describe('LogsView', () => {
  let view: LogsView;
  beforeEach(() => (view = new LogsView(':memory:')));
  afterEach(() => view.close());

  describe('recording', () => {
    it('stores a redelivered execution once and says it was a duplicate', () => {
      const e = execution({ runId: '1:1000' });
      expect(view.record(e)).to.equal(true);
      expect(view.record(execution({ runId: '1:1000', output: 'a second copy' }))).to.equal(false);
      expect(view.recordMany([{ execution: execution({ runId: '1:2000' }) }, { execution: execution({ runId: '1:2000' }) }])).to.deep.equal([true, false]);
      expect(view.size()).to.deep.equal({ log: 2, failures: 0 });
      expect(view.query({ accountId: 1n, jobId: 1n }).find((x) => x.execution.runId === '1:1000')!.execution.output).to.equal('ok');
    });

    it('gives back every field as recorded', () => {
      const e = failure({ runId: 'all', payload: 'a=1', lateByMs: 1500n, downloaded: 12345n, manual: true, missed: 3, executionTime: 1.5 });
      const bare = execution({ runId: 'bare', payload: undefined });
      view.recordMany([{ execution: e }, { execution: bare }]);
      const got = new Map(view.query({ accountId: 1n }).map((x) => [x.execution.runId, x.execution]));
      expect(equals(ExecutionSchema, got.get('all')!, e)).to.equal(true);
      expect(got.get('bare')!.payload).to.equal(undefined);
      expect(equals(ExecutionSchema, view.query({ accountId: 1n, failuresOnly: true })[0].execution, e)).to.equal(true);
    });

    it('uses the id it is given when free, and a fresh one when taken', () => {
      expect(view.record(execution({ runId: 'a' }), { id: 7 })).to.equal(true);
      view.record(execution({ runId: 'b', time: T0 + 1n }), { id: 7 });
      view.record(execution({ runId: 'c', time: T0 + 2n }));
      expect(view.query({ accountId: 1n }).map((e) => [e.execution.runId, e.id])).to.deep.equal([['c', 9], ['b', 8], ['a', 7]]);
    });

    it('refuses an execution that could never be found, and records nothing of its batch', () => {
      for (const bad of [execution({ runId: '' }), execution({ jobId: 0n, runId: 'x' }), execution({ accountId: 0n })]) {
        expect(() => view.recordMany([{ execution: execution({ runId: 'fine' }) }, { execution: bad }])).to.throw().that.satisfies(isAppError);
      }
      expect(view.size()).to.deep.equal({ log: 0, failures: 0 });
      expect(view.record(execution({ runId: 'fine' }))).to.equal(true);
    });
  });

  describe('querying', () => {
    it('answers newest first by scheduled time, then by arrival', () => {
      view.record(execution({ runId: 'mid', time: T0 + 60n }));
      view.record(execution({ runId: 'old', time: T0 }));
      view.record(execution({ runId: 'new', time: T0 + 120n }));
      view.record(execution({ runId: 'mid-later', time: T0 + 60n }));
      expect(runIds(view)).to.deep.equal(['new', 'mid-later', 'mid', 'old']);
    });

    it('pages with a 1-based page, limit 100 by default and at most 1000', () => {
      view.recordMany(series(1200).map((execution) => ({ execution })));
      expect(runIds(view)).to.have.length(100);
      expect(runIds(view, { limit: 5000 })).to.have.length(1000);
      expect(runIds(view, { limit: 3 })).to.deep.equal(['r1199', 'r1198', 'r1197']);
      expect(runIds(view, { limit: 3, page: 2 })).to.deep.equal(['r1196', 'r1195', 'r1194']);
      expect(runIds(view, { limit: 500, page: 3 })).to.have.length(0); // the job keeps 1000
      for (const limit of [0, -1, NaN, Infinity]) expect(runIds(view, { limit })).to.have.length(100);
      for (const page of [0, -3, NaN]) expect(runIds(view, { page, limit: 1 })).to.deep.equal(['r1199']);
      expect(runIds(view, { page: 1e300, limit: 1000 })).to.deep.equal([]);
      expect(runIds(view, { page: 2.7, limit: 2 })).to.deep.equal(['r1197', 'r1196']);
    });

    it('searches the keyword, ignoring case, in output, error, IP, HTTP status and run time', () => {
      view.recordMany(
        [
          execution({ runId: 'out', output: 'Deploy DONE: Échec évité' }),
          failure({ runId: 'err', error: 'Connection refused by 198.51.100.7', ip: '', time: T0 + DAY }),
          execution({ runId: 'ip', ip: '2001:DB8::1', time: T0 + 2n * DAY }),
          execution({ runId: 'status', httpStatus: 204, output: '', time: T0 + 3n * DAY }),
        ].map((execution) => ({ execution })),
      );
      const find = (keyword: string) => runIds(view, { keyword }).sort();
      expect(find('deploy done')).to.deep.equal(['out']);
      expect(find('ÉCHEC')).to.deep.equal(['out']); // beyond ASCII too
      expect(find('REFUSED')).to.deep.equal(['err']);
      expect(find('198.51.100.7')).to.deep.equal(['err']);
      expect(find('2001:db8')).to.deep.equal(['ip']);
      expect(find('204')).to.deep.equal(['status']);
      expect(find('2024-10-16')).to.deep.equal(['out']);
      expect(find('2024-10-17T08:30')).to.deep.equal(['err']);
      expect(find('2024-10-18 08:30:00')).to.deep.equal(['ip']);
      expect(find('2024-10-19t08')).to.deep.equal(['status']);
      expect(find(String(T0 + DAY))).to.deep.equal(['err']);
      expect(find('')).to.have.length(4);
      expect(find('nowhere')).to.deep.equal([]);
      expect(find('ok\u001f')).to.deep.equal([]); // fields are searched one by one, never across two
    });

    it('never shows another account\'s results', () => {
      view.record(execution({ runId: 'mine', accountId: 1n, jobId: 1n }));
      view.record(failure({ runId: 'theirs', accountId: 2n, jobId: 2n }));
      expect(runIds(view, { accountId: 2n, jobId: 1n })).to.deep.equal([]);
      expect(runIds(view, { accountId: 1n, jobId: 2n, failuresOnly: true })).to.deep.equal([]);
      expect(runIds(view, { accountId: 1n, jobId: 0n, failuresOnly: true })).to.deep.equal([]);
      expect(runIds(view, { accountId: 2n, jobId: 0n, failuresOnly: true })).to.deep.equal(['theirs']);
      expect(runIds(view, { accountId: 2n ** 70n, jobId: -1 })).to.deep.equal([]); // nonsense ids match nothing
    });

    it('lists failures of one job, or of every job of the account when the job id is 0', () => {
      view.recordMany(
        [
          failure({ runId: 'j1-f', jobId: 1n, time: T0 }),
          execution({ runId: 'j1-ok', jobId: 1n, time: T0 + 1n }),
          failure({ runId: 'j2-f', jobId: 2n, time: T0 + 2n }),
          execution({ runId: 'j2-skip', jobId: 2n, outcome: ExecutionOutcome.SKIPPED, time: T0 + 3n }),
        ].map((execution) => ({ execution })),
      );
      expect(runIds(view, { failuresOnly: true })).to.deep.equal(['j1-f']);
      expect(runIds(view, { jobId: 2n, failuresOnly: true })).to.deep.equal(['j2-f']);
      expect(runIds(view, { jobId: 0n, failuresOnly: true })).to.deep.equal(['j2-f', 'j1-f']);
      expect(runIds(view, { jobId: 0n, failuresOnly: true, keyword: '2024-10-16' })).to.deep.equal(['j2-f', 'j1-f']);
      expect(runIds(view, { jobId: 2n })).to.deep.equal(['j2-skip', 'j2-f']);
    });
  });

  describe('retention', () => {
    it('keeps the last 1000 results per job and, apart from them, its failures', () => {
      const failures = Array.from({ length: 5 }, (_, i) => failure({ runId: `f${i}`, time: T0 - 3600n + BigInt(i) }));
      view.recordMany([...failures, ...series(2000)].map((execution) => ({ execution })));
      view.record(execution({ runId: 'other-job', jobId: 2n }));
      expect(view.size()).to.deep.equal({ log: 1001, failures: 5 });
      const log = runIds(view, { limit: 1000 });
      expect(log[0]).to.equal('r1999');
      expect(log.at(-1)).to.equal('r1000');
      expect(runIds(view, { failuresOnly: true })).to.deep.equal(['f4', 'f3', 'f2', 'f1', 'f0']);
      expect(runIds(view, { jobId: 2n })).to.deep.equal(['other-job']);
    });

    it('keeps the newest by scheduled time: a late old result does not push out a newer one', () => {
      const small = new LogsView(':memory:', { keepPerJob: 3, keepFailuresPerJob: 2 });
      try {
        small.recordMany(series(3).map((execution) => ({ execution })));
        expect(small.record(execution({ runId: 'late', time: T0 - 60n }))).to.equal(true);
        expect(runIds(small)).to.deep.equal(['r2', 'r1', 'r0']);
        for (let i = 0; i < 4; i++) small.record(failure({ runId: `f${i}`, time: T0 + 1000n + BigInt(i) }));
        expect(runIds(small, { failuresOnly: true })).to.deep.equal(['f3', 'f2']);
        expect(runIds(small)).to.deep.equal(['f3', 'f2', 'f1']);
        // f2 left nothing behind in the log but is still held as a failure: a redelivery is a duplicate.
        small.recordMany(series(3, 100).map((execution) => ({ execution })));
        expect(small.record(failure({ runId: 'f2', time: T0 + 1002n }))).to.equal(false);
      } finally {
        small.close();
      }
    });

    it('applies a lowered setting to every job when the file is opened again, and keeps meta', () => {
      const dir = mkdtempSync(join(tmpdir(), 'tock-logs-'));
      const path = join(dir, 'logs.db');
      try {
        const first = new LogsView(path);
        const failures = Array.from({ length: 4 }, (_, i) => failure({ runId: `f${i}`, time: T0 - BigInt(i) }));
        first.recordMany([...series(10), ...failures].map((execution) => ({ execution })));
        first.setMeta('durable', 'logs-abc');
        first.close();
        const again = new LogsView(path, { keepPerJob: 4, keepFailuresPerJob: 2 });
        expect(again.getMeta('durable')).to.equal('logs-abc');
        expect(again.size()).to.deep.equal({ log: 4, failures: 2 });
        expect(runIds(again)).to.deep.equal(['r9', 'r8', 'r7', 'r6']);
        expect(runIds(again, { failuresOnly: true })).to.deep.equal(['f0', 'f1']);
        again.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('refuses a keep setting below 1', () => {
      expect(() => new LogsView(':memory:', { keepPerJob: 0 })).to.throw(/keepPerJob/);
    });
  });

  describe('against a simple model', () => {
    // Few run ids, jobs and times, so duplicates, ties and pruning all happen often.
    const anExecution = fc
      .record({
        run: fc.nat(24),
        job: fc.integer({ min: 1, max: 3 }),
        outcome: fc.constantFrom(ExecutionOutcome.SUCCEEDED, ExecutionOutcome.FAILED, ExecutionOutcome.SKIPPED),
        minute: fc.nat(5),
        day: fc.nat(2),
        output: fc.constantFrom('', 'ok', 'OK done', 'Timeout after 30 s', 'Ünïcode ÄÖÜ'),
        error: fc.constantFrom('', 'HTTP 503', 'connection refused'),
        httpStatus: fc.constantFrom(0, 200, 404, 503),
        ip: fc.constantFrom('', '203.0.113.5', '2001:db8::1'),
      })
      .map((r) =>
        execution({
          runId: `r${r.run}`,
          jobId: BigInt(r.job),
          accountId: BigInt(1 + (r.job % 2)), // a job belongs to one account
          outcome: r.outcome,
          time: T0 + BigInt(r.day) * DAY + BigInt(60 * r.minute),
          output: r.output,
          error: r.error,
          httpStatus: r.httpStatus,
          ip: r.ip,
        }),
      );
    const aQuery = fc.record({
      accountId: fc.integer({ min: 1, max: 2 }),
      jobId: fc.integer({ min: 0, max: 3 }),
      failuresOnly: fc.boolean(),
      keyword: fc.constantFrom('', 'ok', 'OK', 'äöü', '503', 'refused', '2024-10-17', 'T08:3', '08:31:00', '1729', '::1', 'nothing'),
      page: fc.integer({ min: 0, max: 3 }),
      limit: fc.integer({ min: 0, max: 6 }),
    });

    it('answers every query as the model does: deduplicated, newest first, retention applied', () => {
      fc.assert(
        fc.property(
          fc.array(anExecution, { maxLength: 60 }),
          fc.array(aQuery, { minLength: 1, maxLength: 8 }),
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: 7 }),
          (executions, queries, keep, keepFailures, batch) => {
            const model = new LogsModel(keep, keepFailures);
            const real = new LogsView(':memory:', { keepPerJob: keep, keepFailuresPerJob: keepFailures });
            try {
              for (let i = 0; i < executions.length; i += batch) {
                const chunk = executions.slice(i, i + batch);
                expect(real.recordMany(chunk.map((execution) => ({ execution })))).to.deep.equal(chunk.map((e) => model.record(e)));
              }
              for (const q of queries) {
                expect(real.query(q).map((e) => ({ id: e.id, runId: e.execution.runId }))).to.deep.equal(model.query(q));
              }
            } finally {
              real.close();
            }
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
