import { categoryOf, type EventData, type EventStore, type RecordedEvent } from './eventStore.ts';

/** How one category of streams seals its secrets on the way in and opens them on the way out. */
export interface StreamSealing {
  seal<E extends { type: string; data: unknown }>(event: E): E;
  /** May throw (a key this service lacks): the event is then handed on sealed. */
  open<E extends { type: string; data: unknown }>(event: E): E;
}

export interface SealingOptions {
  /**
   * Whether subscriptions get opened events too. The jobs view wants clear values; the notifier's
   * view keeps channel secrets sealed in memory and opens them only where they are sent.
   */
  openSubscriptions?: boolean;
}

/**
 * A service's view of the event store with secrets sealed at rest: events of the given stream
 * categories (`cronjob`, `channel`...) are sealed when appended and opened when a stream is read
 * (so commands decide and validate on clear values, as before). Events written before sealing
 * existed read as they are; the next change of a secret writes it sealed.
 */
export function sealingStore(store: EventStore, sealings: Record<string, StreamSealing>, options: SealingOptions = {}): EventStore {
  const opened = (event: RecordedEvent): RecordedEvent => {
    const sealing = sealings[categoryOf(event.stream)];
    if (!sealing) return event;
    try {
      return sealing.open(event);
    } catch {
      // A key this service lacks: the value stays sealed (masked like any secret) rather than
      // stopping a whole read model; whoever needs the clear value reports the error.
      return event;
    }
  };
  return {
    appendToStream(stream, events, appendOptions) {
      const sealing = sealings[categoryOf(stream)];
      return store.appendToStream(stream, sealing ? events.map((e: EventData) => sealing.seal(e)) : events, appendOptions);
    },
    appendMany(appends) {
      return store.appendMany(
        appends.map((a) => {
          const sealing = sealings[categoryOf(a.stream)];
          return sealing ? { ...a, events: a.events.map((e: EventData) => sealing.seal(e)) } : a;
        }),
      );
    },
    async readStream(stream, readOptions) {
      return (await store.readStream(stream, readOptions)).map(opened) as never;
    },
    subscribe(subscribeOptions, handler, onError) {
      if (!options.openSubscriptions) return store.subscribe(subscribeOptions, handler, onError);
      return store.subscribe(subscribeOptions, (event) => handler(opened(event)), onError);
    },
    setStreamMaxCount: (stream, maxCount) => store.setStreamMaxCount(stream, maxCount),
    close: () => store.close(),
  };
}
