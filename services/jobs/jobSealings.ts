import type { StreamSealing } from '../../shared/eventStore/sealingStore.ts';
import { openSecrets, sealSecrets, type Sealer } from '../../shared/job/index.ts';

/** Where a job event keeps settings: JobCreated all of them, JobEdited the changed ones. */
const FIELD: Record<string, 'settings' | 'changes'> = { JobCreated: 'settings', JobEdited: 'changes' };

const mapSettings = <E extends { type: string; data: any }>(event: E, fn: (s: any) => any): E => {
  const field = FIELD[event.type];
  if (!field || !event.data?.[field]) return event;
  return { ...event, data: { ...event.data, [field]: fn(event.data[field]) } };
};

/** Account events keep a signing secret in the one field `signingSecret`: sealed the same way. */
const mapSigning = <E extends { data: any }>(event: E, fn: (v: string) => string): E =>
  typeof event.data?.signingSecret === 'string' && event.data.signingSecret !== '' ? { ...event, data: { ...event.data, signingSecret: fn(event.data.signingSecret) } } : event;

/**
 * The secrets the jobs service seals (see shared/eventStore/sealingStore.ts): what is at rest, and
 * what the planner copies into due runs, is sealed; executors open it for the request they make.
 */
export const jobSealings = (sealer: Sealer): Record<string, StreamSealing> => ({
  cronjob: { seal: (e) => mapSettings(e, (s) => sealSecrets(s, sealer)), open: (e) => mapSettings(e, (s) => openSecrets(s, sealer)) },
  account: { seal: (e) => mapSigning(e, (v) => sealer.seal(v)), open: (e) => mapSigning(e, (v) => sealer.open(v)) },
});
