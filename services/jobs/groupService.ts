import { AppError } from '../../shared/errors.ts';
import type { Commands } from './commands.ts';
import { groupDecider, type Group, type GroupCommand } from './group.ts';
import type { JobSlots } from './jobSlots.ts';
import type { JobEntry, JobsView } from './jobsView.ts';

/**
 * Groups (docs/api.md (Cron jobs), FC's group functions). `account` checks the caller; `fresh` reads a job, deleted or not;
 * the jobs a group's deletion deletes give their `slots` back.
 */
export function createGroupService(view: JobsView, commands: Commands, account: (id: number) => unknown, fresh: (id: number, accountId: number) => JobEntry, slots: Pick<JobSlots, 'release'>) {
  const command = async (c: GroupCommand): Promise<Group> => {
    const result = await commands.group(c);
    await view.waitFor(result.position);
    return result.state!;
  };

  const getGroup = (accountId: number, id: number): Group => {
    account(accountId);
    const group = view.group(accountId, id);
    if (!group) throw new AppError('NOT_FOUND', `group ${id} not found`);
    return group;
  };

  return {
    async addGroup(accountId: number, name: string, priority: number): Promise<Group> {
      account(accountId);
      // Checked before an id is taken: a refused group must leave no trace in the store.
      groupDecider.decide({ type: 'CreateGroup', id: 0, accountId, name, priority }, null, commands.now());
      const id = await commands.ids.allocateOne('group');
      return command({ type: 'CreateGroup', id, accountId, name, priority });
    },

    async editGroup(accountId: number, id: number, name: string | undefined, priority: number | undefined): Promise<Group> {
      account(accountId);
      return command({ type: 'EditGroup', id, accountId, name, priority });
    },

    getGroup,

    listGroups(accountId: number, name: string | null): Group[] {
      account(accountId);
      return view.groupsOf(accountId).filter((g) => name === null || g.name === name);
    },

    /** ungroup: the group goes, its jobs stay ungrouped; vanish: both go; empty: its jobs go. */
    async deleteGroup(accountId: number, id: number, mode: 'ungroup' | 'vanish' | 'empty'): Promise<JobEntry[]> {
      const group = getGroup(accountId, id);
      const members = view.jobsOf(accountId, (e) => e.job.settings.group === group.id);
      const results = await Promise.all(
        members.map(({ job }) => commands.job(mode === 'ungroup' ? { type: 'EditJob', id: job.id, accountId, input: { group: 0 } } : { type: 'DeleteJob', id: job.id, accountId })),
      );
      if (mode !== 'ungroup') await slots.release(accountId, results.filter((r) => r.events.length > 0).length);
      const positions = results.map((r) => r.position);
      if (mode !== 'empty') positions.push((await commands.group({ type: 'DeleteGroup', id, accountId })).position);
      await commands.settle(positions);
      return members.map(({ job }) => fresh(job.id, accountId));
    },

    groupJobCount: (accountId: number, id: number) => view.groupJobCount(accountId, id),
  };
}
