import { expect } from 'chai';
import { groupDecider, type GroupEvent } from '../../../services/jobs/group.ts';
import { decideOn, handleCommand } from '../../../shared/eventStore/handleCommand.ts';
import { AppError } from '../../../shared/errors.ts';
import type { EventStore } from '../../../shared/eventStore/eventStore.ts';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';
import { NOW } from '../support/given.ts';

const STREAM = 'group-3';
const created: GroupEvent = { type: 'GroupCreated', data: { id: 3, accountId: 1, name: 'nightly', priority: 10, at: 1 } };

/**
 * A real (in-memory SQLite) store with a competing writer: before each of the handler's first
 * `races` appends, another writer appends to the same stream, so the store itself answers the
 * handler's append with a revision conflict. `appends` counts the handler's attempts.
 */
function withCompetingWriter(store: EventStore, races: number, rival: (n: number) => GroupEvent) {
  let raced = 0;
  const seen = { appends: 0 };
  const racing: EventStore = Object.create(store);
  racing.appendToStream = async (stream, events, options) => {
    seen.appends++;
    if (raced < races) {
      raced++;
      const e = rival(raced);
      await store.appendToStream(stream, [{ type: e.type, data: e.data }]);
    }
    return store.appendToStream(stream, events, options);
  };
  return { store: racing, seen };
}

