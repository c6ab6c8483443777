import { groupDecider, type GroupEvent } from '../../../services/jobs/group.ts';
import { deciderSpec, NOW } from '../support/given.ts';

const given = deciderSpec(groupDecider);
const created: GroupEvent = { type: 'GroupCreated', data: { id: 3, accountId: 1, name: 'nightly', priority: 10, at: 1 } };
const deleted: GroupEvent = { type: 'GroupDeleted', data: { at: 2 } };

describe('group decider (given/when/then)', () => {
  describe('CreateGroup', () => {
    it('records the group with its name trimmed', () =>
      given()
        .when({ type: 'CreateGroup', id: 3, accountId: 1, name: '  nightly ', priority: 10 })
        .then([{ type: 'GroupCreated', data: { id: 3, accountId: 1, name: 'nightly', priority: 10, at: NOW } }]));
    it('a blank name is missing', () => given().when({ type: 'CreateGroup', id: 3, accountId: 1, name: '  ', priority: 0 }).then({ error: 'MISSING_PARAMETER', message: 'name: a group needs a name' }));
    it('a name over 255 characters is refused', () =>
      given().when({ type: 'CreateGroup', id: 3, accountId: 1, name: 'n'.repeat(256), priority: 0 }).then({ error: 'INVALID_PARAMETER', message: 'name: must be at most 255 characters, got 256' }));
    for (const priority of [-1, 1_000_001, 1.5]) {
      it(`priority ${priority} is refused`, () =>
        given().when({ type: 'CreateGroup', id: 3, accountId: 1, name: 'g', priority }).then({ error: 'INVALID_PARAMETER', message: `priority: must be a whole number from 0 to 1000000, got ${priority}` }));
    }
    it('an id that is taken is never reused', () => given(created).when({ type: 'CreateGroup', id: 3, accountId: 1, name: 'g', priority: 0 }).then({ error: 'INTERNAL' }));
  });

  describe('EditGroup', () => {
    it('records what changed', () =>
      given(created).when({ type: 'EditGroup', id: 3, accountId: 1, name: 'weekly', priority: 10 }).then([{ type: 'GroupEdited', data: { name: 'weekly', priority: 10, at: NOW } }]));
    it('records a priority alone', () =>
      given(created).when({ type: 'EditGroup', id: 3, accountId: 1, priority: 0 }).then([{ type: 'GroupEdited', data: { name: undefined, priority: 0, at: NOW } }]));
    it('records nothing when nothing changes (a name that only differs by spaces included)', () =>
      given(created).when({ type: 'EditGroup', id: 3, accountId: 1, name: ' nightly ', priority: 10 }).then([]));
    it('checks the new values', () => given(created).when({ type: 'EditGroup', id: 3, accountId: 1, name: '' }).then({ error: 'MISSING_PARAMETER' }));
    it("another account's group is not found", () => given(created).when({ type: 'EditGroup', id: 3, accountId: 2, name: 'x' }).then({ error: 'NOT_FOUND', message: 'group 3 not found' }));
    it('a deleted group is not found', () => given(created, deleted).when({ type: 'EditGroup', id: 3, accountId: 1, name: 'x' }).then({ error: 'NOT_FOUND' }));
  });

  describe('DeleteGroup', () => {
    it('records the group deleted', () => given(created).when({ type: 'DeleteGroup', id: 3, accountId: 1 }).then([{ type: 'GroupDeleted', data: { at: NOW } }]));
    it('a second delete finds nothing', () => given(created, deleted).when({ type: 'DeleteGroup', id: 3, accountId: 1 }).then({ error: 'NOT_FOUND' }));
    it('an unknown group is not found', () => given().when({ type: 'DeleteGroup', id: 4, accountId: 1 }).then({ error: 'NOT_FOUND' }));
  });
});
