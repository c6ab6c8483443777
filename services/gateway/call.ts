import { AppError } from '../../shared/errors.ts';
import type { JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import type { LogsService } from '../../shared/gen/tock/v1/logs_pb.ts';
import type { NotifierService } from '../../shared/gen/tock/v1/notifier_pb.ts';
import type { PlannerService } from '../../shared/gen/tock/v1/planner_pb.ts';
import type { ServiceClient } from '../../shared/grpc/bridge.ts';
import type { Params } from './params.ts';

/** The services the gateway calls; all but jobs may be left out (a function that needs one then fails, saying so). */
export interface Clients {
  jobs: ServiceClient<(typeof JobsService)['method']>;
  planner?: ServiceClient<(typeof PlannerService)['method']>;
  logs?: ServiceClient<(typeof LogsService)['method']>;
  notifier?: ServiceClient<(typeof NotifierService)['method']>;
}

export interface Call {
  params: Params;
  accountId: bigint;
  /** The SHA-256 of the token the caller presented (account_token_rotate replaces only that one). */
  tokenHash: string;
  /** The parsed JSON body when the request had one (cron_batch_add needs it). */
  json: Record<string, unknown> | null;
  canonical: (norm: string) => string | undefined;
  /** The X-Idempotency-Key header, when sent. */
  idempotencyKey?: string;
  /** scheme://host the client reached (behind trusted proxies, as they tell it): for URLs in answers. */
  origin?: string;
}

/** One API function. */
export type Fn = (call: Call, clients: Clients) => Promise<unknown>;

export const need = <T>(client: T | undefined, what: string): T => {
  if (!client) throw new AppError('INTERNAL', `the ${what} service is not configured`);
  return client;
};
