import { AppError } from '../../shared/errors.ts';
import { WrongExpectedRevisionError, type EventStore } from '../../shared/eventStore/eventStore.ts';

/**
 * The per-account job limit as a reservation: before a job is created its slot is taken in the
 * account's `jobslots-<accountId>` stream, by an append with the revision read, so every replica
 * of the jobs service on any store (an append of its own, before the jobs': EventStoreDB has no
 * atomic append to several streams) takes slots one after the other; a concurrent taker makes the append fail and the reservation is decided again
 * on what the winner wrote. Each event carries how many slots are held after it, so deciding
 * reads one event, not the account's history. A deleted job gives its slot back.
 *
 * A reservation whose jobs were then not written (the store failed part way) keeps its slots:
 * the account may then hold fewer jobs than its limit, never more.
 */
export interface JobSlots {
  /**
   * Takes `count` slots, or throws LIMIT_EXCEEDED (taking none) when the account would then hold
   * more than `limit` jobs (0: no limit, the slots are still counted). `current` counts the
   * account's jobs for an account whose slots were never counted yet (jobs made before this).
   */
  reserve(accountId: number, count: number, limit: number, current: () => number): Promise<void>;
  /** Gives back `count` slots (jobs deleted). */
  release(accountId: number, count: number): Promise<void>;
}

interface SlotsData {
  count: number;
  /** Slots held after this event. */
  held: number;
  at: number;
}

const MAX_ATTEMPTS = 100;
export const jobSlotsStream = (accountId: number) => `jobslots-${accountId}`;

export function createJobSlots(store: EventStore, now: () => number): JobSlots {
  // Within this process takers of one account wait for each other instead of colliding; across
  // processes the expected revision decides.
  const tails = new Map<number, Promise<unknown>>();
  const serialized = <T>(accountId: number, fn: () => Promise<T>): Promise<T> => {
    const run = (tails.get(accountId) ?? Promise.resolve()).then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    tails.set(accountId, tail);
    void tail.then(() => {
      if (tails.get(accountId) === tail) tails.delete(accountId);
    });
    return run;
  };

  const change = async (accountId: number, delta: number, limit: number, current: () => number) => {
    const stream = jobSlotsStream(accountId);
    for (let attempt = 1; ; attempt++) {
      const [last] = await store.readStream<SlotsData>(stream, { direction: 'backwards', maxCount: 1 });
      // Never counted yet: the first reservation counts the jobs there are then.
      if (!last && delta < 0) return;
      const held = Math.max(0, (last ? last.data.held : current()) + delta);
      if (delta > 0 && limit > 0 && held > limit) throw new AppError('LIMIT_EXCEEDED', `the account may have at most ${limit} cron jobs`);
      const data: SlotsData = { count: Math.abs(delta), held, at: now() };
      try {
        await store.appendToStream(stream, [{ type: delta > 0 ? 'JobSlotsReserved' : 'JobSlotsReleased', data: { ...data } }], {
          expectedRevision: last?.revision ?? 'no_stream',
        });
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        if (attempt >= MAX_ATTEMPTS) throw new AppError('CONFLICT', `the job limit of account ${accountId} is being changed by others right now; try again`);
        // Jittered, so the replicas competing for one account do not collide again in lockstep.
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 * attempt)));
      }
    }
  };

  return {
    reserve: (accountId, count, limit, current) => (count > 0 ? serialized(accountId, () => change(accountId, count, limit, current)) : Promise.resolve()),
    release: (accountId, count) => (count > 0 ? serialized(accountId, () => change(accountId, -count, 0, () => 0)) : Promise.resolve()),
  };
}
