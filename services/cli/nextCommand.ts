import { parseArgs } from 'node:util';
import { describeSchedule, nextRuns, parseSchedule, ScheduleError } from '../../shared/schedule/index.ts';

const USAGE =
  "usage: tock next '<expression>' [--filter '<f>'] [--tz ZONE] [--from ISO|unix] [--count N] [--job-id N] [--dst-gap RULE] [--dst-overlap RULE] [--describe]";

/**
 * `tock next`: previews a schedule, one ISO-8601 UTC instant per line (nothing for `manual` or a
 * past one-time). `--from` is "strictly after" for crontab and "the previous run / creation
 * time" for intervals; it defaults to now. `--job-id` seeds R draws and places H; `--dst-gap` and
 * `--dst-overlap` take a job's DST rules (docs/schedule.md); `--describe` prints the
 * schedule's sentence to stderr first. Returns the exit code: 0 ok, 1 invalid schedule, 2 usage.
 */
export async function nextCommand(args: string[], out: (line: string) => void, err: (line: string) => void): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        filter: { type: 'string' },
        tz: { type: 'string', default: 'UTC' },
        from: { type: 'string' },
        count: { type: 'string', default: '10' },
        'job-id': { type: 'string', default: '0' },
        'dst-gap': { type: 'string' },
        'dst-overlap': { type: 'string' },
        describe: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (e) {
    err(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values } = parsed;
  const usage = (problem: string) => {
    err(`${problem}\n${USAGE}`);
    return 2;
  };
  // Accept the argv with or without the command word, so the function works both ways.
  const positionals = parsed.positionals[0] === 'next' && parsed.positionals.length === 2 ? parsed.positionals.slice(1) : parsed.positionals;
  if (values.help) {
    out(USAGE);
    return 0;
  }
  if (positionals.length !== 1) return usage(`expected one expression (quote it), got ${positionals.length}`);
  const count = Number(values.count);
  if (!Number.isInteger(count) || count < 1 || count > 1000) {
    return usage(`--count must be a whole number from 1 to 1000, got '${values.count}'`);
  }
  const jobId = Number(values['job-id']);
  if (!Number.isSafeInteger(jobId) || jobId < 0) return usage(`--job-id must be a whole number, got '${values['job-id']}'`);
  const from = values.from === undefined ? Date.now() : parseInstant(values.from);
  if (from === null) {
    return usage(`--from must be an ISO-8601 instant with a zone (2024-10-16T10:00:00Z) or unix seconds, got '${values.from}'`);
  }

  try {
    const dst = { gap: values['dst-gap'], overlap: values['dst-overlap'] };
    const schedule = parseSchedule({ expression: positionals[0]!, timezone: values.tz, filter: values.filter ?? null, jobId, dst });
    if (values.describe) err(describeSchedule(schedule));
    for (const run of nextRuns(schedule, from, count)) out(formatInstant(run));
    return 0;
  } catch (e) {
    if (!(e instanceof ScheduleError)) throw e;
    err(`invalid ${e.field}: ${e.message}`);
    return 1;
  }
}

/** Unix seconds, or an ISO-8601 instant that names its zone (Z or an offset). */
function parseInstant(text: string): number | null {
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) return null;
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : t;
}

/** 2024-10-16T10:01:00Z: milliseconds only when there are any. */
function formatInstant(t: number): string {
  return new Date(t).toISOString().replace('.000Z', 'Z');
}
