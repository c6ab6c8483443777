import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock } from '../../../shared/clock.ts';
import { openSqliteEventStore } from '../../../shared/eventStore/sqliteEventStore.ts';
import { apiClient, fails, ok } from '../../support/api.ts';
import { startTestSystem } from '../../support/embedded.ts';
import { startTarget } from '../../support/target.ts';
import { storeMark, streamEvents } from '../../support/targets.ts';
import { waitFor } from '../../support/waitFor.ts';

const START = Date.UTC(2030, 0, 1, 0, 0, 0);
const MINUTE = 60_000;
const at = (iso: string) => Date.parse(iso) / 1000;
/** The settings as cron_get shows them, without the job's state. */
const STATE = ['id', 'fail', 'status', 'points', 'pausedUntil', 'nextRun', 'createdAt', 'updatedAt', 'lastResult', 'recentOutcomes', 'runs24h', 'failures24h', 'groupName'];
const settingsOf = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).filter(([k]) => !STATE.includes(k)));
const SECRETS = ['url-pw-1', 'url-pw-2', 'field-pw-1', 'field-pw-2', 'hdr-val-1', 'hdr-val-2'];

/**
 * Versions and rollback through the public API of an embedded Tock on a fake clock (the subject is
 * the history's logic): what each version changed, secrets never shown, a rollback restoring a
 * version as a new one that the planner follows, refusals that change nothing, and numbers that
 * stay the same across a restart.
 */
