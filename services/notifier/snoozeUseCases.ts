import type { Clock } from '../../shared/clock.ts';
import { AppError } from '../../shared/errors.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { handleCommand } from '../../shared/eventStore/handleCommand.ts';
import { activeSnooze, jobNotifyDecider, jobNotifyStream, type Snooze, type SnoozeCommand } from '../../shared/notify/index.ts';
import { addDuration, ScheduleError } from '../../shared/schedule/index.ts';
import type { NotifierView } from './notifierView.ts';

export interface SnoozeAnswer {
  id: number;
  snooze: Snooze | null;
}

/**
 * cron_snooze and cron_unsnooze: a job's notifications silenced for a while or until it recovers,
 * recorded in the job's notification stream where the rules read it.
 */
export function createSnoozeUseCases(store: EventStore, view: NotifierView, clock: Clock) {
  const owned = (accountId: number, id: number) => {
    const job = view.job(id);
    if (!job || job.deleted || job.accountId !== accountId) throw new AppError('NOT_FOUND', `cron job ${id} not found`, { field: ['id'] });
    return job;
  };

  const run = async (id: number, command: SnoozeCommand): Promise<SnoozeAnswer> => {
    const result = await handleCommand(store, { stream: jobNotifyStream(id), decider: jobNotifyDecider, command, now: () => clock.now() });
    await view.waitFor(result.position);
    return { id, snooze: activeSnooze(result.state.snooze, clock.now()) };
  };

  return {
    /** Silences the job's notifications for `duration` (English, e.g. "2 hours"), or until its next successful run when absent. */
    async snooze(accountId: number, id: number, duration: string | undefined): Promise<SnoozeAnswer> {
      const job = owned(accountId, id);
      let until: number | null = null;
      if (duration !== undefined) {
        try {
          until = addDuration(duration, clock.now(), job.timezone);
        } catch (error) {
          if (error instanceof ScheduleError) throw new AppError('INVALID_PARAMETER', error.message, { field: ['for'] });
          throw error;
        }
      }
      return run(id, { type: 'Snooze', until });
    },

    /** Ends the job's snooze, if it has one. */
    async unsnooze(accountId: number, id: number): Promise<SnoozeAnswer> {
      owned(accountId, id);
      return run(id, { type: 'Unsnooze' });
    },
  };
}

export type SnoozeUseCases = ReturnType<typeof createSnoozeUseCases>;
