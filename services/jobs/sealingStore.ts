import type { EventData, EventStore, RecordedEvent } from '../../shared/eventStore/eventStore.ts';
import { openSecrets, sealSecrets, type Sealer } from '../../shared/job/index.ts';

/** Where a job event keeps settings: JobCreated all of them, JobEdited the changed ones. */
const FIELD: Record<string, 'settings' | 'changes'> = { JobCreated: 'settings', JobEdited: 'changes' };

const isJobStream = (stream: string) => stream.startsWith('cronjob-');
const isAccountStream = (stream: string) => stream.startsWith('account-');

/** Account events keep a signing secret in the one field `signingSecret`: sealed the same way. */
const mapSigning = <E extends { data: any }>(event: E, fn: (v: string) => string): E =>
  typeof event.data?.signingSecret === 'string' && event.data.signingSecret !== '' ? { ...event, data: { ...event.data, signingSecret: fn(event.data.signingSecret) } } : event;

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
    const job = isJobStream(event.stream);
    if (!job && !isAccountStream(event.stream)) return event;
    try {
      return job ? mapEvent(event, (s) => openSecrets(s, sealer)) : mapSigning(event, (v) => sealer.open(v));
    } catch {
      // A key this service lacks: the value stays sealed (masked like any secret) rather than
      // stopping the whole read model; the executor reports the run's error.
      return event;
    }
  };
  return {
    appendToStream(stream, events, options) {
      const sealed = isJobStream(stream)
        ? events.map((e: EventData) => mapEvent(e, (s) => sealSecrets(s, sealer)))
        : isAccountStream(stream)
          ? events.map((e: EventData) => mapSigning(e, (v) => sealer.seal(v)))
          : events;
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
