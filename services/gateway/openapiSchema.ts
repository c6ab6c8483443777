/**
 * The schema helpers of the OpenAPI document (openapi.ts), and the schemas of the job settings,
 * derived from the settings table so that the document cannot drift from what the API accepts.
 */

import { SETTING_NAMES, secretFlag, settingOf, type SettingKind, type SettingName } from '../../shared/job/index.ts';

export type Schema = Record<string, unknown>;

export const int = (description: string, extra: Schema = {}): Schema => ({ type: 'integer', description, ...extra });
export const str = (description: string, extra: Schema = {}): Schema => ({ type: 'string', description, ...extra });
export const bool = (description: string): Schema => ({ type: 'boolean', description });
export const nullable = (type: string, description: string): Schema => ({ type: [type, 'null'], description });
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const list = (item: Schema): Schema => ({ type: 'array', items: item });

/** A setting's JSON type, by its kind (null clears optional ints and the group). */
const SETTING_TYPE: Record<SettingKind, string | string[]> = { text: 'string', int: 'integer', bool: 'boolean', optionalInt: ['integer', 'null'], ref: ['integer', 'null'] };

/** A setting's schema, from its row of the settings table (docs/api.md "Settings"). */
function settingSchema(name: SettingName): Schema {
  const row = settingOf(name);
  const { min, max, maxLength, oneOf, pattern } = row.limits ?? {};
  const schema: Schema = { type: SETTING_TYPE[row.kind], description: row.doc };
  if (oneOf) schema.enum = [...oneOf];
  // "" and null are every setting's "none": worth stating only when the default is something.
  if (typeof row.default !== 'function' && row.default !== '' && row.default !== null) schema.default = row.default;
  if (min !== undefined) schema.minimum = min;
  if (max !== undefined) schema.maximum = max;
  if (maxLength !== undefined) schema.maxLength = maxLength;
  if (pattern !== undefined) schema.pattern = pattern;
  if (row.secret) schema.writeOnly = true;
  return schema;
}

/** The settable fields of a cron job, derived from the settings table. */
export const JOB_SETTINGS: Record<string, Schema> = Object.fromEntries(SETTING_NAMES.map((name) => [name, settingSchema(name)]));

/** The settings as a job record shows them: a secret one only as whether it is set. */
export const RECORD_SETTINGS: Record<string, Schema> = Object.fromEntries(
  SETTING_NAMES.map((name) => (settingOf(name).secret ? [secretFlag(name), bool(`whether a ${name} is set`)] : [name, JOB_SETTINGS[name]!])),
);
