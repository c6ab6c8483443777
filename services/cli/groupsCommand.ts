import { apiFrom } from './apiClient.ts';
import { idOf, noPositionals, parse, UsageError } from './args.ts';
import type { Io } from './io.ts';
import { fields, json, table } from './output.ts';

export const GROUPS_USAGE = `usage:
  tock groups list [--json]
  tock groups get <id> [--json]
  tock groups add --name NAME [--priority N] [--json]
  tock groups edit <id> [--name NAME] [--priority N] [--json]
  tock groups delete <id> [--jobs keep|delete]   keep (default): its jobs stay, ungrouped
Connection: --url (TOCK_URL, default http://127.0.0.1:8080) and --token (TOCK_TOKEN).`;

interface GroupRecord {
  id: number | null;
  name: string;
  jobCount: number;
  priority: number;
}

const OPTIONS = { name: { type: 'string' }, priority: { type: 'string' }, jobs: { type: 'string' } } as const;

/** `tock groups ...`: job groups of the token's account, through the public API. */
export async function groupsCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, OPTIONS, GROUPS_USAGE);
  const verb = parsed.positionals.shift();
  if (verb === undefined) throw new UsageError('a groups command is required', GROUPS_USAGE);
  const api = apiFrom(parsed, io.env, GROUPS_USAGE);
  const { values } = parsed;
  const asJson = values.json === true;
  const changes = () => {
    const params: Record<string, string> = {};
    if (values.name !== undefined) params.name = values.name as string;
    if (values.priority !== undefined) params.priority = values.priority as string;
    return params;
  };
  const show = (group: GroupRecord, done: string) => {
    if (asJson) json(io.out, group);
    else io.out(done);
    return 0;
  };

  switch (verb) {
    case 'list': {
      noPositionals(parsed, GROUPS_USAGE);
      const groups = await api<GroupRecord[]>('group_list');
      if (asJson) json(io.out, groups);
      else table(io.out, ['id', 'name', 'priority', 'jobs'], groups.map((g) => [g.id, g.name, g.priority, g.jobCount]));
      return 0;
    }
    case 'get': {
      const group = await api<GroupRecord>('group_get', { id: idOf(parsed, 'a group', GROUPS_USAGE) });
      if (asJson) json(io.out, group);
      else fields(io.out, { ...group });
      return 0;
    }
    case 'add': {
      noPositionals(parsed, GROUPS_USAGE);
      // No name: the API says what it says to any client that leaves it out.
      const group = await api<GroupRecord>('group_add', changes());
      return show(group, `group ${group.id} (${group.name}) added`);
    }
    case 'edit': {
      const id = idOf(parsed, 'a group', GROUPS_USAGE);
      if (!Object.keys(changes()).length) throw new UsageError('nothing to change: give --name and/or --priority', GROUPS_USAGE);
      const group = await api<GroupRecord>('group_edit', { ...changes(), id });
      return show(group, `group ${id} changed: ${group.name}, priority ${group.priority}`);
    }
    case 'delete': {
      const id = idOf(parsed, 'a group', GROUPS_USAGE);
      const mode = (values.jobs as string | undefined) ?? 'keep';
      if (mode !== 'keep' && mode !== 'delete') throw new UsageError(`--jobs must be keep or delete, got '${mode}'`, GROUPS_USAGE);
      const group = await api<GroupRecord>(mode === 'keep' ? 'group_delete' : 'group_vanish', { id });
      return show(group, `group ${id} deleted${mode === 'keep' ? ` (its ${group.jobCount} jobs kept, ungrouped)` : ` with its ${group.jobCount} jobs`}`);
    }
    default:
      throw new UsageError(`unknown groups command '${verb}'`, GROUPS_USAGE);
  }
}