describe('job versions and cron_rollback (embedded, fake clock)', function () {
  this.timeout(60_000);
  const clock = new FakeClock(START);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let created: any;
  let history: any[];

  before(async () => {
    system = await startTestSystem({ clock });
  });
  after(() => system?.destroy());

  const api = () => system.api;
  const historyOf = async (id: number, params: Record<string, unknown> = {}) => ok<any[]>(api().call('cron_history', { id, ...params }));

  it('numbers the creation 1 and each change of the settings the next, with exactly what changed; secrets only as changed', async () => {
    created = await ok(api().call('cron_add', {
      url: 'https://alice:url-pw-1@example.com/a', expression: '0 9 * * *', timezone: 'UTC', name: 'first', username: 'bob', password: 'field-pw-1', httpHeaders: 'X-Key: hdr-val-1',
    }));
    await clock.advance(MINUTE);
    await ok(api().call('cron_edit', { id: created.id, name: 'second', timeout: 60, expression: '30 18 * * *' }));
    await clock.advance(MINUTE);
    await ok(api().call('cron_pause', { id: created.id, for: '1 hour' }));
    await clock.advance(MINUTE);
    await ok(api().call('cron_edit', { id: created.id, url: 'https://alice:url-pw-2@example.com/b', password: 'field-pw-2', httpHeaders: 'X-Key: hdr-val-2' }));

    history = await historyOf(created.id);
    expect(history.map((h) => [h.type, h.version, h.time])).to.deep.equal([
      ['JobEdited', 3, START / 1000 + 180],
      ['JobPaused', null, START / 1000 + 120],
      ['JobEdited', 2, START / 1000 + 60],
      ['JobCreated', 1, START / 1000],
    ]);
    expect(history[2].changes).to.deep.equal([
      { field: 'name', before: 'first', after: 'second' },
      { field: 'expression', before: '0 9 * * *', after: '30 18 * * *' },
      { field: 'timeout', before: 30, after: 60 },
    ]);
    expect(history[0].changes).to.deep.equal([
      { field: 'url', before: 'https://***@example.com/a', after: 'https://***@example.com/b', secret: true },
      { field: 'httpHeaders', secret: true },
      { field: 'password', secret: true },
    ]);
    // The creation: every setting that has a value, as cron_add answered it; secret parts only as set.
    expect(history[3].changes).to.deep.equal([
      { field: 'name', before: null, after: 'first' },
      { field: 'expression', before: null, after: '0 9 * * *' },
      { field: 'timezone', before: null, after: 'UTC' },
      { field: 'dstGap', before: null, after: 'classic' },
      { field: 'dstOverlap', before: null, after: 'classic' },
      { field: 'url', before: null, after: 'https://***@example.com/a', secret: true },
      { field: 'httpMethod', before: null, after: 'GET' },
      { field: 'httpHeaders', before: null, after: 'X-Key: ***', secret: true },
      { field: 'username', before: null, after: 'bob' },
      { field: 'password', secret: true },
      ...['timeout', 'instances', 'delay', 'notify', 'notifyEvery', 'notifyFailureWindow', 'notifySkipped', 'failureThreshold', 'retries', 'retryBackoff'].map((field) => ({ field, before: null, after: created[field] })),
    ]);
    expect(history[1]).to.include({ version: null, changes: null, rollbackTo: null });
    for (const h of history) expect(h.rollbackTo).to.equal(null);
    const text = JSON.stringify(history);
    for (const secret of [...SECRETS, 'enc:v1', 'enc.v1']) expect(text).not.to.contain(secret);
    // Only the versions, newest first, paged like the rest.
    expect((await historyOf(created.id, { versions: 1 })).map((h) => h.version)).to.deep.equal([3, 2, 1]);
    expect((await historyOf(created.id, { versions: true, page: 2, limit: 2 })).map((h) => h.version)).to.deep.equal([1]);
  });

  it('rolls back to version 1: its settings, secrets included, as version 4; the state stays; the planner follows', async () => {
    expect(await ok(api().call('cron_next', { id: created.id, limit: 2 }))).to.deep.equal([at('2030-01-01T18:30:00Z'), at('2030-01-02T18:30:00Z')]);
    await clock.advance(MINUTE);
    const answer = await ok(api().call('cron_rollback', { id: created.id, version: 1 }));
    const job = await ok(api().call('cron_get', { id: created.id }));
    expect(answer).to.deep.equal(job);
    expect(settingsOf(job)).to.deep.equal(settingsOf(created));
    expect(job.status, 'still paused: a rollback restores settings, not the state').to.equal(5);
    expect(await ok(api().call('cron_next', { id: created.id, limit: 3 }))).to.deep.equal([at('2030-01-01T09:00:00Z'), at('2030-01-02T09:00:00Z'), at('2030-01-03T09:00:00Z')]);

    const [latest, ...rest] = await historyOf(created.id);
    expect(rest).to.deep.equal(history);
    expect(latest).to.deep.include({ type: 'JobEdited', version: 4, rollbackTo: 1, time: START / 1000 + 240 });
    expect(latest.changes).to.deep.equal([
      { field: 'name', before: 'second', after: 'first' },
      { field: 'expression', before: '30 18 * * *', after: '0 9 * * *' },
      { field: 'url', before: 'https://***@example.com/b', after: 'https://***@example.com/a', secret: true },
      { field: 'httpHeaders', secret: true },
      { field: 'password', secret: true },
      { field: 'timeout', before: 60, after: 30 },
    ]);
    for (const secret of SECRETS) expect(JSON.stringify(latest)).not.to.contain(secret);

    // At rest the restored secrets are sealed again, as any edit's.
    const [, , , , restored] = streamEvents(system.dataDir, `cronjob-${created.id}`);
    expect(restored!.data.rollbackTo).to.equal(1);
    expect(restored!.data.changes.password).to.match(/^enc:v1:/);
    expect(restored!.data.changes.httpHeaders).to.match(/^X-Key: enc:v1:/);
    for (const file of ['events.db', 'events.db-wal']) {
      if (!existsSync(join(system.dataDir, file))) continue;
      const bytes = readFileSync(join(system.dataDir, file)).toString('latin1');
      for (const secret of SECRETS) expect(bytes.includes(secret), `${secret} in ${file}`).to.equal(false);
    }
  });

  it('a rollback to the settings the job has already records nothing (sending it again changes nothing)', async () => {
    const before = storeMark(system.dataDir);
    const job = await ok(api().call('cron_get', { id: created.id }));
    expect(await ok(api().call('cron_rollback', { id: created.id, version: 1 }))).to.deep.equal(job);
    expect(await ok(api().call('cron_rollback', { id: created.id, version: 4 }))).to.deep.equal(job);
    expect(storeMark(system.dataDir)).to.deep.equal(before);
    expect((await historyOf(created.id, { versions: 1 })).map((h) => h.version)).to.deep.equal([4, 3, 2, 1]);
  });

  describe('refusals: the error envelope naming the parameter, and nothing changes', () => {
    /** Fails with `code`, the message starts with the parameter (when one is named), and the store, job and history did not move. */
    const refused = async (id: number, params: Record<string, unknown>, code: number, name: string | null, rule: RegExp = /./, client = api()) => {
      const mark = storeMark(system.dataDir);
      const [job, versions] = await Promise.all([ok(api().call('cron_get', { id })), historyOf(id)]);
      const message = await fails(client.call('cron_rollback', params), code);
      if (name) expect(message).to.match(new RegExp(`^${name}: `));
      expect(message).to.match(rule);
      expect(storeMark(system.dataDir), 'nothing stored').to.deep.equal(mark);
      expect(await ok(api().call('cron_get', { id }))).to.deep.equal(job);
      expect(await historyOf(id)).to.deep.equal(versions);
      return message;
    };

    it('a version missing, not a positive whole number, or one the job never had', async () => {
      const id = created.id;
      await refused(id, { id }, 4, 'version', /required/);
      await refused(id, { id, version: '' }, 4, 'version', /required/);
      await refused(id, { id, version: 0 }, 3, 'version', /positive/);
      await refused(id, { id, version: -1 }, 3, 'version', /positive/);
      await refused(id, { id, version: 'two' }, 3, 'version', /integer/);
      await refused(id, { id, version: 1.5 }, 3, 'version', /integer/);
      await refused(id, { id, version: 5 }, 3, 'version', new RegExp(`cron job ${id} has no version 5; its versions are 1 to 4`));
      await refused(id, { id, version: 2 ** 40 }, 3, 'version', /no version/);
      await refused(id, { version: 1 }, 4, 'id', /required/);
    });

    it('a job that does not exist, is deleted, or is another account\'s: 5, alike', async () => {
      const other = await ok(api().call('cron_add', { url: 'https://example.com/gone', expression: 'manual' }));
      await ok(api().call('cron_edit', { id: other.id, name: 'renamed' }));
      await ok(api().call('cron_delete', { id: other.id }));
      const missing = await fails(api().call('cron_rollback', { id: 99_999_999, version: 1 }), 5);
      const mark = storeMark(system.dataDir);
      expect(await fails(api().call('cron_rollback', { id: other.id, version: 1 }), 5)).to.equal(missing.replace('99999999', String(other.id)));
      expect(storeMark(system.dataDir)).to.deep.equal(mark);
      const { token } = await system.adminClient.createAccount({ name: 'mallory', timezone: 'UTC', jobLimit: 0 });
      const message = await refused(created.id, { id: created.id, version: 2 }, 5, null, /not found/, apiClient(system.baseUrl, token));
      expect(message).to.equal(missing.replace('99999999', String(created.id)));
    });

    it('settings that no longer validate: a group deleted since, a channel deleted since', async () => {
      const group = await ok(api().call('group_add', { name: 'nightly' }));
      const grouped = await ok(api().call('cron_add', { url: 'https://example.com/g', expression: 'manual', group: group.id }));
      // Deleting the group takes the job out of it: version 2.
      await ok(api().call('group_delete', { id: group.id }));
      expect((await historyOf(grouped.id, { versions: 1 }))[0].changes).to.deep.equal([{ field: 'group', before: group.id, after: null }]);
      await refused(grouped.id, { id: grouped.id, version: 1 }, 5, 'group', new RegExp(`group ${group.id} not found`));

      const channel = await ok(api().call('channel_add', { type: 'webhook', name: 'ops', url: 'https://hooks.example.com/x' }));
      const notifying = await ok(api().call('cron_add', { url: 'https://example.com/n', expression: 'manual', notifyChannels: String(channel.id) }));
      await ok(api().call('cron_edit', { id: notifying.id, notifyChannels: '' }));
      await ok(api().call('channel_delete', { id: channel.id }));
      await refused(notifying.id, { id: notifying.id, version: 1 }, 3, 'notifyChannels', new RegExp(`channel ${channel.id} not found`));
    });
  });

  describe('after a restart', () => {
    it('a value stored under an older, higher limit is refused, naming it; the numbers stay the same after a restart', async () => {
      const job = await ok(api().call('cron_add', { url: 'https://example.com/limit', expression: 'manual' }));
      const stream = `cronjob-${job.id}`;
      const accountId = (await ok(api().call('account_get'))).id;
      const before = await historyOf(created.id);
      await system.stop();
      // What an older Tock that allowed 9000 s timeouts wrote: a version of its own, in the job's stream.
      const store = openSqliteEventStore(join(system.dataDir, 'events.db'));
      try {
        const [last] = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
        await store.appendToStream(stream, [{ type: 'JobEdited', data: { changes: { timeout: 9000 }, at: clock.now() }, metadata: { accountId } }], { expectedRevision: last!.revision });
      } finally {
        await store.close();
      }
      system = await startTestSystem({ clock, dataDir: system.dataDir });
      expect(await historyOf(created.id), 'the same numbers and changes after a restart').to.deep.equal(before);
      expect((await historyOf(job.id, { versions: 1 })).map((h) => [h.version, h.changes.length === 1 ? h.changes[0] : 'created'])).to.deep.equal([
        [2, { field: 'timeout', before: 30, after: 9000 }],
        [1, 'created'],
      ]);
      await ok(api().call('cron_edit', { id: job.id, timeout: 60 }));
      const mark = storeMark(system.dataDir);
      expect(await fails(api().call('cron_rollback', { id: job.id, version: 2 }), 3)).to.equal('timeout: must be a whole number from 5 to 7200 seconds, got 9000');
      expect(storeMark(system.dataDir)).to.deep.equal(mark);
      expect((await ok(api().call('cron_get', { id: job.id }))).timeout).to.equal(60);
      expect((await ok(api().call('cron_rollback', { id: job.id, version: 1 }))).timeout).to.equal(30);
    });
  });
});

