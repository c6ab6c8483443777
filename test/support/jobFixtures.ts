/** docs/api.md (Cron jobs): every settable field of a job but the password, Tock's own ones included. */
export const RECORD_KEYS = [
  'id', 'group', 'name', 'expression', 'filter', 'timezone', 'url', 'httpMethod', 'postData', 'httpHeaders', 'username', 'hasPassword',
  'userAgent', 'timeout', 'instances', 'delay', 'notify', 'notifyEvery', 'notifyMatch', 'notifyTime', 'notifyFailureRate', 'notifyFailureWindow', 'notifyReminder', 'notifySkipped', 'failureThreshold', 'notifyChannels', 'keyword',
  'pattern', 'retries', 'retryBackoff', 'dstGap', 'dstOverlap', 'fail', 'status', 'points', 'pausedUntil', 'nextRun', 'createdAt', 'updatedAt',
  // Tock's additions (docs/api.md, "Job health").
  'lastResult', 'recentOutcomes', 'runs24h', 'failures24h', 'hourly24h', 'groupName',
];

/** Fields of a job record that its runs change (docs/api.md, "Job health"), and nextRun. */
export const RUN_FIELDS = ['lastResult', 'recentOutcomes', 'runs24h', 'failures24h', 'hourly24h', 'nextRun'];

/** A job record without what its runs change: what two reads of an unchanged job agree on. */
export const withoutRunFields = <T extends Record<string, unknown>>(record: T) => Object.fromEntries(Object.entries(record).filter(([k]) => !RUN_FIELDS.includes(k)));

// Schedules that never fire while a test runs, so a running executor cannot change `fail` under us.
export const YEARLY = '0 0 1 1 *';
/** An hour of the day about twelve hours away (in UTC and nearby zones): daily schedules at it do not fire during a test run. */
export const FAR_HOUR = (new Date().getUTCHours() + 12) % 24;
export const now = () => Math.floor(Date.now() / 1000);

export const FULL = {
  url: 'https://example.com/full?x=1',
  expression: `30 ${FAR_HOUR} * * 1-5`,
  filter: "weekday != 'Sat'",
  delay: 3,
  timezone: 'Europe/Paris',
  timeout: 120,
  instances: 2,
  username: 'bob',
  password: 's3cret',
  httpMethod: 'post',
  postData: 'a=1&b=2',
  httpHeaders: 'X-One: 1\r\nX-Two: 2',
  userAgent: 'MyAgent/2.0',
  notify: false,
  notifyEvery: 5,
  notifyMatch: 'ERROR',
  notifyTime: 60,
  failureThreshold: 7,
  keyword: 'OK',
  pattern: 'FATAL',
  name: 'full job',
};

/**
 * `count` of the costliest schedules to plan: sparse filters over 1-second intervals and
 * crontabs, every one different (no cache helps).
 */
export function hostileBatch(count: number) {
  return Array.from({ length: count }, (_, i) => {
    const at = `hour == ${i % 24} and minute == ${(i * 7) % 60}`;
    const kinds = [
      { expression: '1 second', filter: `month == 2 and day == 29 and ${at}` },
      { expression: '1 second', filter: `month == ${1 + (i % 12)} and day == ${1 + (i % 28)} and ${at}`, timezone: 'Europe/Paris' },
      { expression: '* * * * * *', filter: `day == 13 and weekday == 'Fri' and ${at}`, timezone: 'America/New_York' },
      { expression: `${i % 60} ${i % 24} */13 * 5`, filter: `month != ${1 + (i % 12)}` },
    ];
    return { url: `https://example.com/hostile/${i}`, ...kinds[i % kinds.length]! };
  });
}
