import { describeSchedule, nextRuns, parseSchedule } from '../../../../shared/schedule/index.ts';
import { dstNote } from './dst.ts';
import { formatTime } from './format.ts';

/**
 * The schedule preview, computed in the page by the schedule module the server uses (the API has
 * no function that previews an expression before a job exists). `R` picks depend on the job id:
 * a new job's are drawn when it is saved, so its preview of an R field is only an example. Each
 * run carries a note when it meets a daylight-saving transition (a gap or a repeated hour).
 */
export function previewLines(expression: string, timezone: string, filter: string, jobId: number | undefined, now: number): { text: string[]; notes: (string | undefined)[]; error?: string } {
  try {
    const schedule = parseSchedule({ expression: expression || '15 minutes', timezone, filter: filter || null, jobId });
    const runs = nextRuns(schedule, now, 5);
    const text = [describeSchedule(schedule), ...runs.map((ms) => formatTime(ms / 1000, timezone))];
    const notes = [undefined, ...runs.map((ms) => dstNote(ms, timezone))];
    if (!runs.length) text.push('no future run');
    return { text, notes };
  } catch (error) {
    return { text: [], notes: [], error: (error as Error).message };
  }
}
