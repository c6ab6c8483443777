import { compactSettings, type CronJob } from '../../shared/job/index.ts';

/**
 * The folded state re-laid out as literals of one fixed shape. evolveJob builds its objects
 * with spreads, which V8 may store two to four times larger than a literal; at a million jobs
 * that is the difference between fitting and not.
 */
export function compactJob(j: CronJob, settingsChanged: boolean): CronJob {
  const settings = settingsChanged ? compactSettings(j.settings) : j.settings;
  return {
    id: j.id,
    accountId: j.accountId,
    settings,
    status: j.status,
    fail: j.fail,
    pausedUntil: j.pausedUntil,
    createdAt: j.createdAt,
    updatedAt: j.updatedAt,
    deleted: j.deleted,
    // Which executions were counted is the jobs service's business (de-duplicating outcomes);
    // the planner never reads it, and 32 run ids per job would dwarf everything else kept here.
    countedRuns: NO_RUNS,
  };
}

const NO_RUNS: string[] = Object.freeze([]) as unknown as string[];