describe('cron_rollback restores the secrets a job calls with (embedded, real HTTP target)', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  before(async () => {
    target = await startTarget();
    system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8' } });
  });
  after(async () => {
    await system?.destroy();
    await target?.close();
  });

  const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  /** Runs the job now; the request the target got. */
  const runOnce = async (id: number, path: string) => {
    const seen = target.received.filter((r) => r.url === path).length;
    await ok(system.api.call('cron_run', { id }));
    return waitFor(() => target.received.filter((r) => r.url === path)[seen], `run ${seen + 1} of ${path}`, 15_000);
  };

  it('the URL credentials, the password and the header values of the version, never the later ones', async () => {
    const host = target.url.slice('http://'.length);
    const inUrl = await ok(system.api.call('cron_add', { url: `http://alice:url-pw-1@${host}/in-url`, httpHeaders: 'X-Key: hdr-val-1', expression: 'manual' }));
    const inField = await ok(system.api.call('cron_add', { url: `${target.url}/in-field`, username: 'bob', password: 'field-pw-1', expression: 'manual' }));
    await ok(system.api.call('cron_edit', { id: inUrl.id, url: `http://alice:url-pw-2@${host}/in-url`, httpHeaders: 'X-Key: hdr-val-2' }));
    await ok(system.api.call('cron_edit', { id: inField.id, password: 'field-pw-2' }));
    const edited = await runOnce(inUrl.id, '/in-url');
    expect([edited.headers.authorization, edited.headers['x-key']]).to.deep.equal([basic('alice', 'url-pw-2'), 'hdr-val-2']);
    expect((await runOnce(inField.id, '/in-field')).headers.authorization).to.equal(basic('bob', 'field-pw-2'));

    await ok(system.api.call('cron_rollback', { id: inUrl.id, version: 1 }));
    await ok(system.api.call('cron_rollback', { id: inField.id, version: 1 }));
    const restored = await runOnce(inUrl.id, '/in-url');
    expect([restored.headers.authorization, restored.headers['x-key']]).to.deep.equal([basic('alice', 'url-pw-1'), 'hdr-val-1']);
    expect((await runOnce(inField.id, '/in-field')).headers.authorization).to.equal(basic('bob', 'field-pw-1'));
    const [latest] = await ok<any[]>(system.api.call('cron_history', { id: inField.id, versions: 1 }));
    expect(latest).to.deep.include({ version: 3, rollbackTo: 1, changes: [{ field: 'password', secret: true }] });
  });
});
