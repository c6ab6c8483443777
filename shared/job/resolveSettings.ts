import { AppError } from '../errors.ts';
import { checkFires, parseSchedule, ScheduleError, type Schedule } from '../schedule/index.ts';
import { SETTING_NAMES, settingOf, type JobSettings, type SettingsInput } from './settings.ts';

/** Validates the schedule triple; errors name the field the schedule module blames. */
export function compileSchedule(settings: Pick<JobSettings, 'expression' | 'timezone' | 'filter' | 'dstGap' | 'dstOverlap'>, jobId: number): Schedule {
  try {
    const dst = { gap: settings.dstGap, overlap: settings.dstOverlap };
    return parseSchedule({ expression: settings.expression, timezone: settings.timezone, filter: settings.filter || null, jobId, dst });
  } catch (error) {
    if (error instanceof ScheduleError) throw new AppError('INVALID_PARAMETER', error.message, { field: [error.field] });
    throw error;
  }
}

/**
 * Applies `input` over `base` and checks every setting's rule (the SETTINGS table), then compiles
 * the schedule. Pure: returns the resolved settings or throws AppError('INVALID_PARAMETER')
 * naming the parameter and the rule. With `now`, a schedule the input sets must also fire within
 * a year of it (checkFires).
 */
export function resolveSettings(base: JobSettings, input: SettingsInput, jobId: number, now?: number): JobSettings {
  const s: Record<string, unknown> = { ...base };
  for (const name of SETTING_NAMES) {
    const value = input[name];
    if (value === undefined) continue;
    const { normalize } = settingOf(name);
    s[name] = normalize ? normalize(value) : value;
  }
  for (const name of SETTING_NAMES) {
    const { check } = settingOf(name);
    const canonical = check?.(s[name], name);
    if (canonical !== undefined) s[name] = canonical;
  }
  const settings = s as JobSettings;
  const schedule = compileSchedule(settings, jobId);
  if (now !== undefined && (input.expression !== undefined || input.filter !== undefined || input.timezone !== undefined || input.dstGap !== undefined)) {
    try {
      checkFires(schedule, now);
    } catch (error) {
      if (error instanceof ScheduleError) throw new AppError('INVALID_PARAMETER', error.message, { field: [error.field] });
      throw error;
    }
  }
  return settings;
}
