import { defaultSettings, jobDecider, type JobCommand, type JobEvent, type JobSettings } from '../../../shared/job/index.ts';
import { deciderSpec, NOW } from '../support/given.ts';

const given = deciderSpec(jobDecider);
const HOUR = 3_600_000;
const settings = (over: Partial<JobSettings> = {}): JobSettings => ({ ...defaultSettings('Europe/Paris'), url: 'http://example.com/hook', ...over });

const created = (over: Partial<JobSettings> = {}): JobEvent => ({ type: 'JobCreated', data: { id: 7, accountId: 1, settings: settings(over), at: 1 } });
const disabled: JobEvent = { type: 'JobDisabled', data: { at: 2 } };
const autoDisabled: JobEvent = { type: 'JobAutoDisabled', data: { fail: 20, reason: 'threshold', runId: 'r0', at: 2 } };
const deleted: JobEvent = { type: 'JobDeleted', data: { at: 2 } };
const failed = (fail: number, runId = `r${fail}`): JobEvent => ({ type: 'FailureCounted', data: { fail, runId, at: 2 } });

const create = (input: Extract<JobCommand, { type: 'CreateJob' }>['input']): JobCommand => ({ type: 'CreateJob', id: 7, accountId: 1, input, defaultTimezone: 'Europe/Paris' });
const edit = (input: Extract<JobCommand, { type: 'EditJob' }>['input'], accountId = 1): JobCommand => ({ type: 'EditJob', id: 7, accountId, input });
const execution = (runId: string, succeeded: boolean, oneTimeDone = false): JobCommand => ({ type: 'RecordExecution', id: 7, runId, succeeded, oneTimeDone });

