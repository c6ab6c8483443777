import { ExecutionOutcome, type Execution } from '../../../shared/gen/tock/v1/events_pb.ts';
import type { LogsQuery } from '../../../services/logs/logsView.ts';

interface Row {
  id: number;
  e: Execution;
}

const newestFirst = (a: Row, b: Row) => (a.e.time === b.e.time ? b.id - a.id : a.e.time > b.e.time ? -1 : 1);

/** The run time as a keyword may find it, written independently of the implementation. */
function timeTexts(seconds: bigint): string[] {
  const d = new Date(Number(seconds) * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  const date = `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}`;
  const clock = `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
  return [String(seconds), `${date}T${clock}Z`, `${date} ${clock}`];
}

const matches = (e: Execution, keyword: string) =>
  !keyword || [e.output, e.error, e.ip, String(e.httpStatus), ...timeTexts(e.time)].some((f) => f.toLowerCase().includes(keyword.toLowerCase()));

/**
 * What the logs view should answer, the simple way: arrays, a linear search for duplicates, a sort
 * and a slice. A run id is a duplicate while the log or the failures still hold it.
 */
export class LogsModel {
  private log: Row[] = [];
  private failures: Row[] = [];
  private nextId = 1;

  constructor(
    private readonly keep: number,
    private readonly keepFailures: number,
  ) {}

  record(e: Execution): boolean {
    if ([...this.log, ...this.failures].some((r) => r.e.runId === e.runId)) return false;
    const row = { id: this.nextId++, e };
    this.log = retain([...this.log, row], e.jobId, this.keep);
    if (e.outcome === ExecutionOutcome.FAILED) this.failures = retain([...this.failures, row], e.jobId, this.keepFailures);
    return true;
  }

  query(q: LogsQuery): { id: number; runId: string }[] {
    const limit = q.limit && q.limit >= 1 ? Math.min(q.limit, 1000) : 100;
    const page = q.page && q.page >= 1 ? q.page : 1;
    return (q.failuresOnly ? this.failures : this.log)
      .filter((r) => r.e.accountId === BigInt(q.accountId) && (!q.jobId || r.e.jobId === BigInt(q.jobId)) && matches(r.e, q.keyword ?? ''))
      .sort(newestFirst)
      .slice((page - 1) * limit, page * limit)
      .map((r) => ({ id: r.id, runId: r.e.runId }));
  }
}

function retain(rows: Row[], jobId: bigint, keep: number): Row[] {
  const dropped = new Set(rows.filter((r) => r.e.jobId === jobId).sort(newestFirst).slice(keep));
  return rows.filter((r) => !dropped.has(r));
}
