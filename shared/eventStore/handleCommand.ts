import type { Decider, DomainEvent } from '../decider.ts';
import { AppError } from '../errors.ts';
import { WrongExpectedRevisionError, type EventStore } from './eventStore.ts';

export interface Handled<S, E> {
  state: S;
  events: E[];
  /** Position of the last appended event; null when the command changed nothing. */
  position: bigint | null;
}

/** A command decided on the state of a stream at `revision` (its last event's; 'no_stream' before the first). */
export interface Decided<S, E> {
  state: S;
  revision: number | 'no_stream';
  events: E[];
}

/** Decides `command` on `state`: what a caller that validates a whole batch before writing keeps for handleCommand. */
export const decideOn = <C, S, E extends DomainEvent>(decider: Decider<C, S, E>, command: C, state: S, revision: number | 'no_stream', now: number): Decided<S, E> => ({
  state,
  revision,
  events: decider.decide(command, state, now),
});

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
  /**
   * The command already decided on a state read elsewhere (a read model): its events are
   * appended as they are, so the command is decided once. When the stream has moved on since,
   * the command is decided again on the stream's state, as after any conflict.
   */
  decided?: Decided<S, E>;
}

/**
 * Loads the stream, decides, appends with the revision it read. Another writer in between makes
 * the append fail; the command is then decided again on the fresh state, so no update is lost.
 */
export async function handleCommand<C, S, E extends DomainEvent>(store: EventStore, options: CommandOptions<C, S, E>): Promise<Handled<S, E>> {
  const { stream, decider, command, now, metadata = {}, maxAttempts = 8 } = options;
  const load = async (): Promise<Decided<S, E>> => {
    const recorded = await store.readStream<E['data']>(stream);
    const state = recorded.reduce((s, e) => decider.evolve(s, { type: e.type, data: e.data } as E), decider.initialState());
    return decideOn(decider, command, state, recorded.at(-1)?.revision ?? 'no_stream', now());
  };
  let decided = options.decided;
  // Nothing to append proves nothing about the stream: an empty decision holds only while the stream is where it was read.
  if (decided && decided.events.length === 0 && (await revisionOf(store, stream)) !== decided.revision) decided = undefined;
  for (let attempt = 1; ; attempt++) {
    const { state, revision, events } = decided ?? (await load());
    decided = undefined;
    if (events.length === 0) return { state, events, position: null };
    try {
      const result = await store.appendToStream(
        stream,
        events.map((e) => ({ type: e.type, data: e.data as Record<string, unknown>, metadata })),
        { expectedRevision: revision },
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

async function revisionOf(store: EventStore, stream: string): Promise<number | 'no_stream'> {
  const [last] = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
  return last?.revision ?? 'no_stream';
}
