import { randomBytes } from 'node:crypto';
import type { JobCommand } from '../../shared/job/index.ts';
import { validatePayload } from '../../shared/payload.ts';

/** A run asked for besides the schedule (the `run` of cron_add and cron_edit, and cron_run). The planner's RunOrder is another thing: a due run it publishes. */
export interface ExtraRun {
  /** Unix seconds: > now schedules the run then; any other value > 0 runs now. */
  run: number;
  payload: string | null;
}

/** The command for an extra run of job `id` (0 while a new job is only being checked); `method` is the job's, for the payload's check. */
export function requestRunCommand(accountId: number, id: number, order: ExtraRun, method: string, nowMs: number): JobCommand {
  if (order.payload !== null) validatePayload(order.payload, method);
  const runAt = order.run * 1000 > nowMs ? order.run * 1000 : nowMs;
  return { type: 'RequestRun', id, accountId, runId: `${id}:${runAt}:${randomBytes(4).toString('hex')}`, runAt, payload: order.payload };
}
