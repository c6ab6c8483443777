import { expect } from 'chai';
import { fails, ok, type ApiClient } from '../../support/api.ts';
import { inBothModes, streamEvents } from '../../support/targets.ts';
import { now, RECORD_KEYS, YEARLY } from '../../support/jobFixtures.ts';

inBothModes('cron_delete, the batch functions and the audit history with valid input', (target) => {
  let api: ApiClient;
  before(() => {
    api = target().api;
  });

  describe('cron_delete and cron_batch_delete', () => {
    it('returns the deleted record with id null; the job is gone afterwards', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/d', name: 'doomed', expression: YEARLY }));
      const deleted = await ok(api.call('cron_delete', { id: job.id }));
      expect(deleted).to.include({ id: null, name: 'doomed', url: 'https://example.com/d', nextRun: null });
      expect(Object.keys(deleted).sort()).to.deep.equal([...RECORD_KEYS].sort());
      await fails(api.call('cron_get', { id: job.id }), 5);
      await fails(api.call('cron_delete', { id: job.id }), 5);
      expect((await ok<any[]>(api.call('cron_list'))).map((j) => j.id)).not.to.include(job.id);
    });

    it('deletes a list of ids, answering in request order (a repeated id counts once)', async () => {
      const jobs = await ok<any[]>(api.call('cron_batch_add', { data: [1, 2, 3].map((n) => ({ url: `https://example.com/bd${n}`, name: `bd${n}`, expression: YEARLY })) }));
      const ids = [jobs[2].id, jobs[0].id, jobs[2].id];
      const deleted = await ok<any[]>(api.call('cron_batch_delete', { id: ids }));
      expect(deleted.map((j) => [j.id, j.name])).to.deep.equal([[null, 'bd3'], [null, 'bd1'], [null, 'bd3']]);
      await fails(api.call('cron_get', { id: jobs[0].id }), 5);
      expect((await ok(api.call('cron_get', { id: jobs[1].id }))).name).to.equal('bd2');
    });
  });

  describe('cron_batch_enable, cron_batch_disable and cron_batch_pause (Tock\'s)', () => {
    it('acts on a list of ids in one call, answering in request order', async () => {
      const jobs = await ok<any[]>(api.call('cron_batch_add', { data: [1, 2, 3].map((n) => ({ url: `https://example.com/ba${n}`, name: `ba${n}`, expression: YEARLY })) }));
      const ids = [jobs[2].id, jobs[0].id];
      expect((await ok<any[]>(api.call('cron_batch_disable', { id: ids }))).map((j) => [j.name, j.status])).to.deep.equal([['ba3', 1], ['ba1', 1]]);
      expect((await ok(api.call('cron_get', { id: jobs[1].id }))).status).to.equal(0);
      expect((await ok<any[]>(api.call('cron_batch_enable', { id: ids }))).map((j) => j.status)).to.deep.equal([0, 0]);
      const paused = await ok<any[]>(api.call('cron_batch_pause', { id: ids, for: '2 hours' }));
      expect(paused.map((j) => j.status)).to.deep.equal([5, 5]);
      for (const j of paused) expect(j.pausedUntil - now()).to.be.within(7100, 7201);
      expect((await ok<any[]>(api.call('cron_batch_pause', { id: [jobs[1].id] }))).map((j) => [j.status, j.pausedUntil])).to.deep.equal([[5, null]]);
    });

    it('changes none when one id is refused, naming it', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/bx', expression: YEARLY }));
      expect(await fails(api.call('cron_batch_disable', { id: [job.id, 987654] }), 5)).to.contain('987654');
      expect(await fails(api.call('cron_batch_pause', { id: [job.id], for: 'banana' }), 3)).to.match(/^for: /);
      expect((await ok(api.call('cron_get', { id: job.id }))).status).to.equal(0);
      await fails(api.call('cron_batch_enable', {}), 4);
    });
  });

  describe('cron_batch_add', () => {
    it('adds every element, answering in request order', async () => {
      const data = ['c', 'a', 'b'].map((name) => ({ url: `https://example.com/${name}`, name, expression: YEARLY }));
      const jobs = await ok<any[]>(api.call('cron_batch_add', { data }));
      expect(jobs.map((j) => j.name)).to.deep.equal(['c', 'a', 'b']);
      expect(jobs[1].id).to.equal(jobs[0].id + 1);
      for (const job of jobs) expect(await ok(api.call('cron_get', { id: job.id }))).to.deep.equal(job);
    });

    it('replayed with its idempotency key, answers the records the first call answered, though a job was since deleted and another edited', async () => {
      const data = ['r1', 'r2', 'r3'].map((name) => ({ url: `https://example.com/${name}`, name, expression: YEARLY }));
      const headers = { 'x-idempotency-key': `replay-${Date.now()}` };
      const first = await ok<any[]>(api.call('cron_batch_add', { data }, { headers }));
      await ok(api.call('cron_delete', { id: first[1].id }));
      await ok(api.call('cron_edit', { id: first[2].id, name: 'renamed' }));
      const replay = await ok<any[]>(api.call('cron_batch_add', { data }, { headers }));
      // The first answer as it was, nextRun included (the deleted job keeps its id and next run).
      expect(replay).to.deep.equal(first);
      expect(replay[1].id).to.be.a('number');
      // Nothing was written again: the deleted job stays deleted, the edit stays.
      await fails(api.call('cron_get', { id: first[1].id }), 5);
      expect((await ok(api.call('cron_get', { id: first[2].id }))).name).to.equal('renamed');
    });

    it('is atomic: one bad element fails the batch, names it, and adds nothing', async () => {
      const own = await target().newAccount();
      const data = [{ url: 'https://example.com/1' }, { url: 'https://example.com/2' }, { url: 'https://example.com/3', timeout: 1 }];
      const message = await fails(own.call('cron_batch_add', { data }), 3);
      expect(message).to.match(/^data\[2\]\.timeout: /);
      expect(await fails(own.call('cron_batch_add', { data: [{ url: 'ftp://example.com' }] }), 3)).to.match(/^data\[0\]\.url: /);
      expect(await fails(own.call('cron_batch_add', { data: [{ name: 'no url' }, { url: 'x.example.com' }] }), 4)).to.match(/^data\[0\]\.url: /);
      expect(await ok(own.call('cron_list'))).to.deep.equal([]);
    });
  });

  describe('cron_batch_edit and cron_group_edit', () => {
    it('edits the listed jobs, only the supplied parameters, answering in request order', async () => {
      const jobs = await ok<any[]>(api.call('cron_batch_add', { data: [1, 2, 3].map((n) => ({ url: `https://example.com/be${n}`, name: `be${n}`, expression: YEARLY })) }));
      const edited = await ok<any[]>(api.call('cron_batch_edit', { id: [jobs[2].id, jobs[0].id], timeout: 99 }));
      expect(edited.map((j) => [j.name, j.timeout])).to.deep.equal([['be3', 99], ['be1', 99]]);
      expect((await ok(api.call('cron_get', { id: jobs[1].id }))).timeout).to.equal(30);
      expect(await ok(api.call('cron_get', { id: jobs[0].id }))).to.deep.equal({ ...jobs[0], timeout: 99, updatedAt: edited[1].updatedAt });
    });

    it('fails as a whole when one id is unknown', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/bx', expression: YEARLY }));
      expect(await fails(api.call('cron_batch_edit', { id: [job.id, 987654], name: 'nope' }), 5)).to.contain('987654');
      expect((await ok(api.call('cron_get', { id: job.id }))).name).to.equal('');
    });

    it('edits every job of a group and nothing else', async () => {
      const group = await ok(api.call('group_add', { name: 'batch target' }));
      const inGroup = await ok<any[]>(api.call('cron_batch_add', { data: [1, 2].map((n) => ({ url: `https://example.com/ge${n}`, group: group.id, expression: YEARLY })) }));
      const outside = await ok(api.call('cron_add', { url: 'https://example.com/ge3', expression: YEARLY }));
      const edited = await ok<any[]>(api.call('cron_group_edit', { id: group.id, notify: false, expression: '0 5 * * *' }));
      expect(edited.map((j) => j.id)).to.deep.equal(inGroup.map((j) => j.id));
      for (const job of edited) expect(job).to.include({ notify: false, expression: '0 5 * * *', group: group.id });
      expect(await ok(api.call('cron_get', { id: outside.id }))).to.include({ notify: true, expression: YEARLY });
      const empty = await ok(api.call('group_add', { name: 'empty one' }));
      expect(await ok(api.call('cron_group_edit', { id: empty.id, notify: false }))).to.deep.equal([]);
    });
  });

  describe('cron_history (the audit trail)', () => {
    it('lists every change newest first, with time and what changed, paged like logs; the password masked', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/h', expression: YEARLY, password: 'pw' }));
      await ok(api.call('cron_edit', { id: job.id, name: 'first', password: 'other' }));
      await ok(api.call('cron_disable', { id: job.id }));
      await ok(api.call('cron_pause', { id: job.id, for: '1 hour' }));
      await ok(api.call('cron_enable', { id: job.id }));
      await ok(api.call('cron_delete', { id: job.id }));
      const history = await ok<any[]>(api.call('cron_history', { id: job.id }));
      expect(history.map((h) => h.type)).to.deep.equal(['JobDeleted', 'JobEnabled', 'JobPaused', 'JobDisabled', 'JobEdited', 'JobCreated']);
      expect(history.map((h) => h.revision)).to.deep.equal([5, 4, 3, 2, 1, 0]);
      for (const h of history) expect(h.time).to.be.within(job.createdAt, now() + 1);
      const me = (await ok(api.call('account_get'))).id;
      for (const h of history) expect(h.by, h.type).to.equal(me);
      expect(history[4].data.changes).to.deep.equal({ name: 'first', password: '********' });
      expect(history[5].data.settings).to.include({ url: 'https://example.com/h', password: '********' });
      expect(JSON.stringify(history)).not.to.contain('"pw"');
      // The stream itself: every change carries who asked (the account), when, and what changed.
      const accountId = (await ok(api.call('account_get'))).id;
      const stored = streamEvents(target().dataDir, `cronjob-${job.id}`);
      expect(stored.map((e) => e.type)).to.deep.equal([...history.map((h) => h.type)].reverse());
      for (const e of stored) {
        expect(e.metadata, e.type).to.deep.equal({ accountId });
        expect(e.data.at, e.type).to.be.within(job.createdAt * 1000, Date.now());
      }
      // What changed, with the password sealed at rest (never the clear text).
      expect(stored[1]!.data.changes.name).to.equal('first');
      expect(stored[1]!.data.changes.password).to.match(/^enc:v1:/);
      expect(JSON.stringify(stored)).not.to.contain('other');
      const page2 = await ok<any[]>(api.call('cron_history', { id: job.id, page: 2, limit: 4 }));
      expect(page2.map((h) => h.revision)).to.deep.equal([1, 0]);
      expect(await ok(api.call('cron_history', { id: job.id, page: 3, limit: 4 }))).to.deep.equal([]);
    });

    it('numbers the versions and restores one as a new version (cron_rollback)', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/v', expression: YEARLY, name: 'one', password: 'pw-one' }));
      await ok(api.call('cron_edit', { id: job.id, name: 'two', password: 'pw-two' }));
      const restored = await ok(api.call('cron_rollback', { id: job.id, version: 1 }));
      expect(restored).to.deep.equal(await ok(api.call('cron_get', { id: job.id })));
      expect(restored.name).to.equal('one');
      const history = await ok<any[]>(api.call('cron_history', { id: job.id }));
      expect(history.map((h) => [h.version, h.rollbackTo])).to.deep.equal([[3, 1], [2, null], [1, null]]);
      expect(history[0].changes).to.deep.equal([{ field: 'name', before: 'two', after: 'one' }, { field: 'password', secret: true }]);
      expect(JSON.stringify(history)).not.to.contain('pw-');
      expect(await fails(api.call('cron_rollback', { id: job.id, version: 4 }), 3)).to.match(/^version: /);
    });
  });
});
