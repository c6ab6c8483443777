/** The jobs the memory benches fold (planner.bench.ts, jobsView.bench.ts): the same mix for both, as a store would hand them over. */
import type { JobEvent } from '../../shared/job/index.ts';
import { defaultSettings } from '../../shared/job/index.ts';

/** A realistic mix: the default interval, common crontabs, R draws, calendar intervals, one-time, three zones. */
const EXPRESSIONS = ['15 minutes', '15 minutes', '*/5 * * * *', '0 * * * *', '*/5 * * * *', 'R * * * *', '1 day 17:05', '30 * * * * *', '2 hours', '0 9 * * 1-5'];
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York'];

export function* jobEvents(n: number, now: number): Generator<[number, JobEvent]> {
  const base = defaultSettings('UTC');
  for (let id = 1; id <= n; id++) {
    const created = now - ((id * 7919) % (30 * 86_400)) * 1000; // within the last 30 days
    const expression = id % 97 === 0 ? `@${Math.floor(now / 1000) + (id % 86_400)}` : EXPRESSIONS[id % EXPRESSIONS.length]!;
    const settings = { ...base, url: `https://hooks.example.com/cron/${id}?token=${(id * 2654435761) >>> 0}`, expression, timezone: ZONES[id % 3]!, delay: id % 50 === 0 ? 5 : 0 };
    // As the store hands them over: parsed from JSON (strings and objects as a rebuild sees them).
    yield [id, { type: 'JobCreated', data: JSON.parse(JSON.stringify({ id, accountId: 1 + (id % 5000), settings, at: created })) }];
    if (id % 10 === 0) yield [id, { type: 'FailureCounted', data: { fail: 1, runId: `${id}:1`, at: created + 1000 } }];
    if (id % 20 === 0) yield [id, { type: 'JobPaused', data: { until: now + 3_600_000, at: created + 2000 } }];
    if (id % 50 === 1) yield [id, { type: 'JobDisabled', data: { at: created + 3000 } }];
    if (id % 100 === 3) yield [id, { type: 'RunRequested', data: { runId: `${id}:r`, runAt: now + 60_000, payload: null, at: created + 4000 } }];
  }
}
