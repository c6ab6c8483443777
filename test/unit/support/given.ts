import { expect } from 'chai';
import { AppError, type ErrorKind } from '../../../shared/errors.ts';
import type { Decider, DomainEvent } from '../../../shared/decider.ts';

/** 2030-01-01T00:00:00Z: the decision instant of every spec unless one says otherwise. */
export const NOW = Date.UTC(2030, 0, 1);

/** What a command must be refused with: the error kind and (part of) its message. */
export interface Refusal {
  error: ErrorKind;
  message?: string | RegExp;
}

/**
 * Given/When/Then for a decider: `given(events).when(command).then(events | { error })`. The
 * state is folded from the given events with the decider's own evolve, the decision is made at
 * `now`, and the answer is compared exactly: a spec names every event the command must record.
 */
export function deciderSpec<C, S, E extends DomainEvent>(decider: Decider<C, S, E>, now = NOW) {
  return function given(...history: E[]) {
    return {
      when(command: C, at = now) {
        const decide = () => decider.decide(command, history.reduce(decider.evolve, decider.initialState()), at);
        return {
          then(expected: E[] | Refusal) {
            if (Array.isArray(expected)) {
              expect(decide()).to.deep.equal(expected);
              return;
            }
            let thrown: unknown;
            let events: E[] | undefined;
            try {
              events = decide();
            } catch (error) {
              thrown = error;
            }
            if (events) expect.fail(`expected ${expected.error}, got events ${JSON.stringify(events)}`);
            expect(thrown, String(thrown)).to.be.instanceOf(AppError);
            const error = thrown as AppError;
            expect(error.kind, error.message).to.equal(expected.error);
            if (typeof expected.message === 'string') expect(error.message).to.equal(expected.message);
            else if (expected.message) expect(error.message).to.match(expected.message);
          },
        };
      },
    };
  };
}
