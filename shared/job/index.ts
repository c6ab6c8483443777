/**
 * The cron job, as jobs and planner both see it: its events and how they fold into its state,
 * its commands and the rules that decide them, its status rules, its settings (one table) and
 * their validation, its schedule. Pure domain: no transport, store or generated code.
 */
export {
  STATUS,
  decideJob,
  effectiveStatus,
  evolveJob,
  initialJobState,
  jobDecider,
  type CronJob,
  type JobCommand,
  type JobEvent,
  type JobEventType,
  type JobState,
  type JobStatus,
} from './cronJob.ts';
export {
  HTTP_METHODS,
  SCHEDULE_SETTINGS,
  SECRET_SETTINGS,
  SETTINGS,
  SETTING_NAMES,
  TARGET_SETTINGS,
  compactSettings,
  completeSettings,
  defaultSettings,
  literalCopier,
  normalizeUrl,
  secretFlag,
  settingOf,
  targetOf,
  type HttpMethod,
  type JobSettings,
  type ScheduleName,
  type Setting,
  type SettingKind,
  type SettingName,
  type SettingsInput,
  type TargetName,
  type TargetSettings,
} from './settings.ts';
export { compileSchedule, resolveSettings } from './resolveSettings.ts';
export { diffSettings, type SettingChange } from './settingsDiff.ts';
export { jobVersions, versionSettings, type VersionMark } from './versions.ts';
export {
  maskHeaders,
  maskSecrets,
  maskUrl,
  openHeaders,
  openSecrets,
  openUrl,
  sealHeaders,
  sealSecrets,
  sealUrl,
  type Sealer,
} from './secretSettings.ts';
