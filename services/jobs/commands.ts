import type { Clock } from '../../shared/clock.ts';
import { streamName, type EventStore } from '../../shared/eventStore/eventStore.ts';
import { jobDecider, type JobCommand, type JobEvent, type JobState } from '../../shared/job/index.ts';
import { accountDecider, type AccountCommand } from './account.ts';
import { groupDecider, type GroupCommand } from './group.ts';
import type { Decider, DomainEvent } from '../../shared/decider.ts';
import { handleCommand, type Decided, type Handled } from '../../shared/eventStore/handleCommand.ts';
import { createIdAllocator } from '../../shared/eventStore/ids.ts';
import type { JobsView } from './jobsView.ts';

// Across processes the optimistic retry in handleCommand is what keeps updates; it gets room for
// a burst of writers from several processes at once.
const MAX_ATTEMPTS = 20;

/**
 * Runs commands against their streams. Within this process, commands on one stream wait for each
 * other instead of racing into revision conflicts; across processes (several jobs services on one
 * store) the expected-revision append and retry decide, so no update is lost either way.
 */
export function createCommands(store: EventStore, view: JobsView, clock: Clock) {
  const tails = new Map<string, Promise<unknown>>();
  const now = () => clock.now();

  const serialized = <T>(stream: string, fn: () => Promise<T>): Promise<T> => {
    const run = (tails.get(stream) ?? Promise.resolve()).then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    tails.set(stream, tail);
    void tail.then(() => {
      if (tails.get(stream) === tail) tails.delete(stream);
    });
    return run;
  };

  const run = <C, S, E extends DomainEvent>(stream: string, decider: Decider<C, S, E>, command: C, metadata: Record<string, unknown>, decided?: Decided<S, E>): Promise<Handled<S, E>> =>
    serialized(stream, () => handleCommand(store, { stream, decider, command, now, metadata, maxAttempts: MAX_ATTEMPTS, decided }));

  return {
    now,
    ids: createIdAllocator(store),
    /**
     * Every change to a job records who asked (the account) in the event's metadata: the audit
     * trail. `decided`: the command as already decided while a batch was validated.
     */
    job: (command: JobCommand, decided?: Decided<JobState, JobEvent>) =>
      run(streamName('cronjob', command.id), jobDecider, command, 'accountId' in command ? { accountId: command.accountId } : {}, decided),
    group: (command: GroupCommand) => run(streamName('group', command.id), groupDecider, command, { accountId: command.accountId }),
    account: (command: AccountCommand) => run(streamName('account', command.id), accountDecider, command, {}),
    /** Resolves once the view has applied the last of these positions (read-your-writes). */
    settle: async (positions: (bigint | null)[]) => {
      const last = positions.reduce<bigint | null>((max, p) => (p !== null && (max === null || p > max) ? p : max), null);
      await view.waitFor(last);
    },
  };
}

export type Commands = ReturnType<typeof createCommands>;
