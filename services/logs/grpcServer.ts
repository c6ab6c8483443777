import type { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import type { ServiceImpl } from '../../shared/grpc/bridge.ts';
import { maskUrl } from '../../shared/job/index.ts';
import type { LogsEntry, LogsView } from './logsView.ts';

/** LogsService over the view: proto request -> query -> proto reply, nothing else. */
export const logsGrpcImpl = (view: LogsView): ServiceImpl<(typeof LogsService)['method']> => ({
  logs: async (request) => ({
    entries: (
      await view.query({
        accountId: request.accountId,
        jobId: request.id,
        failuresOnly: request.failuresOnly,
        keyword: request.keyword,
        page: request.page,
        limit: request.limit,
      })
    ).map(protoEntry),
  }),
  summaries: async (request) => ({
    summaries: (await view.summaries({ accountId: request.accountId, jobIds: request.ids, recent: request.recent, since: Number(request.since), hours: { from: Number(request.hoursFrom), count: request.hours } })).map((s) => ({
      jobId: s.jobId,
      last: s.last && protoEntry(s.last),
      recent: s.recent,
      runsSince: s.runsSince,
      failuresSince: s.failuresSince,
      runsByHour: s.runsByHour,
      failuresByHour: s.failuresByHour,
    })),
  }),
});

// Executors mask credentials before they publish; records written by older versions may still
// hold them, so they are masked again on the way out.
const protoEntry = (entry: LogsEntry) => ({
  id: BigInt(entry.id),
  execution: entry.execution.url.includes('@') ? { ...entry.execution, url: maskUrl(entry.execution.url) } : entry.execution,
});
