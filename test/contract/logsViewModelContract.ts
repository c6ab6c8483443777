/**
 * The LogsView contract's model-based property (logsViewContract.ts runs it for each adapter):
 * random executions recorded in random batches and random queries, answered as a simple
 * in-memory model answers them.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { ExecutionOutcome } from '../../shared/gen/tock/v1/events_pb.ts';
import type { LogsView, LogsViewOptions } from '../../services/logs/logsView.ts';
import { T0, execution } from '../unit/logs/executions.ts';
import { LogsModel } from '../unit/logs/logsModel.ts';

const DAY = 86_400n;
const all = (executions: ReturnType<typeof execution>[]) => executions.map((execution) => ({ execution }));

/** What the property uses of logsViewContract.ts's LogsViewFixture. */
interface ModelFixture {
  /** Opens a fresh store. */
  open(options?: LogsViewOptions): Promise<LogsView>;
  /** Runs of the property (each one opens a fresh store). */
  propertyRuns: number;
}

/** `current`: the test's fixture (logsViewContract.ts makes a fresh one before each test). */
export function modelContract(current: () => ModelFixture) {
  describe('against a simple model', () => {
    let stores: ModelFixture;
    beforeEach(() => {
      stores = current();
    });

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

    it('answers every query as the model does: deduplicated, newest first, retention applied', async function () {
      this.timeout(300_000); // each run opens a fresh store: a new schema on a shared, busy server
      await fc.assert(
        fc.asyncProperty(
          fc.array(anExecution, { maxLength: 60 }),
          fc.array(aQuery, { minLength: 1, maxLength: 8 }),
          fc.integer({ min: 1, max: 4 }),
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: 7 }),
          async (executions, queries, keep, keepFailures, batch) => {
            const model = new LogsModel(keep, keepFailures);
            const real = await stores.open({ keepPerJob: keep, keepFailuresPerJob: keepFailures });
            try {
              for (let i = 0; i < executions.length; i += batch) {
                const chunk = executions.slice(i, i + batch);
                expect(await real.recordMany(all(chunk))).to.deep.equal(chunk.map((e) => model.record(e)));
              }
              for (const q of queries) {
                expect((await real.query(q)).map((e) => ({ id: e.id, runId: e.execution.runId }))).to.deep.equal(model.query(q));
              }
            } finally {
              await real.close();
            }
          },
        ),
        { numRuns: stores.propertyRuns },
      );
    });
  });
}
