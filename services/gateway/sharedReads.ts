import { create } from '@bufbuild/protobuf';
import { SummariesReplySchema, type JobSummary } from '../../shared/gen/tock/v1/logs_pb.ts';
import { NextRunOfReplySchema } from '../../shared/gen/tock/v1/planner_pb.ts';
import { perTurn } from '../../shared/perTurn.ts';
import type { Clients } from './call.ts';

/**
 * Jobs per Summaries call, however many requests joined and however many jobs each asked for (a
 * page of 1000): each call stays one short turn of the logs service, not one long one.
 */
const SUMMARIES_PER_CALL = 100;

const union = (lists: bigint[][]) => [...new Set(lists.flat())];

/**
 * The gateway's clients, with the reads that every job record makes shared by the requests of one
 * turn (shared/perTurn.ts): the token check (one per token), the planner's next runs and the logs'
 * summaries and the jobs themselves (one per account, for the union of the jobs asked). A cron_get
 * alone makes four calls; a turn of k of them makes four too.
 */
export function sharedReads(clients: Clients): Clients {
  const { jobs, planner, logs } = clients;
  const authenticate = perTurn<Parameters<typeof jobs.authenticate>[0], Awaited<ReturnType<typeof jobs.authenticate>>>(
    (r) => String(r.tokenHash),
    async (requests) => {
      const account = await jobs.authenticate(requests[0]!);
      return requests.map(() => account);
    },
  );
  type Job = Awaited<ReturnType<typeof jobs.getJob>>;
  const getJob = perTurn<Parameters<typeof jobs.getJob>[0], Job>(
    (r) => String(r.accountId ?? 0n),
    async (requests) => {
      if (requests.length === 1) return [await jobs.getJob(requests[0]!)];
      const { jobs: found } = await jobs.getJobs({ accountId: requests[0]!.accountId, ids: union(requests.map((r) => [r.id ?? 0n])) });
      const byId = new Map(found.map((j) => [j.id, j]));
      // A job not found (or not the account's) is asked again alone, so its answer is GetJob's own error.
      return requests.map((r) => byId.get(r.id ?? 0n) ?? jobs.getJob(r));
    },
  );
  const shared: Clients = { ...clients, jobs: Object.assign(Object.create(jobs) as typeof jobs, { authenticate, getJob }) };

  if (planner) {
    const nextRunOf = perTurn<{ accountId?: bigint; ids?: bigint[] }, Awaited<ReturnType<typeof planner.nextRunOf>>>(
      (r) => String(r.accountId ?? 0n),
      async (requests) => {
        const ids = union(requests.map((r) => r.ids ?? []));
        const { nextRuns } = await planner.nextRunOf({ accountId: requests[0]!.accountId, ids });
        const byId = new Map(ids.map((id, i) => [id, nextRuns[i] ?? 0n]));
        return requests.map((r) => create(NextRunOfReplySchema, { nextRuns: (r.ids ?? []).map((id) => byId.get(id) ?? 0n) }));
      },
    );
    shared.planner = Object.assign(Object.create(planner) as typeof planner, { nextRunOf });
  }

  if (logs) {
    type Ask = Parameters<typeof logs.summaries>[0];
    const summaries = perTurn<Ask, Awaited<ReturnType<typeof logs.summaries>>>(
      // Only requests asking the same question of the same account share a call.
      (r) => `${r.accountId}:${r.recent}:${r.since}:${r.hoursFrom}:${r.hours}`,
      async (requests) => {
        const ids = union(requests.map((r) => r.ids ?? []));
        const calls: Promise<JobSummary[]>[] = [];
        for (let i = 0; i < ids.length; i += SUMMARIES_PER_CALL) {
          calls.push(logs.summaries({ ...requests[0]!, ids: ids.slice(i, i + SUMMARIES_PER_CALL) }).then((reply) => reply.summaries));
        }
        const byId = new Map((await Promise.all(calls)).flat().map((s) => [s.jobId, s]));
        return requests.map((r) => create(SummariesReplySchema, { summaries: (r.ids ?? []).flatMap((id) => byId.get(id) ?? []) }));
      },
    );
    shared.logs = Object.assign(Object.create(logs) as typeof logs, { summaries });
  }
  return shared;
}
