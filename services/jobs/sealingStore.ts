import type { EventData, EventStore, RecordedEvent } from '../../shared/eventStore/eventStore.ts';
import { openSecrets, sealSecrets, type Sealer } from '../../shared/job/secretSettings.ts';

/** Where a job event keeps settings: JobCreated all of them, JobEdited the changed ones. */
const FIELD: Record<string, 'settings' | 'changes'> = { JobCreated: 'settings', JobEdited: 'changes' };

const isJobStream = (stream: string) => stream.startsWith('cronjob-');

/**
 * The jobs service's view of the event store: job secrets are sealed on their way in and opened
 * on their way out, so what is at rest (and what the planner copies into due runs) is sealed while
 * the jobs service decides and validates on clear values, as before. Events written before
 * sealing existed read as they are; the next edit of a secret writes it sealed.
 */
export function sealingStore(store: EventStore, sealer: Sealer): EventStore {
  const mapEvent = <E extends { type: string; data: any }>(event: E, fn: (s: any) => any): E => {
    const field = FIELD[event.type];
    if (!field || !event.data?.[field]) return event;
    return { ...event, data: { ...event.data, [field]: fn(event.data[field]) } };
  };
  const opened = (event: RecordedEvent): RecordedEvent => {
    if (!isJobStream(event.stream)) return event;
    try {
      return mapEvent(event, (s) => openSecrets(s, sealer));
    } catch {
      // A key this service lacks: the value stays sealed (masked like any secret) rather than
      // stopping the whole read model; the executor reports the run's error.
      return event;
    }
  };
  return {
    appendToStream(stream, events, options) {
      const sealed = isJobStream(stream) ? events.map((e: EventData) => mapEvent(e, (s) => sealSecrets(s, sealer))) : events;
      return store.appendToStream(stream, sealed, options);
    },
    async readStream(stream, options) {
      return (await store.readStream(stream, options)).map(opened) as never;
    },
    subscribe(options, handler, onError) {
      return store.subscribe(options, (event) => handler(opened(event)), onError);
    },
    setStreamMaxCount: (stream, maxCount) => store.setStreamMaxCount(stream, maxCount),
    close: () => store.close(),
  };
}
