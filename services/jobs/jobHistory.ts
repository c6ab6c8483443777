import { AppError } from '../../shared/errors.ts';
import { streamName, type EventStore, type RecordedEvent } from '../../shared/eventStore/eventStore.ts';
import { decideOn } from '../../shared/eventStore/handleCommand.ts';
import {
  SECRET_SETTINGS,
  evolveJob,
  jobDecider,
  jobVersions,
  maskSecrets,
  versionSettings,
  type JobCommand,
  type JobEvent,
  type SettingsInput,
} from '../../shared/job/index.ts';
import type { Commands } from './commands.ts';
import { jobPoints, type JobEntry, type JobsView } from './jobsView.ts';

const asJobEvents = (events: RecordedEvent[]) => events.map((e) => ({ type: e.type, data: e.data as unknown }) as JobEvent);

/**
 * A job's history and its versions (docs/api.md, cron_history and cron_rollback), read from the
 * job's own stream: the version numbers, what each changed and the settings to restore are all
 * derived from its events, never kept anywhere else. The store opens the secrets it reads; they
 * leave this file only masked, or sealed again in the rollback's event.
 */
export function createJobHistory(
  store: EventStore,
  view: JobsView,
  commands: Commands,
  account: (id: number) => unknown,
  checkGroup: (accountId: number, input: SettingsInput) => void,
  fresh: (id: number, accountId: number) => JobEntry,
) {
  const readJob = async (id: number) => store.readStream(streamName('cronjob', id));

  return {
    /** The job's events, newest first, each with the version it made; `versionsOnly`: only those. */
    async history(accountId: number, id: number, page: number, limit: number, versionsOnly = false) {
      account(accountId);
      const entry = view.job(accountId, id) ?? view.anyJob(id);
      if (!entry || entry.job.accountId !== accountId) throw new AppError('NOT_FOUND', `cron job ${id} not found`);
      const size = Math.min(Math.max(limit || 100, 1), 1000);
      const from = (Math.max(page, 1) - 1) * size;
      const events = await readJob(id);
      const marks = jobVersions(asJobEvents(events));
      const entries = events.map((event, i) => ({ event, mark: marks[i] ?? null })).reverse();
      return (versionsOnly ? entries.filter((e) => e.mark !== null) : entries).slice(from, from + size).map(({ event: e, mark }) => ({
        revision: e.revision,
        time: Math.floor(((e.data as { at?: number }).at ?? e.time) / 1000),
        type: e.type,
        data: maskEventSecrets(e.data),
        by: typeof e.metadata.accountId === 'number' ? e.metadata.accountId : 0,
        mark,
      }));
    },

    /**
     * Restores the settings of `version` as a new version, checked by today's rules; with `dryRun`,
     * only decides. `changed`: the settings it changes (none when the job has them already: then
     * nothing is written, so sending it again changes nothing).
     */
    async rollback(accountId: number, id: number, version: number, dryRun: boolean): Promise<{ entry: JobEntry; changed: string[] }> {
      account(accountId);
      const entry = view.job(accountId, id);
      if (!entry) throw new AppError('NOT_FOUND', `cron job ${id} not found`);
      const versions = versionSettings(asJobEvents(await readJob(id)));
      const settings = versions[version - 1];
      if (version < 1 || !settings) {
        throw new AppError('INVALID_PARAMETER', `cron job ${id} has no version ${version}; its versions are 1 to ${versions.length}`, { field: ['version'] });
      }
      if (settings.group !== entry.job.settings.group) checkGroup(accountId, { group: settings.group });
      const command: JobCommand = { type: 'RollbackJob', id, accountId, version, settings };
      const decided = decideOn(jobDecider, command, entry.job, entry.revision, commands.now());
      const changedBy = (events: JobEvent[]) => events.flatMap((e) => (e.type === 'JobEdited' ? Object.keys(e.data.changes) : []));
      if (dryRun) {
        const job = decided.events.reduce(evolveJob, entry.job)!;
        return { entry: { job, points: jobPoints(job), revision: entry.revision }, changed: changedBy(decided.events) };
      }
      const result = await commands.job(command, decided);
      await commands.settle([result.position]);
      return { entry: fresh(id, accountId), changed: changedBy(result.events) };
    },
  };
}

/** The event's data with every secret (the table's `secret` rows, URL credentials, header values) masked. */
function maskEventSecrets(data: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(data)) as Record<string, Record<string, unknown> | string | undefined> | null;
  // A badge's token is shown only by cron_badge, to its owner.
  if (copy && typeof copy.token === 'string') copy.token = '********';
  for (const field of ['settings', 'changes']) {
    const settings = copy?.[field];
    if (!copy || !settings || typeof settings === 'string') continue;
    const masked = maskSecrets(settings);
    for (const name of SECRET_SETTINGS) if (masked[name]) masked[name] = '********';
    copy[field] = masked;
  }
  return copy;
}
