import { expect } from 'chai';
import { ok, type ApiClient } from '../../support/api.ts';
import { inBothModes } from '../../support/targets.ts';
import { FULL, now, RECORD_KEYS, YEARLY } from '../../support/jobFixtures.ts';

inBothModes('cron job functions with valid input', (target) => {
  let api: ApiClient;
  before(() => {
    api = target().api;
  });

  describe('cron_add and cron_get', () => {
    it('creates a job with only a url: every default of docs/api.md (Cron jobs), scheme added, record shape exact', async () => {
      const before = now();
      const job = await ok(api.call('cron_add', { url: 'example.com/ping' }));
      expect(Object.keys(job).sort()).to.deep.equal([...RECORD_KEYS].sort());
      expect(job).to.include({
        url: 'http://example.com/ping',
        expression: '15 minutes',
        filter: '',
        delay: 0,
        timezone: 'UTC',
        timeout: 30,
        instances: 0,
        username: '',
        hasPassword: false,
        httpMethod: 'GET',
        postData: '',
        httpHeaders: '',
        userAgent: '',
        notify: true,
        notifyEvery: 1,
        notifyMatch: '',
        notifyTime: null,
        notifyFailureRate: null,
        notifyFailureWindow: 60,
        notifyReminder: null,
        notifySkipped: false,
        failureThreshold: 20,
        notifyChannels: '',
        keyword: '',
        pattern: '',
        retries: 0,
        retryBackoff: 10,
        group: null,
        name: '',
        status: 0,
        fail: 0,
        pausedUntil: null,
      });
      expect(job.id).to.be.a('number').and.greaterThan(0);
      expect(job.points).to.equal(96); // every 15 minutes: 96 runs a day
      expect(job.createdAt).to.be.within(before, now() + 1);
      expect(job.updatedAt).to.equal(job.createdAt);
      expect(await ok(api.call('cron_get', { id: job.id }))).to.deep.equal(job);
    });

    it('stores every cron_add parameter and returns it (password only as hasPassword, header values masked; method upper-cased)', async () => {
      const job = await ok(api.call('cron_add', FULL));
      const { password, ...shown } = FULL;
      expect(job).to.include({ ...shown, httpMethod: 'POST', hasPassword: true, httpHeaders: 'X-One: ***\r\nX-Two: ***' });
      expect(job).not.to.have.property('password');
      expect(job.points).to.equal(1);
      expect(await ok(api.call('cron_get', { id: job.id }, { method: 'GET' }))).to.deep.equal(job);
    });

    it('hands out increasing ids, never reused after a delete', async () => {
      const a = await ok(api.call('cron_add', { url: 'https://example.com/a', expression: YEARLY }));
      await ok(api.call('cron_delete', { id: a.id }));
      const b = await ok(api.call('cron_add', { url: 'https://example.com/b', expression: YEARLY }));
      expect(b.id).to.be.greaterThan(a.id);
    });

    it('sets points to the runs per day the schedule implies, rounded up, at least 1', async () => {
      const cases: [string, number][] = [['*/5 * * * *', 288], ['0 * * * *', 24], ['1 hour', 24], ['90 minutes', 16], ['@daily', 1], ['manual', 1], ['0 0 1 1 *', 1]];
      for (const [expression, points] of cases) {
        expect((await ok(api.call('cron_add', { url: 'https://example.com/points', expression }))).points, expression).to.equal(points);
      }
    });

    it("defaults the timezone to the account's", async () => {
      const berlin = await target().newAccount({ timezone: 'Europe/Berlin' });
      const job = await ok(berlin.call('cron_add', { url: 'https://example.com/tz' }));
      expect(job.timezone).to.equal('Europe/Berlin');
    });
  });

  describe('cron_list', () => {
    let own: ApiClient;
    let jobs: any[];
    before(async () => {
      own = await target().newAccount();
      jobs = await ok(
        own.call('cron_batch_add', {
          data: [
            { url: 'https://alpha.example.com/x', name: 'Nightly Backup', expression: YEARLY },
            { url: 'https://beta.example.com/report', name: 'report', expression: YEARLY },
            { url: 'https://gamma.example.com/BACKUP', name: 'third', expression: YEARLY },
          ],
        }),
      );
    });

    it('lists the account\'s jobs in id order', async () => {
      expect(await ok(own.call('cron_list'))).to.deep.equal(jobs);
      expect(await ok(own.call('cron_list', { page: 1 }, { method: 'GET' }))).to.deep.equal(jobs);
    });

    it('matches keyword against name and URL (case-insensitive) and the exact id', async () => {
      const names = async (keyword: string) => (await ok<any[]>(own.call('cron_list', { keyword }))).map((j) => j.name);
      expect(await names('backup')).to.deep.equal(['Nightly Backup', 'third']);
      expect(await names('REPORT')).to.deep.equal(['report']);
      expect(await names('gamma.example')).to.deep.equal(['third']);
      expect(await names(String(jobs[1].id))).to.include('report');
      expect(await names('no such thing')).to.deep.equal([]);
    });

    it('pages 1000 jobs at a time', async () => {
      const many = await target().newAccount();
      const data = Array.from({ length: 1000 }, (_, i) => ({ url: `https://example.com/${i}`, expression: 'manual' }));
      const first = await ok<any[]>(many.call('cron_batch_add', { data }));
      const extra = await ok(many.call('cron_add', { url: 'https://example.com/last', expression: 'manual' }));
      const page1 = await ok<any[]>(many.call('cron_list'));
      const page2 = await ok<any[]>(many.call('cron_list', { page: 2 }));
      const page3 = await ok<any[]>(many.call('cron_list', { page: 3 }));
      expect(page1.map((j) => j.id)).to.deep.equal(first.map((j) => j.id));
      expect(page2.map((j) => j.id)).to.deep.equal([extra.id]);
      expect(page3).to.deep.equal([]);
    });
  });

  describe('cron_edit', () => {
    it('changes only the supplied parameters', async () => {
      const job = await ok(api.call('cron_add', FULL));
      const edited = await ok(api.call('cron_edit', { id: job.id, name: 'renamed', timeout: 45 }));
      expect(edited).to.deep.equal({ ...job, name: 'renamed', timeout: 45, updatedAt: edited.updatedAt });
      expect(edited.updatedAt).to.be.at.least(job.updatedAt);
      expect(await ok(api.call('cron_get', { id: job.id }))).to.deep.equal(edited);
    });

    it('changes every settable parameter at once', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/e', expression: YEARLY }));
      const edited = await ok(api.call('cron_edit', { id: job.id, ...FULL }));
      const { password, ...shown } = FULL;
      expect(edited).to.include({ ...shown, httpMethod: 'POST', hasPassword: true, httpHeaders: 'X-One: ***\r\nX-Two: ***', id: job.id });
    });

    it('clears optional strings with JSON null or "", notifyTime with null, group with 0', async () => {
      const group = await ok(api.call('group_add', { name: 'to clear' }));
      const job = await ok(api.call('cron_add', { ...FULL, group: group.id }));
      const edited = await ok(api.call('cron_edit', { id: job.id, name: null, filter: '', password: '', notifyTime: null, group: 0, httpHeaders: null }));
      expect(edited).to.include({ name: '', filter: '', hasPassword: false, notifyTime: null, group: null, httpHeaders: '' });
      expect(edited).to.include({ keyword: 'OK', timeout: 120 });
    });

    it('moves a job into a group and out again', async () => {
      const group = await ok(api.call('group_add', { name: 'edit target' }));
      const job = await ok(api.call('cron_add', { url: 'https://example.com/g', expression: YEARLY }));
      expect((await ok(api.call('cron_edit', { id: job.id, group: group.id }))).group).to.equal(group.id);
      expect((await ok(api.call('cron_edit', { id: job.id, group: null }))).group).to.equal(null);
    });

    it('keeps the record unchanged when nothing is supplied', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/n', expression: YEARLY }));
      expect(await ok(api.call('cron_edit', { id: job.id }))).to.deep.equal(job);
      expect(await ok(api.call('cron_edit', { id: job.id, url: job.url, name: '' }))).to.deep.equal(job);
    });
  });

  describe('cron_enable, cron_disable, cron_pause', () => {
    it('disables (status 1) and enables (status 0), idempotently', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/s', expression: YEARLY }));
      const disabled = await ok(api.call('cron_disable', { id: job.id }));
      expect(disabled).to.include({ id: job.id, status: 1 });
      expect((await ok(api.call('cron_disable', { id: job.id }))).status).to.equal(1);
      expect((await ok(api.call('cron_get', { id: job.id }))).status).to.equal(1);
      const enabled = await ok(api.call('cron_enable', { id: job.id }));
      expect(enabled).to.include({ id: job.id, status: 0, fail: 0 });
      expect((await ok(api.call('cron_enable', { id: job.id }))).status).to.equal(0);
    });

    it('pauses for a duration: status 5 with pausedUntil', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/p', expression: YEARLY }));
      const before = now();
      const paused = await ok(api.call('cron_pause', { id: job.id, for: '2 hours' }));
      expect(paused).to.include({ id: job.id, status: 5 });
      expect(paused.pausedUntil).to.be.within(before + 7200, now() + 7200);
      const longer = await ok(api.call('cron_pause', { id: job.id, for: '3 days' }));
      expect(longer.pausedUntil).to.be.within(before + 3 * 86400, now() + 3 * 86400);
      expect(await ok(api.call('cron_enable', { id: job.id }))).to.include({ status: 0, pausedUntil: null });
    });

    it('pauses without `for` until cron_enable', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/p2', expression: YEARLY }));
      expect(await ok(api.call('cron_pause', { id: job.id }))).to.include({ status: 5, pausedUntil: null });
      expect(await ok(api.call('cron_pause', { id: job.id, for: '' }))).to.include({ status: 5, pausedUntil: null });
      expect(await ok(api.call('cron_get', { id: job.id }))).to.include({ status: 5, pausedUntil: null });
      expect(await ok(api.call('cron_enable', { id: job.id }))).to.include({ status: 0 });
    });
  });

});