describe('handleCommand (the only code that touches the store for a decider)', () => {
  let store: EventStore;
  beforeEach(async () => {
    store = openSqliteEventStore(':memory:');
    await store.appendToStream(STREAM, [{ type: created.type, data: created.data }]);
  });
  afterEach(() => store.close());

  const rename = (name: string) => ({ type: 'EditGroup' as const, id: 3, accountId: 1, name });
  const now = () => NOW;

  it('appends the decided events with the metadata, and answers the new state and position', async () => {
    const handled = await handleCommand(store, { stream: STREAM, decider: groupDecider, command: rename('weekly'), now, metadata: { accountId: 1 } });
    expect(handled.events).to.deep.equal([{ type: 'GroupEdited', data: { name: 'weekly', priority: undefined, at: NOW } }]);
    expect(handled.state).to.include({ name: 'weekly' });
    const stored = await store.readStream(STREAM);
    expect(stored.map((e) => [e.type, e.metadata])).to.deep.equal([
      ['GroupCreated', {}],
      ['GroupEdited', { accountId: 1 }],
    ]);
    expect(handled.position).to.equal(stored[1]!.position);
  });

  it('a command that changes nothing appends nothing (position null)', async () => {
    const handled = await handleCommand(store, { stream: STREAM, decider: groupDecider, command: rename('nightly'), now });
    expect(handled).to.deep.include({ events: [], position: null });
    expect(await store.readStream(STREAM)).to.have.length(1);
  });

  it('a revision conflict is retried: the command is decided again on the state the other writer left', async () => {
    // The rival renames the group to what the command asks: decided again, the command has nothing left to do.
    const { store: racing, seen } = withCompetingWriter(store, 1, () => ({ type: 'GroupEdited', data: { name: 'weekly', at: 2 } }));
    const handled = await handleCommand(racing, { stream: STREAM, decider: groupDecider, command: rename('weekly'), now });
    expect(seen.appends).to.equal(1);
    expect(handled).to.deep.include({ events: [], position: null });
    expect((await store.readStream(STREAM)).map((e) => e.data.name)).to.deep.equal(['nightly', 'weekly']);
  });

  it('after a conflict the retry appends on top of the other writer, nothing lost', async () => {
    const { store: racing, seen } = withCompetingWriter(store, 2, (n) => ({ type: 'GroupEdited', data: { priority: n, at: 2 } }));
    const handled = await handleCommand(racing, { stream: STREAM, decider: groupDecider, command: rename('weekly'), now });
    expect(seen.appends).to.equal(3);
    expect(handled.state).to.include({ name: 'weekly', priority: 2 });
    expect((await store.readStream(STREAM)).map((e) => e.type)).to.deep.equal(['GroupCreated', 'GroupEdited', 'GroupEdited', 'GroupEdited']);
  });

  it('conflicts on every attempt: CONFLICT after maxAttempts, and the command is not applied', async () => {
    const { store: racing, seen } = withCompetingWriter(store, Infinity, (n) => ({ type: 'GroupEdited', data: { priority: n, at: 2 } }));
    const error = await handleCommand(racing, { stream: STREAM, decider: groupDecider, command: rename('weekly'), now, maxAttempts: 4 }).then(() => null, (e: unknown) => e);
    expect(error).to.be.instanceOf(AppError);
    expect(error).to.include({ kind: 'CONFLICT', message: 'group-3 is being changed by others right now; try again' });
    expect(seen.appends).to.equal(4);
    expect((await store.readStream(STREAM)).some((e) => e.data.name === 'weekly')).to.equal(false);
  });

  it('other store failures are not retried', async () => {
    let appends = 0;
    const broken: EventStore = Object.create(store);
    broken.appendToStream = async () => {
      appends++;
      throw new AppError('UNAVAILABLE', 'event store (sqlite): database is locked');
    };
    const error = await handleCommand(broken, { stream: STREAM, decider: groupDecider, command: rename('weekly'), now }).then(() => null, (e: unknown) => e);
    expect(error).to.include({ kind: 'UNAVAILABLE' });
    expect(appends).to.equal(1);
  });

  it("a decider's refusal is answered as is, with nothing appended", async () => {
    const error = await handleCommand(store, { stream: STREAM, decider: groupDecider, command: { type: 'EditGroup', id: 3, accountId: 2, name: 'x' }, now }).then(() => null, (e: unknown) => e);
    expect(error).to.include({ kind: 'NOT_FOUND' });
    expect(await store.readStream(STREAM)).to.have.length(1);
  });

  describe('a command already decided (a batch validated on a read model before writing)', () => {
    /** The group decider, counting its decisions. */
    const counted = () => {
      const seen = { decisions: 0 };
      const decider: typeof groupDecider = { ...groupDecider, decide: (c, s, at) => (seen.decisions++, groupDecider.decide(c, s, at)) };
      return { decider, seen };
    };
    const state = groupDecider.evolve(null, created);

    it('decided on the stream as it is: appended as decided, not decided again', async () => {
      const { decider, seen } = counted();
      const decided = decideOn(decider, rename('weekly'), state, 0, NOW);
      const handled = await handleCommand(store, { stream: STREAM, decider, command: rename('weekly'), now, decided });
      expect(seen.decisions).to.equal(1);
      expect(handled.events).to.deep.equal(decided.events);
      expect((await store.readStream(STREAM)).map((e) => e.data.name)).to.deep.equal(['nightly', 'weekly']);
    });

    it('the stream moved on since: decided again on the stream, the other writer kept', async () => {
      await store.appendToStream(STREAM, [{ type: 'GroupEdited', data: { priority: 5, at: 2 } }]);
      const { decider, seen } = counted();
      const decided = decideOn(decider, rename('weekly'), state, 0, NOW);
      const handled = await handleCommand(store, { stream: STREAM, decider, command: rename('weekly'), now, decided });
      expect(seen.decisions).to.equal(2);
      expect(handled.state).to.include({ name: 'weekly', priority: 5 });
    });

    it('an empty decision on a stream that moved on: decided again (it may have work now)', async () => {
      await store.appendToStream(STREAM, [{ type: 'GroupEdited', data: { name: 'weekly', at: 2 } }]);
      const { decider, seen } = counted();
      const decided = decideOn(decider, rename('nightly'), state, 0, NOW);
      expect(decided.events).to.deep.equal([]);
      const handled = await handleCommand(store, { stream: STREAM, decider, command: rename('nightly'), now, decided });
      expect(seen.decisions).to.equal(2);
      expect(handled.state).to.include({ name: 'nightly' });
    });

    it('an empty decision on the stream as it is: nothing appended, not decided again', async () => {
      const { decider, seen } = counted();
      const decided = decideOn(decider, rename('nightly'), state, 0, NOW);
      const handled = await handleCommand(store, { stream: STREAM, decider, command: rename('nightly'), now, decided });
      expect(seen.decisions).to.equal(1);
      expect(handled).to.deep.include({ events: [], position: null });
      expect(await store.readStream(STREAM)).to.have.length(1);
    });
  });
});
