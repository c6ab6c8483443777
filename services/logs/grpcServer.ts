import type { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import type { ServiceImpl } from '../../shared/grpc/bridge.ts';
import { maskUrl } from '../../shared/job/index.ts';
import type { LogsView } from './logsView.ts';

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
    // Executors mask credentials before they publish; records written by older versions may still
    // hold them, so they are masked again on the way out.
    ).map((entry) => ({ id: BigInt(entry.id), execution: entry.execution.url.includes('@') ? { ...entry.execution, url: maskUrl(entry.execution.url) } : entry.execution })),
  }),
});
