import type { Decider, DomainEvent } from '../decider.ts';
import { AppError } from '../errors.ts';
import { WrongExpectedRevisionError, type EventStore } from './eventStore.ts';

export interface Handled<S, E> {
  state: S;
  events: E[];
  /** Position of the last appended event; null when the command changed nothing. */
  position: bigint | null;
}

export interface CommandOptions<C, S, E extends DomainEvent> {
  /** The aggregate's stream, e.g. `cronjob-7`. */
  stream: string;
  decider: Decider<C, S, E>;
  command: C;
  /** The decision instant, asked for each attempt. */
  now: () => number;
  /** Stored with every appended event (who asked, for the audit trail). */
  metadata?: Record<string, unknown>;
  /** Decisions on a fresh state before a lasting revision conflict becomes CONFLICT. */
  maxAttempts?: number;
}

/**
 * Loads the stream, decides, appends with the revision it read. Another writer in between makes
 * the append fail; the command is then decided again on the fresh state, so no update is lost.
 */
export async function handleCommand<C, S, E extends DomainEvent>(store: EventStore, options: CommandOptions<C, S, E>): Promise<Handled<S, E>> {
  const { stream, decider, command, now, metadata = {}, maxAttempts = 8 } = options;
  for (let attempt = 1; ; attempt++) {
    const recorded = await store.readStream<E['data']>(stream);
    const state = recorded.reduce((s, e) => decider.evolve(s, { type: e.type, data: e.data } as E), decider.initialState());
    const events = decider.decide(command, state, now());
    if (events.length === 0) return { state, events, position: null };
    try {
      const result = await store.appendToStream(
        stream,
        events.map((e) => ({ type: e.type, data: e.data as Record<string, unknown>, metadata })),
        { expectedRevision: (recorded.at(-1)?.revision ?? 'no_stream') },
      );
      return { state: events.reduce(decider.evolve, state), events, position: result.position };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (attempt >= maxAttempts) throw new AppError('CONFLICT', `${stream} is being changed by others right now; try again`);
      // Back off a little, with jitter, so competing writers do not collide again in lockstep.
      await new Promise((r) => setTimeout(r, Math.random() * 5 * attempt));
    }
  }
}
