import type { Clock } from '../../shared/clock.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { createAccountService } from './accountService.ts';
import { createAddJobs } from './addJobs.ts';
import { createBadges } from './badges.ts';
import { createCommands } from './commands.ts';
import { createExecutionOutcomes } from './executionOutcomes.ts';
import { createGroupService } from './groupService.ts';
import { createJobChanges } from './jobChanges.ts';
import { createJobHistory } from './jobHistory.ts';
import { createJobLookups, createJobReads } from './jobReads.ts';
import { createJobSlots } from './jobSlots.ts';
import type { JobsView } from './jobsView.ts';

/**
 * The jobs service's use cases, in domain terms. The gRPC edge only translates to and from proto.
 * Every part runs its commands through `commands` (one stream's commands wait for each other),
 * checks the caller with `account`, and counts jobs against the account's limit with `slots`.
 */
export function createJobsService(store: EventStore, view: JobsView, clock: Clock) {
  const commands = createCommands(store, view, clock);
  const slots = createJobSlots(store, () => clock.now());
  const accounts = createAccountService(store, view, commands);
  const { account } = accounts;
  const lookups = createJobLookups(view);

  return {
    ...accounts,
    ...createGroupService(view, commands, account, lookups.fresh, slots),
    ...createJobHistory(store, view, commands, account, lookups.checkGroup, lookups.fresh),
    ...createAddJobs(store, view, commands, slots, account, lookups),
    ...createJobChanges(view, commands, slots, account, lookups),
    ...createJobReads(view, account, lookups),
    ...createExecutionOutcomes(view, commands),
    ...createBadges(view, commands, account, lookups),
  };
}

export type JobsService = ReturnType<typeof createJobsService>;
