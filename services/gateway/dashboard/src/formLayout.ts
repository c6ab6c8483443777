/**
 * The job form in an owner's words: each setting's label and the group it is shown in. A setting
 * this table does not know (added to Tock later) still appears, under "More settings", with its
 * API name. Pure data.
 */

export const FORM_GROUPS = ['What to call', 'When', 'Response checks', 'Failures and notifications'] as const;
export type FormGroup = (typeof FORM_GROUPS)[number];

export const FORM_LAYOUT: Record<string, { label: string; group: FormGroup }> = {
  name: { label: 'Name', group: 'What to call' },
  url: { label: 'URL to call', group: 'What to call' },
  httpMethod: { label: 'HTTP method', group: 'What to call' },
  postData: { label: 'Request body', group: 'What to call' },
  httpHeaders: { label: 'Request headers (one per line)', group: 'What to call' },
  username: { label: 'User name (Basic auth)', group: 'What to call' },
  password: { label: 'Password (Basic auth)', group: 'What to call' },
  userAgent: { label: 'User-Agent', group: 'What to call' },
  timeout: { label: 'Give up after (seconds)', group: 'What to call' },
  group: { label: 'Group', group: 'What to call' },
  expression: { label: 'Schedule', group: 'When' },
  timezone: { label: 'Time zone', group: 'When' },
  filter: { label: 'Only on (filter)', group: 'When' },
  delay: { label: 'Random delay up to (minutes)', group: 'When' },
  instances: { label: 'Runs at once at most (0: no limit)', group: 'When' },
  keyword: { label: 'Fail unless the answer contains', group: 'Response checks' },
  pattern: { label: 'Fail if the answer contains', group: 'Response checks' },
  retries: { label: 'Retries after a failure', group: 'Failures and notifications' },
  retryBackoff: { label: 'Wait between retries (seconds)', group: 'Failures and notifications' },
  failureThreshold: { label: 'Disable after this many failures in a row', group: 'Failures and notifications' },
  notify: { label: 'Notify on failure', group: 'Failures and notifications' },
  notifyEvery: { label: 'Notify on every n-th failure', group: 'Failures and notifications' },
  notifyMatch: { label: 'Notify when the answer contains', group: 'Failures and notifications' },
  notifyTime: { label: 'Notify when a run takes longer than (seconds)', group: 'Failures and notifications' },
  notifyFailureRate: { label: 'Notify when this % of recent runs failed', group: 'Failures and notifications' },
  notifyFailureWindow: { label: 'Recent runs: the last (minutes)', group: 'Failures and notifications' },
  notifyReminder: { label: 'While failing, remind every (hours)', group: 'Failures and notifications' },
  notifySkipped: { label: 'Notify of skipped and missed runs', group: 'Failures and notifications' },
  notifyChannels: { label: 'Notify these channels', group: 'Failures and notifications' },
};

export const labelOf = (name: string) => FORM_LAYOUT[name]?.label ?? name;
