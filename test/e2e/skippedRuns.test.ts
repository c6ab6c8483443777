import { expect } from 'chai';
import { FakeClock } from '../../shared/clock.ts';
import { apiClient, ok, type ApiClient } from '../support/api.ts';
import { drive } from '../support/drive.ts';
import { startTestSystem } from '../support/embedded.ts';
import { startReceiver } from '../integration/notifier/harness.ts';
import { sampleSum } from '../support/metricsText.ts';
import { startTarget } from '../support/target.ts';

/** Occurrences missed by more than this at a restart collapse into one late run. */
const MISFIRE_MS = 500;

/**
 * Runs not made on time, for each reason Tock knows, through the public parts (embedded mode on a
 * fake clock, a real target, a real webhook receiver): each is in cron_logs with its reason, in the
 * counters of /metrics, and told to the account's webhook when the job has notifySkipped, never
 * when it has not. Each reason has an account of its own, so its notifications are its own.
 */
describe('skipped and missed runs: logs, metrics and notifySkipped (embedded mode)', function () {
  this.timeout(120_000);
  // Off the whole second, so no occurrence falls on the instant of a change.
  const clock = new FakeClock(Math.ceil(Date.now() / 1000) * 1000 + 250);
  const env = { TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_ACCOUNT_CONCURRENCY: '1' };
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  let target: Awaited<ReturnType<typeof startTarget>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  before(async () => {
    receiver = await startReceiver();
    // /slow answers after 1.5 s of real time: many seconds of the fake clock.
    target = await startTarget((req) => (req.url.startsWith('/slow') ? { delayMs: 1500 } : {}));
    system = await startTestSystem({ env, clock, misfireMs: MISFIRE_MS });
  });
  after(async () => {
    await system?.destroy();
    await target?.close();
    await receiver?.close();
  });

  const metric = async (name: string, labels: Record<string, string> = {}) => sampleSum(await (await fetch(`${system.opsUrl}/metrics`)).text(), name, labels);
  /** A fresh account with a webhook channel whose calls arrive at /<name>. */
  async function account(name: string): Promise<{ api: ApiClient; id: bigint; token: string }> {
    const { account, token } = await system.adminClient.createAccount({ name, timezone: 'UTC', jobLimit: 0 });
    const api = apiClient(system.baseUrl, token);
    await ok(api.call('channel_add', { type: 'webhook', url: `${receiver.url}/${name}` }));
    return { api, id: account!.id, token };
  }
  const told = (name: string) => receiver.received.filter((r) => r.url === `/${name}`).flatMap((r) => JSON.parse(r.body).notifications as any[]);
  const skipsOf = async (api: ApiClient, id: number) => (await ok<any[]>(api.call('cron_logs', { id }))).map((e) => e.result).filter((r) => r.status === 2);
  /** Two jobs alike but for notifySkipped. */
  async function pair(api: ApiClient, settings: Record<string, unknown>) {
    const on = await ok<any>(api.call('cron_add', { ...settings, name: 'told', notifySkipped: 1 }));
    const off = await ok<any>(api.call('cron_add', { ...settings, name: 'quiet' }));
    expect(on.notifySkipped).to.equal(true);
    expect(off.notifySkipped).to.equal(false);
    return { on: on.id as number, off: off.id as number };
  }
  /** The told job's skips reach the webhook (kind `kind`), the quiet one's never do. */
  async function toldOnlyFor(name: string, jobs: { on: number; off: number }, kind: string) {
    const message = await drive(clock, () => told(name).find((n) => n.id === jobs.on), `the ${name} notification`, { maxMs: 120_000 });
    expect(message.event).to.equal(kind);
    expect(message.reasons.join(' ')).to.be.a('string').and.not.equal('');
    expect(told(name).filter((n) => n.id === jobs.off), 'nothing for the job without notifySkipped').to.deep.equal([]);
    return message;
  }

  it('instances reached: skips in cron_logs (reason instances), counted, told for notifySkipped only', async () => {
    const { api } = await account('instances');
    const before = await metric('tock_runs_skipped_total', { reason: 'instances' });
    const jobs = await pair(api, { url: `${target.url}/slow/instances`, expression: '* * * * * *', instances: 1 });
    const [skip] = await drive(clock, async () => ((await skipsOf(api, jobs.on)).length && (await skipsOf(api, jobs.off)).length ? skipsOf(api, jobs.on) : null), 'skips of both jobs');
    expect(skip).to.include({ status: 2, skipReason: 'instances' });
    expect(skip.error).to.match(/instances = 1/);
    expect(await metric('tock_runs_skipped_total', { reason: 'instances' })).to.be.above(before + 1);
    const message = await toldOnlyFor('instances', jobs, 'skipped');
    expect(message.reasons[0]).to.match(/instances limit/);
    await ok(api.call('cron_disable', { id: jobs.on }));
    await ok(api.call('cron_disable', { id: jobs.off }));
  });

  it("over the account's share: a skip in cron_logs (reason fair_share), counted, told", async () => {
    const { api } = await account('share');
    const before = await metric('tock_runs_skipped_total', { reason: 'fair_share' });
    // Twelve runs due together on an account with one call at a time and ten waiting: one is over.
    const at = Math.floor(clock.now() / 1000) + 3;
    const data = Array.from({ length: 12 }, (_, i) => ({ url: `${target.url}/slow/share/${i}`, name: `share ${i}`, expression: 'manual', run: at, notifySkipped: 1 }));
    const ids = (await ok<any[]>(api.call('cron_batch_add', { data }))).map((j) => j.id as number);
    await drive(clock, () => clock.now() >= at * 1000 + 200, 'the instant of the twelve runs');
    const skipped = await drive(clock, async () => {
      for (const id of ids) for (const s of await skipsOf(api, id)) return { id, s };
      return null;
    }, 'the run over the share', { maxMs: 60_000, pauseMs: 20 });
    expect(skipped.s).to.include({ skipReason: 'fair_share', time: at });
    expect(skipped.s.error).to.match(/fair share/);
    expect(await metric('tock_runs_skipped_total', { reason: 'fair_share' })).to.equal(before + 1);
    const message = await drive(clock, () => told('share').find((n) => n.id === skipped.id), 'the share notification', { maxMs: 120_000 });
    expect(message.event).to.equal('skipped');
    expect(message.reasons[0]).to.match(/fair share/);
  });

  it('the account disabled: one skip per job for the runs not made (reason account_disabled, missed = how many), counted, told', async () => {
    const { api, id } = await account('disabled');
    const before = await metric('tock_runs_skipped_total', { reason: 'account_disabled' });
    const jobs = await pair(api, { url: `${target.url}/fast/disabled`, expression: '* * * * * *' });
    await drive(clock, async () => (await ok<any[]>(api.call('cron_logs', { id: jobs.off }))).length > 0 && (await ok<any[]>(api.call('cron_logs', { id: jobs.on }))).length > 0, 'runs before the disable');
    await system.adminClient.disableAccount({ id });
    const disabledAt = clock.now();
    await drive(clock, () => clock.now() >= disabledAt + 4000, 'four seconds disabled', { pauseMs: 2 });
    await system.adminClient.enableAccount({ id });
    const enabledAt = clock.now();
    const skips = await drive(clock, async () => {
      const [on] = await skipsOf(api, jobs.on);
      const [off] = await skipsOf(api, jobs.off);
      return on && off ? { on, off } : null;
    }, 'the skip records');
    for (const s of [skips.on, skips.off]) {
      expect(s).to.include({ skipReason: 'account_disabled' });
      // The occurrences due while disabled: every whole second of (disabledAt, enabledAt].
      expect(s.missed).to.equal(Math.floor(enabledAt / 1000) - Math.floor(disabledAt / 1000));
      expect(s.time).to.equal(Math.floor(enabledAt / 1000));
    }
    expect(await metric('tock_runs_skipped_total', { reason: 'account_disabled' })).to.equal(before + skips.on.missed + skips.off.missed);
    const message = await toldOnlyFor('disabled', jobs, 'skipped');
    expect(message.reasons[0]).to.equal(`${skips.on.missed} scheduled runs were not made while the account was disabled`);
    await ok(api.call('cron_delete', { id: jobs.on }));
    await ok(api.call('cron_delete', { id: jobs.off }));
  });

  it('runs collapsed after downtime: the late run shows missed, tock_runs_missed_total counts them, told as missed', async () => {
    const { api: before, token } = await account('downtime');
    let api = before;
    const jobs = await pair(before, { url: `${target.url}/fast/downtime`, expression: '* * * * * *' });
    await drive(clock, async () => (await ok<any[]>(api.call('cron_logs', { id: jobs.off }))).length > 0 && (await ok<any[]>(api.call('cron_logs', { id: jobs.on }))).length > 0, 'runs before the stop');
    // Counters live in the process's registry, which other files run by this mocha worker share.
    const missedBefore = await metric('tock_runs_missed_total');
    await system.stop();
    await clock.advance(MISFIRE_MS + 4000);
    system = await startTestSystem({ dataDir: system.dataDir, env, clock, misfireMs: MISFIRE_MS });
    api = apiClient(system.baseUrl, token);
    const late = await drive(clock, async () => {
      const find = async (id: number) => (await ok<any[]>(api.call('cron_logs', { id }))).map((e) => e.result).find((r) => r.missed > 0);
      const [on, off] = [await find(jobs.on), await find(jobs.off)];
      return on && off ? { on, off } : null;
    }, 'the late runs');
    expect(late.on.missed).to.be.at.least(4);
    expect(late.on).to.include({ status: 0, skipReason: null });
    // The counter grew by exactly the runs this restart collapsed.
    const lateRuns = async (id: number) => (await ok<any[]>(api.call('cron_logs', { id }))).map((e) => e.result).filter((r) => r.missed > 0).map((r) => `${r.time}:${r.missed}`);
    expect((await metric('tock_runs_missed_total')) - missedBefore, `late runs: ${(await lateRuns(jobs.on)).join(' ')} / ${(await lateRuns(jobs.off)).join(' ')}`).to.equal(late.on.missed + late.off.missed);
    const message = await toldOnlyFor('downtime', jobs, 'missed');
    expect(message.reasons[0]).to.match(new RegExp(`^${late.on.missed} scheduled runs were missed while Tock was down`));
  });
});
