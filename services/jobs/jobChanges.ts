import { AppError } from '../../shared/errors.ts';
import { decideOn, type Decided } from '../../shared/eventStore/handleCommand.ts';
import { defaultSettings, evolveJob, jobDecider, resolveSettings, type JobCommand, type JobEvent, type JobState, type SettingsInput } from '../../shared/job/index.ts';
import { addDuration, ScheduleError } from '../../shared/schedule/index.ts';
import { slicedAll, timeSlicer } from '../../shared/timeSlice.ts';
import type { Account } from './account.ts';
import { checkBatchSize, MAX_BATCH, WRITES_IN_FLIGHT } from './batchLimit.ts';
import type { Commands } from './commands.ts';
import { requestRunCommand, type ExtraRun } from './extraRun.ts';
import type { JobLookups } from './jobReads.ts';
import type { JobSlots } from './jobSlots.ts';
import type { JobEntry, JobsView } from './jobsView.ts';

export type JobAction = 'enable' | 'disable' | 'pause' | 'delete';

type DecidedCommand = { command: JobCommand; decided: Decided<JobState, JobEvent> };

/**
 * Changes to jobs that exist: edits, the actions (enable, disable, pause, delete) and extra runs.
 * Each call decides every job before it writes any, so a refused one changes nothing.
 */
export function createJobChanges(view: JobsView, commands: Commands, slots: JobSlots, account: (id: number) => Account, { checkGroup, liveJob, liveJobs, fresh }: JobLookups) {
  const { now, settle } = commands;
  const runJobCommand = commands.job;

  return {
    async editJobs(accountId: number, target: { ids: number[] } | { groupId: number }, input: SettingsInput, run: ExtraRun | null): Promise<JobEntry[]> {
      const owner = account(accountId);
      let entries: JobEntry[];
      if ('groupId' in target) {
        if (!view.group(accountId, target.groupId)) throw new AppError('NOT_FOUND', `group ${target.groupId} not found`);
        entries = view.jobsOf(accountId, (e) => e.job.settings.group === target.groupId);
      } else {
        checkBatchSize(target.ids.length, 'id');
        entries = liveJobs(accountId, target.ids);
      }
      checkGroup(accountId, input);
      // Validate everything against every job before writing anything: a failed edit changes nothing.
      if (entries.length === 0) resolveSettings({ ...defaultSettings(owner.timezone), url: 'http://example.com/' }, input, 0);
      const slice = timeSlicer();
      const decisions: DecidedCommand[][] = [];
      for (const entry of entries) {
        await slice();
        const edit: JobCommand = { type: 'EditJob', id: entry.job.id, accountId, input };
        const edited = decideOn(jobDecider, edit, entry.job, entry.revision, now());
        const steps: DecidedCommand[] = [{ command: edit, decided: edited }];
        if (run) {
          // The run is decided too, on the edited job: a disabled job refuses it (6) before the edit is stored.
          const after = edited.events.reduce(evolveJob, entry.job)!;
          const order = requestRunCommand(accountId, entry.job.id, run, after.settings.httpMethod, now());
          steps.push({ command: order, decided: decideOn(jobDecider, order, after, entry.revision + edited.events.length, now()) });
        }
        decisions.push(steps);
      }
      const positions = await slicedAll(
        entries.length,
        async (i) => {
          let position: bigint | null = null;
          for (const { command, decided } of decisions[i]!) position = (await runJobCommand(command, decided)).position ?? position;
          return position;
        },
        WRITES_IN_FLIGHT,
        slice,
      );
      await settle(positions);
      return entries.map(({ job }) => fresh(job.id, accountId));
    },

    async applyAction(accountId: number, idList: number[], action: JobAction, pauseFor: string | null): Promise<JobEntry[]> {
      account(accountId);
      checkBatchSize(idList.length, 'id');
      const entries = liveJobs(accountId, idList);
      const pauseUntil = (tz: string) => {
        if (pauseFor === null) return null;
        try {
          return addDuration(pauseFor, now(), tz);
        } catch (error) {
          if (error instanceof ScheduleError) throw new AppError('INVALID_PARAMETER', error.message, { field: ['for'] });
          throw error;
        }
      };
      // A repeated id is acted on once (deleting it twice would fail the second time); answers stay in request order.
      const unique = [...new Map(entries.map((e) => [e.job.id, e])).values()];
      const toRun: JobCommand[] = unique.map(({ job }) => {
        const id = job.id;
        if (action === 'enable') return { type: 'EnableJob', id, accountId };
        if (action === 'disable') return { type: 'DisableJob', id, accountId };
        if (action === 'delete') return { type: 'DeleteJob', id, accountId };
        return { type: 'PauseJob', id, accountId, until: pauseUntil(job.settings.timezone) };
      });
      // Decided on the view's state before anything is written: one refused id changes nothing.
      const decided = toRun.map((c) => {
        const { job, revision } = view.job(accountId, c.id)!;
        return decideOn(jobDecider, c, job, revision, now());
      });
      const results = await Promise.all(toRun.map((c, i) => runJobCommand(c, decided[i])));
      // Only the deletions this call made give their slots back (a concurrent one of the same job changed nothing).
      if (action === 'delete') await slots.release(accountId, results.filter((r) => r.events.length > 0).length);
      await settle(results.map((r) => r.position));
      return entries.map(({ job }) => fresh(job.id, job.accountId));
    },

    /** The operator's clean-up of an account: every job deleted, in batches; returns how many. */
    async deleteAllJobs(accountId: number): Promise<number> {
      account(accountId);
      const ids = view.jobsOf(accountId, () => true).map((e) => e.job.id);
      for (let i = 0; i < ids.length; i += MAX_BATCH) await this.applyAction(accountId, ids.slice(i, i + MAX_BATCH), 'delete', null);
      return ids.length;
    },

    async runJob(accountId: number, id: number, time: number, payload: string | null): Promise<number> {
      account(accountId);
      const entry = liveJob(accountId, id);
      const command = requestRunCommand(accountId, id, { run: time > 0 ? time : 1, payload }, entry.job.settings.httpMethod, now());
      const result = await runJobCommand(command);
      await view.waitFor(result.position);
      return Math.floor((command as Extract<JobCommand, { type: 'RequestRun' }>).runAt / 1000);
    },
  };
}
