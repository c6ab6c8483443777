import { expect } from 'chai';
import { rmSync } from 'node:fs';
import { apiClient, ok } from '../../support/api.ts';
import { startTestSystem, TEST_TOKEN } from '../../support/embedded.ts';
import { FAR_HOUR } from '../../support/jobFixtures.ts';

const now = () => Math.floor(Date.now() / 1000);
// Schedules that do not fire while the test runs, so no execution changes a job between the two reads.
const QUIET = ['0 0 1 1 *', `30 ${FAR_HOUR} * * 1-5`, 'manual', '15 minutes', '@yearly', `R ${FAR_HOUR} * * *`, 'Feb 14, 2099, 7:30'];

/**
 * The jobs read model lives in memory and is rebuilt from the event store at every start: after
 * a varied history, a new system on the same data dir answers every read exactly as before.
 */
describe('read model rebuilt from the event store answers every query identically (embedded mode)', function () {
  this.timeout(60_000);
  let dataDir: string;
  let tokens: string[];
  const jobIds: number[] = [];
  const groupIds: number[] = [];
  const groupNames: string[] = [];

  async function history(system: Awaited<ReturnType<typeof startTestSystem>>) {
    const alice = system.api;
    const { token } = await system.adminClient.createAccount({ name: 'bob', timezone: 'Europe/Berlin', jobLimit: 100 });
    const bob = apiClient(system.baseUrl, token);
    tokens = [TEST_TOKEN, token];
    for (const [api, prefix] of [[alice, 'a'], [bob, 'b']] as const) {
      const groups = await Promise.all(['Backups', 'Reports', 'Spare'].map((name, i) => ok(api.call('group_add', { name: `${prefix} ${name}`, priority: i }))));
      groupIds.push(...groups.map((g) => g.id));
      groupNames.push(...groups.map((g) => g.name));
      const jobs = await ok<any[]>(
        api.call('cron_batch_add', {
          data: QUIET.map((expression, i) => ({
            url: `https://${prefix}.example.com/${i}`,
            expression,
            name: `${prefix}-${i}`,
            group: groups[i % 3].id,
            httpMethod: i % 2 ? 'POST' : 'GET',
            password: i === 2 ? 'secret' : undefined,
            timezone: i === 3 ? 'Asia/Kolkata' : undefined,
          })),
        }),
      );
      jobIds.push(...jobs.map((j) => j.id));
      const single = await ok(api.call('cron_add', { url: `${prefix}.example.com/single`, expression: 'manual', filter: "weekday != 'Sun'", notifyTime: 30 }));
      jobIds.push(single.id);
      await ok(api.call('cron_edit', { id: jobs[0].id, name: 'renamed', timeout: 60, keyword: 'OK', group: null }));
      await ok(api.call('cron_batch_edit', { id: [jobs[1].id, jobs[2].id], notify: false, failureThreshold: 3 }));
      await ok(api.call('cron_group_edit', { id: groups[1].id, userAgent: 'grouped' }));
      await ok(api.call('cron_disable', { id: jobs[3].id }));
      await ok(api.call('cron_pause', { id: jobs[4].id, for: '3 days' }));
      await ok(api.call('cron_pause', { id: jobs[5].id }));
      await ok(api.call('cron_disable', { id: single.id }));
      await ok(api.call('cron_enable', { id: single.id }));
      await ok(api.call('cron_run', { id: jobs[6].id, time: now() + 30 * 86400, payload: 'x=1' }));
      await ok(api.call('cron_delete', { id: jobs[6].id }));
      await ok(api.call('group_edit', { id: groups[2].id, name: `${prefix} Spare renamed` }));
      groupNames[groupNames.length - 1] = `${prefix} Spare renamed`;
      await ok(api.call('group_empty', { id: groups[2].id }));
      await ok(api.call('group_delete', { id: groups[0].id }));
    }
    await ok(bob.call('account_edit', { timezone: 'America/Chicago' }));
    const vanishing = await ok(alice.call('group_add', { name: 'vanishing' }));
    const doomed = await ok(alice.call('cron_add', { url: 'https://example.com/doomed', group: vanishing.id, expression: 'manual' }));
    jobIds.push(doomed.id);
    groupIds.push(vanishing.id);
    await ok(alice.call('group_vanish', { id: vanishing.id }));
  }

  /** Every read function, for every id and name either account may ask about, raw envelopes. */
  async function readEverything(baseUrl: string) {
    const asks: [number, string, Record<string, unknown>][] = [];
    for (const n of tokens.keys()) {
      const ask = (fn: string, params: Record<string, unknown> = {}) => void asks.push([n, fn, params]);
      ask('account_get');
      ask('group_list');
      for (const params of [{}, { page: 2, limit: 5 }, { keyword: 'example' }, { keyword: 'renamed' }, { keyword: String(jobIds[1]) }]) ask('cron_list', params);
      for (const id of jobIds) {
        ask('cron_get', { id });
        ask('cron_history', { id });
        ask('cron_history', { id, page: 2, limit: 2 });
        ask('cron_next', { id, limit: 3 });
        ask('cron_logs', { id });
        ask('cron_failures', { id });
      }
      for (const id of groupIds) {
        ask('group_get', { id });
        ask('group_items', { id });
      }
      for (const name of groupNames) ask('group_lookup', { name });
    }
    // Reads change nothing, so they go eight at a time; the answers keep the order asked.
    const apis = tokens.map((token) => apiClient(baseUrl, token));
    const envelopes: unknown[] = new Array(asks.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < asks.length; i = next++) {
        const [n, fn, params] = asks[i]!;
        const { http, headers: _headers, ...envelope } = await apis[n]!.call(fn, params);
        envelopes[i] = { http, ...envelope };
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return Object.fromEntries(asks.map(([n, fn, params], i) => [`${n} ${fn} ${JSON.stringify(params)}`, envelopes[i]]));
  }

  it('answers identically after a restart on the same data dir', async () => {
    const first = await startTestSystem();
    dataDir = first.dataDir;
    let before: Record<string, unknown>;
    try {
      await history(first);
      before = await readEverything(first.baseUrl);
    } finally {
      await first.stop();
    }
    const codes = Object.values(before).map((a: any) => a.code);
    expect(codes.filter((c) => c === 0).length, 'many successful reads (each account also asks for the other\'s ids)').to.be.greaterThan(codes.length / 3);
    expect(codes.filter((c) => c === 5).length, 'deleted objects read as missing').to.be.greaterThan(0);
    // Nothing of the jobs read model is kept on disk: the new system rebuilds it from events.db alone.
    const second = await startTestSystem({ dataDir });
    try {
      expect(second.bootstrapToken).to.equal(null);
      const after = await readEverything(second.baseUrl);
      expect(Object.keys(after)).to.deep.equal(Object.keys(before));
      for (const key of Object.keys(before)) expect(after[key], key).to.deep.equal(before[key]);
    } finally {
      await second.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
