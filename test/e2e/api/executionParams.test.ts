import { expect } from 'chai';
import { fails, ok, type ApiClient, type Envelope } from '../../support/api.ts';
import { embeddedTarget, OUTCOME_TYPES, storeMark, streamEvents, type ApiTarget } from '../../support/targets.ts';

const now = () => Math.floor(Date.now() / 1000);
/** The events a request writes; execution outcomes (counted as the executor reports them) are left out. */
const requested = (dataDir: string, id: number) => streamEvents(dataDir, `cronjob-${id}`).filter((e) => !OUTCOME_TYPES.includes(e.type));

/**
 * The execution functions' parameters and error answers (this issue's part of them). Valid calls
 * to cron_logs / cron_next may answer code 1 while the planner or logs service is not wired into
 * the embedded mode: those are accepted here, as long as they say nothing internal.
 */
describe('execution functions: parameters and error answers (embedded mode)', function () {
  this.timeout(60_000);
  let target: ApiTarget;
  let api: ApiClient;
  let getJob: any;
  let postJob: any;
  let disabled: any;

  before(async () => {
    target = await embeddedTarget();
    api = target.api;
    // `manual` never fires by itself; the targets refuse connections, so a real run changes nothing we assert on.
    getJob = await ok(api.call('cron_add', { url: 'http://127.0.0.1:9/get', expression: 'manual' }));
    postJob = await ok(api.call('cron_add', { url: 'http://127.0.0.1:9/post', expression: 'manual', httpMethod: 'POST' }));
    disabled = await ok(api.call('cron_add', { url: 'http://127.0.0.1:9/off', expression: 'manual' }));
    await ok(api.call('cron_disable', { id: disabled.id }));
  });
  after(() => target.stop());

  const unchanged = async (call: () => Promise<string>, check?: (message: string) => void) => {
    const before = storeMark(target.dataDir);
    const message = await call();
    check?.(message);
    expect(storeMark(target.dataDir), 'nothing stored').to.deep.equal(before);
  };

  const successOrNotConfigured = (result: Envelope & { http: number }) => {
    if (result.status === 'success') return result.data;
    expect(result).to.include({ code: 1, http: 500 });
    expect(result.message).to.match(/^internal error \(request id [0-9a-f-]{36}\)$/);
    return undefined;
  };

  describe('cron_run', () => {
    it('runs now (absent, 0 or past time) or at a future time, answering the Unix time; the schedule is untouched', async () => {
      const t0 = now();
      expect(await ok(api.call('cron_run', { id: getJob.id }))).to.be.within(t0, now() + 1);
      expect(await ok(api.call('cron_run', { id: getJob.id, time: 0 }))).to.be.within(t0, now() + 1);
      expect(await ok(api.call('cron_run', { id: getJob.id, time: t0 - 3600 }))).to.be.within(t0, now() + 1);
      const later = t0 + 7 * 86400;
      expect(await ok(api.call('cron_run', { id: getJob.id, time: later, payload: 'a=1&ts=__timestamp__' }))).to.equal(later);
      expect(await ok(api.call('cron_run', { id: postJob.id, payload: '{"a":[1,2]}' }))).to.be.within(t0, now() + 1);
      const after = await ok(api.call('cron_get', { id: getJob.id }));
      expect(after).to.include({ expression: 'manual', status: 0 });
      const runs = streamEvents(target.dataDir, `cronjob-${getJob.id}`).filter((e) => e.type === 'RunRequested');
      expect(runs.map((e) => e.data.payload)).to.deep.equal([null, null, null, 'a=1&ts=__timestamp__']);
      expect(runs[3]!.data.runAt).to.equal(later * 1000);
    });

    it('time must be a Unix timestamp (3)', async () => {
      for (const time of ['soon', -1, 1e13, '2030-01-01', 1.5]) {
        await unchanged(() => fails(api.call('cron_run', { id: getJob.id, time }), 3), (m) => expect(m).to.match(/^time: /));
      }
    });

    it('a payload must follow the payload rules for the job\'s method (3)', async () => {
      const cases: [any, unknown][] = [
        [getJob, '{"json":"on a GET job"}'],
        [getJob, 'a=1\nb=2'],
        [getJob, 'a=1#x'],
        [postJob, '{"broken": '],
        [postJob, '[1, 2'],
        [postJob, { not: 'a string' }],
      ];
      for (const [job, payload] of cases) {
        await unchanged(() => fails(api.call('cron_run', { id: job.id, payload }), 3), (m) => expect(m, JSON.stringify(payload)).to.match(/^payload: /));
      }
    });

    it('a disabled job refuses to run: error 6 (HTTP 409), nothing stored', async () => {
      await unchanged(() => fails(api.call('cron_run', { id: disabled.id }), 6, 409), (m) => expect(m).to.contain(String(disabled.id)));
    });

    it('a paused job may still be run by hand', async () => {
      const paused = await ok(api.call('cron_add', { url: 'http://127.0.0.1:9/p', expression: 'manual' }));
      await ok(api.call('cron_pause', { id: paused.id }));
      expect(await ok(api.call('cron_run', { id: paused.id }))).to.be.a('number');
    });
  });

  describe('run and payload on cron_add and cron_edit', () => {
    it('cron_add with run queues one extra run (now, or at the timestamp), with its payload', async () => {
      const t = now() + 86400;
      const job = await ok(api.call('cron_add', { url: 'http://127.0.0.1:9/r', expression: 'manual', httpMethod: 'PUT', run: t, payload: '{"x":1}' }));
      const events = requested(target.dataDir, job.id);
      expect(events.map((e) => e.type)).to.deep.equal(['JobCreated', 'RunRequested']);
      expect(events[1]!.data).to.include({ runAt: t * 1000, payload: '{"x":1}' });
      const none = await ok(api.call('cron_add', { url: 'http://127.0.0.1:9/r0', expression: 'manual', run: 0 }));
      expect(requested(target.dataDir, none.id).map((e) => e.type)).to.deep.equal(['JobCreated']);
    });

    it('cron_edit with run edits and queues the run; on a disabled job it is 6 and stores nothing', async () => {
      const job = await ok(api.call('cron_add', { url: 'http://127.0.0.1:9/e', expression: 'manual' }));
      await ok(api.call('cron_edit', { id: job.id, name: 'ran', run: 1 }));
      expect(requested(target.dataDir, job.id).map((e) => e.type)).to.deep.equal(['JobCreated', 'JobEdited', 'RunRequested']);
      await unchanged(() => fails(api.call('cron_edit', { id: disabled.id, name: 'changed', run: 1 }), 6, 409));
      expect((await ok(api.call('cron_get', { id: disabled.id }))).name).to.equal('');
    });

    it('cron_edit checks the payload against the method the edit sets', async () => {
      const job = await ok(api.call('cron_add', { url: 'http://127.0.0.1:9/m', expression: 'manual', httpMethod: 'POST' }));
      await unchanged(() => fails(api.call('cron_edit', { id: job.id, httpMethod: 'GET', run: 1, payload: '{"a":1}' }), 3), (m) => expect(m).to.match(/^payload: .*GET/));
      await ok(api.call('cron_edit', { id: job.id, run: 1, payload: '{"a":1}' }));
    });
  });

  describe('cron_logs, cron_show, cron_failures', () => {
    for (const fn of ['cron_logs', 'cron_show', 'cron_failures']) {
      it(`${fn}: checks id, page, limit and keyword before asking the logs service`, async () => {
        if (fn !== 'cron_failures') await fails(api.call(fn, {}), 4);
        await fails(api.call(fn, { id: 'x' }), 3);
        await fails(api.call(fn, { id: 123456 }), 5);
        await fails(api.call(fn, { id: getJob.id, page: 0 }), 3);
        await fails(api.call(fn, { id: getJob.id, limit: 1001 }), 3);
        await fails(api.call(fn, { id: getJob.id, keyword: ['a', { b: 1 }] }), 3);
        const list = successOrNotConfigured(await api.call(fn, { id: getJob.id, keyword: 'error', page: 1, limit: 10 }));
        if (list !== undefined) expect(list).to.be.an('array');
      });
    }

    it('cron_failures without id covers the whole account', async () => {
      const list = successOrNotConfigured(await api.call('cron_failures', { limit: 5 }));
      if (list !== undefined) expect(list).to.be.an('array');
    });
  });

  describe('cron_next', () => {
    it('checks id and limit (1..100) before asking the planner', async () => {
      await fails(api.call('cron_next', {}), 4);
      await fails(api.call('cron_next', { id: -1 }), 3);
      await fails(api.call('cron_next', { id: 777777 }), 5);
      for (const limit of [0, 101, 'ten', 2 ** 40]) expect(await fails(api.call('cron_next', { id: getJob.id, limit }), 3)).to.match(/^limit: /);
    });

    it('answers at most `limit` ascending timestamps (or code 1 without a planner)', async () => {
      const job = await ok(api.call('cron_add', { url: 'http://127.0.0.1:9/n', expression: '0 * * * *' }));
      const times = successOrNotConfigured(await api.call('cron_next', { id: job.id, limit: 5 }));
      if (times === undefined) return;
      expect(times).to.have.length(5);
      expect([...times].sort((a: number, b: number) => a - b)).to.deep.equal(times);
      for (const t of times) expect(t % 3600).to.equal(0);
    });
  });
});
