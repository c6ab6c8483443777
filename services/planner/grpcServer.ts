import { AppError } from '../../shared/errors.ts';
import { type PlannerService } from '../../shared/gen/tock/v1/planner_pb.ts';
import type { ServiceImpl } from '../../shared/grpc/bridge.ts';
import type { Planner } from './planner.ts';

type Impl = ServiceImpl<(typeof PlannerService)['method']>;

/** Ids arrive as int64 (bigint); anything beyond a safe integer cannot name a job. */
const toId = (value: bigint, field: string): number => {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new AppError('INVALID_PARAMETER', `${field}: ${value} is not a valid id`);
  return n;
};

/** The planner's own bounds on a calendar, whatever a caller asks: a day ahead, 1000 runs. */
const CALENDAR_SPAN_MS = 86_400_000;
const CALENDAR_MAX = 1000;
const clamp = (n: number) => Math.min(Math.max(n, 1), CALENDAR_MAX);

/** PlannerService over the planner's projection: cron_next and the nextRun of job records. */
export function plannerGrpcImpl(planner: Pick<Planner, 'nextRuns' | 'nextRunOf' | 'calendar'>): Impl {
  return {
    async nextRuns(request) {
      const times = planner.nextRuns(toId(request.accountId, 'accountId'), toId(request.id, 'id'), request.limit);
      return { times: times.map(BigInt) };
    },
    async nextRunOf(request) {
      const accountId = toId(request.accountId, 'accountId');
      // An id that cannot exist has no next run, like an unknown one.
      const ids = request.ids.map((id) => (Number.isSafeInteger(Number(id)) ? Number(id) : -1));
      return { nextRuns: (await planner.nextRunOf(accountId, ids)).map(BigInt) };
    },
    async calendar(request) {
      const accountId = toId(request.accountId, 'accountId');
      const span = Math.min(Math.max(Number(request.spanMs), 0), CALENDAR_SPAN_MS);
      const { runs, truncated, from } = await planner.calendar(accountId, span, clamp(request.perJob), clamp(request.limit));
      const out = runs.map((r) => ({ jobId: BigInt(r.job.id), at: BigInt(r.at), name: r.job.settings.name, timezone: r.job.settings.timezone }));
      return { runs: out, truncated, from: BigInt(from) };
    },
  };
}