describe('job decider (given/when/then)', () => {
  describe('CreateJob', () => {
    it('records the job with every setting resolved: defaults, the account zone, the url normalized', () =>
      given()
        .when(create({ url: 'example.com/hook', httpMethod: 'post' as never }))
        .then([{ type: 'JobCreated', data: { id: 7, accountId: 1, settings: settings({ httpMethod: 'POST' }), at: NOW } }]));

    it('the url is required', () => given().when(create({ expression: '5 minutes' })).then({ error: 'MISSING_PARAMETER', message: 'url: is required' }));
    it('a setting out of its range is refused, naming it', () =>
      given().when(create({ url: 'http://x.test', timeout: 1 })).then({ error: 'INVALID_PARAMETER', message: 'timeout: must be a whole number from 5 to 7200 seconds, got 1' }));
    it('a schedule the parser refuses is refused, naming the field it blames', () =>
      given().when(create({ url: 'http://x.test', timezone: 'Moon/Base' })).then({ error: 'INVALID_PARAMETER', message: /^timezone: unknown time zone 'Moon\/Base'/ }));
    it('a url that is not http(s) is refused', () =>
      given().when(create({ url: 'ftp://x.test' })).then({ error: 'INVALID_PARAMETER', message: 'url: scheme must be http or https, got ftp' }));
    it('an id that is taken is never reused', () => given(created()).when(create({ url: 'http://x.test' })).then({ error: 'INTERNAL' }));
  });

  describe('EditJob', () => {
    it('records only the settings that really change', () =>
      given(created()).when(edit({ name: 'nightly', timeout: 30, expression: ' 15 minutes ' })).then([{ type: 'JobEdited', data: { changes: { name: 'nightly' }, at: NOW } }]));
    it('records nothing when nothing changes', () => given(created()).when(edit({ timeout: 30 })).then([]));
    it('0 clears notifyTime and group', () =>
      given(created({ notifyTime: 60, group: 3 })).when(edit({ notifyTime: 0, group: 0 })).then([{ type: 'JobEdited', data: { changes: { notifyTime: null, group: null }, at: NOW } }]));
    it('checks the result as a whole (a filter on the new schedule)', () =>
      given(created()).when(edit({ filter: 'nonsense +' })).then({ error: 'INVALID_PARAMETER', message: /^filter:/ }));
    it("another account's job is not found", () => given(created()).when(edit({ name: 'x' }, 2)).then({ error: 'NOT_FOUND', message: 'cron job 7 not found' }));
    it('a deleted job is not found', () => given(created(), deleted).when(edit({ name: 'x' })).then({ error: 'NOT_FOUND' }));
    it('an unknown job is not found', () => given().when(edit({ name: 'x' })).then({ error: 'NOT_FOUND' }));
  });

  describe('RollbackJob', () => {
    const rollback = (over: Partial<JobSettings>, version = 1, accountId = 1): JobCommand => ({ type: 'RollbackJob', id: 7, accountId, version, settings: settings(over) });
    const renamed: JobEvent = { type: 'JobEdited', data: { changes: { name: 'later', timeout: 60, password: 'new' }, at: 2 } };

    it('records the settings that differ from the version as one change that names the version', () =>
      given(created({ password: 'old' }), renamed)
        .when(rollback({ password: 'old' }))
        .then([{ type: 'JobEdited', data: { changes: { name: '', timeout: 30, password: 'old' }, at: NOW, rollbackTo: 1 } }]));
    it('records nothing when the job has those settings already', () => given(created(), renamed).when(rollback({ name: 'later', timeout: 60, password: 'new' }, 2)).then([]));
    it("checks the version's settings by today's rules, naming the setting (a value stored under a higher limit)", () =>
      given(created()).when(rollback({ timeout: 9000 })).then({ error: 'INVALID_PARAMETER', message: 'timeout: must be a whole number from 5 to 7200 seconds, got 9000' }));
    it('checks a schedule it restores as an edit does: one that would never run is refused', () =>
      given(created()).when(rollback({ expression: '0 0 * * *', filter: 'month == 13' })).then({ error: 'INVALID_PARAMETER', message: /^filter:/ }));
    it("another account's job is not found", () => given(created(), renamed).when(rollback({}, 1, 2)).then({ error: 'NOT_FOUND', message: 'cron job 7 not found' }));
    it('a deleted job is not found', () => given(created(), renamed, deleted).when(rollback({})).then({ error: 'NOT_FOUND' }));
  });

  describe('EnableJob', () => {
    it('an active job with no failures: nothing to record', () => given(created()).when({ type: 'EnableJob', id: 7, accountId: 1 }).then([]));
    it('an active job with failures counted: enabling resets them', () =>
      given(created(), failed(3)).when({ type: 'EnableJob', id: 7, accountId: 1 }).then([{ type: 'JobEnabled', data: { at: NOW } }]));
    it('a job disabled after failures comes back', () => given(created(), autoDisabled).when({ type: 'EnableJob', id: 7, accountId: 1 }).then([{ type: 'JobEnabled', data: { at: NOW } }]));
    it('a paused job comes back', () =>
      given(created(), { type: 'JobPaused', data: { until: null, at: 2 } }).when({ type: 'EnableJob', id: 7, accountId: 1 }).then([{ type: 'JobEnabled', data: { at: NOW } }]));
  });

  describe('DisableJob', () => {
    it('records the job disabled', () => given(created()).when({ type: 'DisableJob', id: 7, accountId: 1 }).then([{ type: 'JobDisabled', data: { at: NOW } }]));
    it('records nothing when it already is', () => given(created(), disabled).when({ type: 'DisableJob', id: 7, accountId: 1 }).then([]));
    it('a job disabled after failures is disabled by the user too (status 4 becomes 1)', () =>
      given(created(), autoDisabled).when({ type: 'DisableJob', id: 7, accountId: 1 }).then([{ type: 'JobDisabled', data: { at: NOW } }]));
  });

  describe('PauseJob', () => {
    it('until a future instant', () =>
      given(created()).when({ type: 'PauseJob', id: 7, accountId: 1, until: NOW + HOUR }).then([{ type: 'JobPaused', data: { until: NOW + HOUR, at: NOW } }]));
    it('indefinitely', () => given(created()).when({ type: 'PauseJob', id: 7, accountId: 1, until: null }).then([{ type: 'JobPaused', data: { until: null, at: NOW } }]));
    it('a pause that would already be over is refused', () =>
      given(created()).when({ type: 'PauseJob', id: 7, accountId: 1, until: NOW }).then({ error: 'INVALID_PARAMETER', message: 'for: the pause must end in the future' }));
  });

  describe('DeleteJob', () => {
    it('records the job deleted', () => given(created()).when({ type: 'DeleteJob', id: 7, accountId: 1 }).then([{ type: 'JobDeleted', data: { at: NOW } }]));
    it('a second delete finds nothing', () => given(created(), deleted).when({ type: 'DeleteJob', id: 7, accountId: 1 }).then({ error: 'NOT_FOUND' }));
  });

  describe('RequestRun (cron_run)', () => {
    const run: JobCommand = { type: 'RequestRun', id: 7, accountId: 1, runId: '7:1:abc', runAt: NOW + HOUR, payload: 'a=1' };
    it('records the run asked for', () => given(created()).when(run).then([{ type: 'RunRequested', data: { runId: '7:1:abc', runAt: NOW + HOUR, payload: 'a=1', at: NOW } }]));
    it('a paused job may still be run by hand', () =>
      given(created(), { type: 'JobPaused', data: { until: null, at: 2 } }).when(run).then([{ type: 'RunRequested', data: { runId: '7:1:abc', runAt: NOW + HOUR, payload: 'a=1', at: NOW } }]));
    it('a disabled job is refused (code 6)', () => given(created(), disabled).when(run).then({ error: 'INVALID_STATE', message: 'cron job 7 is disabled; enable it before running it' }));
    it('a job disabled after failures is refused too', () => given(created(), autoDisabled).when(run).then({ error: 'INVALID_STATE' }));
  });

  describe('RecordExecution (failure counting)', () => {
    it('a failure is counted', () => given(created()).when(execution('r1', false)).then([{ type: 'FailureCounted', data: { fail: 1, runId: 'r1', at: NOW } }]));
    it('the failure that reaches the threshold disables the job (status 4)', () =>
      given(created({ failureThreshold: 2 }), failed(1))
        .when(execution('r2', false))
        .then([{ type: 'JobAutoDisabled', data: { fail: 2, reason: '2 consecutive failures reached the failure threshold of 2', runId: 'r2', at: NOW } }]));
    it('a success after failures resets the count', () => given(created(), failed(1)).when(execution('r2', true)).then([{ type: 'FailuresReset', data: { runId: 'r2', at: NOW } }]));
    it('a success with nothing to reset records nothing', () => given(created()).when(execution('r1', true)).then([]));
    it('an execution already counted (a redelivery) records nothing', () => given(created(), failed(1, 'r1')).when(execution('r1', false)).then([]));
    it('failures of a disabled job are not counted', () => given(created(), disabled).when(execution('r1', false)).then([]));
    it('a deleted or unknown job records nothing', () => {
      given(created(), deleted).when(execution('r1', false)).then([]);
      given().when(execution('r1', false)).then([]);
    });
    it('a one-time job is done after its run, whatever the outcome (status 6)', () => {
      given(created()).when(execution('r1', true, true)).then([{ type: 'JobStopped', data: { runId: 'r1', at: NOW } }]);
      given(created())
        .when(execution('r1', false, true))
        .then([
          { type: 'FailureCounted', data: { fail: 1, runId: 'r1', at: NOW } },
          { type: 'JobStopped', data: { runId: 'r1', at: NOW } },
        ]);
    });
    it('a one-time job disabled by its failing run stays disabled (status 4, not 6)', () =>
      given(created({ failureThreshold: 1 }))
        .when(execution('r1', false, true))
        .then([{ type: 'JobAutoDisabled', data: { fail: 1, reason: '1 consecutive failures reached the failure threshold of 1', runId: 'r1', at: NOW } }]));
  });
});
