import { AppError } from '../../shared/errors.ts';
import { maskUrl, type SettingsInput } from '../../shared/job/index.ts';
import type { JobEntry, JobsView } from './jobsView.ts';

export const MAX_PAGE = 1000;

/** The jobs and groups as the view holds them, looked up the way every use case needs them. */
export function createJobLookups(view: JobsView) {
  const liveJob = (accountId: number, id: number): JobEntry => {
    const entry = view.job(accountId, id);
    if (!entry) throw new AppError('NOT_FOUND', `cron job ${id} not found`);
    return entry;
  };

  return {
    /** A job's settings may name only a group of its account. */
    checkGroup(accountId: number, input: SettingsInput) {
      if (input.group !== undefined && input.group !== null && input.group !== 0 && !view.group(accountId, input.group)) {
        throw new AppError('NOT_FOUND', `group ${input.group} not found`, { field: ['group'] });
      }
    },
    liveJob,
    liveJobs: (accountId: number, idList: number[]): JobEntry[] => idList.map((id) => liveJob(accountId, id)),
    /** The view's entry, also for a job deleted a moment ago (cron_delete returns the record). */
    fresh: (id: number, accountId: number): JobEntry => view.job(accountId, id) ?? view.anyJob(id)!,
  };
}

export type JobLookups = ReturnType<typeof createJobLookups>;

/** cron_get and cron_list, answered from the view. `account` checks the caller. */
export function createJobReads(view: JobsView, account: (id: number) => unknown, { liveJob }: JobLookups) {
  return {
    getJob(accountId: number, id: number): JobEntry {
      account(accountId);
      return liveJob(accountId, id);
    },

    /** The jobs of `ids` the account has, in the order asked; the others are left out (getJob says why). */
    getJobs(accountId: number, ids: number[]): JobEntry[] {
      account(accountId);
      return ids.flatMap((id) => view.job(accountId, id) ?? []);
    },

    listJobs(accountId: number, query: { page: number; limit: number; keyword: string; groupId: number | null }): JobEntry[] {
      account(accountId);
      const keyword = query.keyword.trim().toLowerCase();
      const entries = view.jobsOf(accountId, (e) => {
        if (query.groupId !== null && e.job.settings.group !== query.groupId) return false;
        if (!keyword) return true;
        const s = e.job.settings;
        return String(e.job.id) === keyword || s.name.toLowerCase().includes(keyword) || maskUrl(s.url).toLowerCase().includes(keyword);
      });
      const limit = Math.min(Math.max(query.limit || MAX_PAGE, 1), MAX_PAGE);
      const page = Math.max(query.page || 1, 1);
      return entries.slice((page - 1) * limit, page * limit);
    },
  };
}
