import type { MessageInitShape } from '@bufbuild/protobuf';
import type { CronJobSchema, JobSettings as ProtoSettings, JobSettingsSchema } from '../gen/tock/v1/jobs_pb.ts';
import { SETTING_NAMES, secretFlag, settingOf, type JobSettings, type SettingKind, type SettingsInput } from '../job/index.ts';

/**
 * The job's settings <-> proto, derived from the SETTINGS table: each setting is the proto field
 * of the same (camelCase) name, typed by its kind. The one place that knows how a kind travels.
 */

type ProtoJobSettings = MessageInitShape<typeof JobSettingsSchema>;
/** The settings part of proto CronJob (the secret ones as has<Name>). */
export type ProtoJobFields = Omit<MessageInitShape<typeof CronJobSchema>, 'id' | 'accountId' | 'fail' | 'status' | 'points' | 'pausedUntil' | 'nextRun' | 'createdAt' | 'updatedAt' | 'deleted' | '$typeName'>;

/** Domain value -> proto CronJob field (absent for "none"). */
const TO_PROTO: Record<SettingKind, (v: unknown) => unknown> = {
  text: (v) => v,
  int: (v) => v,
  bool: (v) => v,
  optionalInt: (v) => v ?? undefined,
  ref: (v) => (v === null ? undefined : BigInt(v as number)),
};

/** Proto JobSettings field -> domain input (absent stays absent; 0 for optionalInt/ref is "clear", checked by the domain). */
const FROM_PROTO: Record<SettingKind, (v: unknown) => unknown> = {
  text: (v) => v,
  int: (v) => v,
  bool: (v) => v,
  optionalInt: (v) => v,
  ref: (v) => Number(v),
};

/** The given fields of a proto JobSettings, as the domain's partial settings. */
export function settingsFromProto(p: ProtoSettings | ProtoJobSettings | undefined): SettingsInput {
  const out: Record<string, unknown> = {};
  if (!p) return out;
  for (const name of SETTING_NAMES) {
    const v = (p as Record<string, unknown>)[name];
    if (v !== undefined) out[name] = FROM_PROTO[settingOf(name).kind](v);
  }
  return out;
}

/** The settings of proto CronJob: every setting, a secret one only as whether it is set. */
export function settingsToProtoJob(s: JobSettings): ProtoJobFields {
  const out: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) {
    const row = settingOf(name);
    if (row.secret) out[secretFlag(name)] = s[name] !== '';
    else out[name] = TO_PROTO[row.kind](s[name]);
  }
  return out;
}
