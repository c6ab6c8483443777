import { AppError } from '../../shared/errors.ts';
import type { Decider } from '../../shared/decider.ts';

export type GroupEvent =
  | { type: 'GroupCreated'; data: { id: number; accountId: number; name: string; priority: number; at: number } }
  | { type: 'GroupEdited'; data: { name?: string; priority?: number; at: number } }
  | { type: 'GroupDeleted'; data: { at: number } };

export interface Group {
  id: number;
  accountId: number;
  name: string;
  priority: number;
  deleted: boolean;
}

export type GroupCommand =
  | { type: 'CreateGroup'; id: number; accountId: number; name: string; priority: number }
  | { type: 'EditGroup'; id: number; accountId: number; name?: string; priority?: number }
  | { type: 'DeleteGroup'; id: number; accountId: number };

const checkName = (name: string) => {
  if (!name.trim()) throw new AppError('MISSING_PARAMETER', 'name: a group needs a name');
  if (name.length > 255) throw new AppError('INVALID_PARAMETER', `name: must be at most 255 characters, got ${name.length}`);
};
const checkPriority = (priority: number) => {
  if (!Number.isInteger(priority) || priority < 0 || priority > 1_000_000) {
    throw new AppError('INVALID_PARAMETER', `priority: must be a whole number from 0 to 1000000, got ${priority}`);
  }
};

export const groupDecider: Decider<GroupCommand, Group | null, GroupEvent> = {
  initialState: () => null,
  evolve(state, event) {
    switch (event.type) {
      case 'GroupCreated': {
        const { id, accountId, name, priority } = event.data;
        return { id, accountId, name, priority, deleted: false };
      }
      case 'GroupEdited':
        return state && { ...state, name: event.data.name ?? state.name, priority: event.data.priority ?? state.priority };
      case 'GroupDeleted':
        return state && { ...state, deleted: true };
      default:
        return state;
    }
  },
  decide(command, state, now) {
    if (command.type === 'CreateGroup') {
      if (state) throw new AppError('INTERNAL', `group id ${command.id} is already taken`);
      checkName(command.name);
      checkPriority(command.priority);
      const { id, accountId, name, priority } = command;
      return [{ type: 'GroupCreated', data: { id, accountId, name: name.trim(), priority, at: now } }];
    }
    if (!state || state.deleted || state.accountId !== command.accountId) throw new AppError('NOT_FOUND', `group ${command.id} not found`);
    if (command.type === 'DeleteGroup') return [{ type: 'GroupDeleted', data: { at: now } }];
    if (command.name !== undefined) checkName(command.name);
    if (command.priority !== undefined) checkPriority(command.priority);
    const name = command.name?.trim();
    const changed = (name !== undefined && name !== state.name) || (command.priority !== undefined && command.priority !== state.priority);
    return changed ? [{ type: 'GroupEdited', data: { name, priority: command.priority, at: now } }] : [];
  },
};
