import type { StreamSealing } from '../../shared/eventStore/sealingStore.ts';
import { openSecrets, sealSecrets, type Sealer } from '../../shared/job/index.ts';

/** Where a job event keeps settings: JobCreated all of them, JobEdited the changed ones. */
const FIELD: Record<string, 'settings' | 'changes'> = { JobCreated: 'settings', JobEdited: 'changes' };

type Settings = Record<string, unknown>;
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

const mapSettings = <E extends { type: string; data: unknown }>(event: E, fn: (s: Settings) => Settings): E => {
  const field = FIELD[event.type];
  const data = event.data;
  if (!field || !isRecord(data) || !isRecord(data[field])) return event;
  return { ...event, data: { ...data, [field]: fn(data[field]) } };
};

/** Account events keep a signing secret in the one field `signingSecret`: sealed the same way. */
const mapSigning = <E extends { data: unknown }>(event: E, fn: (v: string) => string): E => {
  const data = event.data;
  return isRecord(data) && typeof data.signingSecret === 'string' && data.signingSecret !== '' ? { ...event, data: { ...data, signingSecret: fn(data.signingSecret) } } : event;
};

/** A badge's token names its public URL: sealed like a secret, opened for the owner and the jobs view's index. */
const mapBadge = <E extends { type: string; data: unknown }>(event: E, fn: (v: string) => string): E => {
  const data = event.data;
  return event.type === 'BadgeIssued' && isRecord(data) && typeof data.token === 'string' ? { ...event, data: { ...data, token: fn(data.token) } } : event;
};

/**
 * The secrets the jobs service seals (see shared/eventStore/sealingStore.ts): what is at rest, and
 * what the planner copies into due runs, is sealed; executors open it for the request they make.
 */
export const jobSealings = (sealer: Sealer): Record<string, StreamSealing> => ({
  cronjob: {
    seal: (e) => mapBadge(mapSettings(e, (s) => sealSecrets(s, sealer)), (v) => sealer.seal(v)),
    open: (e) => mapBadge(mapSettings(e, (s) => openSecrets(s, sealer)), (v) => sealer.open(v)),
  },
  account: { seal: (e) => mapSigning(e, (v) => sealer.seal(v)), open: (e) => mapSigning(e, (v) => sealer.open(v)) },
});
