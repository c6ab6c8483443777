import { expect } from 'chai';
import { FakeClock } from '../../../shared/clock.ts';
import { apiClient, fails, ok } from '../../support/api.ts';
import { plannerApplied, startTestSystem } from '../../support/embedded.ts';

const START = Date.UTC(2030, 0, 1, 0, 0, 0);
const S = START / 1000;
const HOUR = 3600;

/**
 * account_calendar through the public API, on a fake clock that never moves (nothing runs): the
 * runs of the account's jobs in the hours ahead, by the planner's own occurrence rules, in time
 * order, with each job's wall-clock time, and the caps that keep a big account's answer small.
 */
describe('account_calendar (embedded, fake clock)', function () {
  this.timeout(120_000);
  const clock = new FakeClock(START);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  const ids: Record<string, number> = {};

  before(async () => {
    system = await startTestSystem({ clock });
    const add = async (key: string, params: Record<string, unknown>) => {
      ids[key] = (await ok(system.api.call('cron_add', { url: `https://example.com/${key}`, name: key, ...params }))).id;
      await plannerApplied(system, ids[key]!);
    };
    await add('hourly', { expression: '0 * * * *', timezone: 'UTC' });
    // 09:30 in Kolkata (UTC+05:30) is 04:00 UTC.
    await add('kolkata', { expression: '30 9 * * *', timezone: 'Asia/Kolkata' });
    // Skipped 2030-01-01 (a Tuesday) by its weekday field: next on Wednesday the 2nd at 23:00 UTC, outside the 24 h.
    await add('wednesday', { expression: '0 23 * * 3', timezone: 'UTC' });
    await add('disabled', { expression: '0 * * * *', timezone: 'UTC' });
    await ok(system.api.call('cron_disable', { id: ids.disabled }));
    await plannerApplied(system, ids.disabled!);
    await add('paused', { expression: '0 * * * *', timezone: 'UTC' });
    await ok(system.api.call('cron_pause', { id: ids.paused }));
    await plannerApplied(system, ids.paused!);
    // Paused for 2 hours: its runs resume at 02:00.
    await add('resumes', { expression: '0 * * * *', timezone: 'UTC' });
    await ok(system.api.call('cron_pause', { id: ids.resumes, for: '2 hours' }));
    await plannerApplied(system, ids.resumes!);
  });
  after(() => system?.destroy());

  it("answers every run of the next hours in time order, with the wall-clock time in the job's zone", async () => {
    const day = await ok(system.api.call('account_calendar'));
    expect(day).to.include({ from: S, until: S + 24 * HOUR, truncated: false });
    const hourly = day.runs.filter((r: any) => r.id === ids.hourly);
    expect(hourly.map((r: any) => r.time)).to.deep.equal(Array.from({ length: 24 }, (_, i) => S + (i + 1) * HOUR));
    expect(hourly[0]).to.deep.equal({ id: ids.hourly, name: 'hourly', time: S + HOUR, timezone: 'UTC', local: '2030-01-01T01:00:00+00:00' });
    expect(day.runs.filter((r: any) => r.id === ids.kolkata)).to.deep.equal([
      { id: ids.kolkata, name: 'kolkata', time: S + 4 * HOUR, timezone: 'Asia/Kolkata', local: '2030-01-01T09:30:00+05:30' },
    ]);
    const resumes = day.runs.filter((r: any) => r.id === ids.resumes).map((r: any) => r.time);
    expect(resumes[0]).to.equal(S + 2 * HOUR);
    expect(resumes).to.have.length(23);
    const shown = new Set(day.runs.map((r: any) => r.id));
    for (const key of ['wednesday', 'disabled', 'paused']) expect(shown.has(ids[key]), key).to.equal(false);
    // Sorted by time, then by job id at the same instant.
    const order = day.runs.map((r: any) => [r.time, r.id]);
    expect(order).to.deep.equal([...order].sort((a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]!));
    expect(day.runs).to.have.length(24 + 1 + 23);

    const three = await ok(system.api.call('account_calendar', { hours: 3 }, { method: 'GET' }));
    expect(three.until).to.equal(S + 3 * HOUR);
    expect(three.runs.map((r: any) => [r.name, r.time - S])).to.deep.equal([
      ['hourly', HOUR],
      ['hourly', 2 * HOUR],
      ['resumes', 2 * HOUR],
      ['hourly', 3 * HOUR],
      ['resumes', 3 * HOUR],
    ]);
  });

  it("shows only the caller's jobs", async () => {
    const { token } = await system.adminClient.createAccount({ name: 'other', timezone: 'UTC', jobLimit: 0 });
    const other = apiClient(system.baseUrl, token);
    expect((await ok(other.call('account_calendar'))).runs).to.deep.equal([]);
    const own = await ok(other.call('cron_add', { url: 'https://example.com/o', expression: '15 * * * *' }));
    await plannerApplied(system, own.id);
    const gone = await ok(other.call('cron_add', { url: 'https://example.com/g', expression: '45 * * * *' }));
    await ok(other.call('cron_delete', { id: gone.id }));
    await plannerApplied(system, gone.id);
    const runs = (await ok(other.call('account_calendar', { hours: 1 }))).runs;
    expect(runs.map((r: any) => [r.id, r.time])).to.deep.equal([[own.id, S + 15 * 60]]);
    // A name edited shows at once.
    await ok(other.call('cron_edit', { id: own.id, name: 'renamed' }));
    await plannerApplied(system, own.id);
    expect((await ok(other.call('account_calendar', { hours: 1 }))).runs[0].name).to.equal('renamed');
  });

  it('caps the answer: 100 runs per job and `limit` in all, saying truncated; refuses bad bounds naming the parameter', async () => {
    const { token } = await system.adminClient.createAccount({ name: 'busy', timezone: 'UTC', jobLimit: 0 });
    const busy = apiClient(system.baseUrl, token);
    const minutely = await ok(busy.call('cron_add', { url: 'https://example.com/m', expression: '* * * * *' }));
    await plannerApplied(system, minutely.id);
    const capped = await ok(busy.call('account_calendar'));
    expect(capped.truncated).to.equal(true);
    expect(capped.runs.map((r: any) => r.time)).to.deep.equal(Array.from({ length: 100 }, (_, i) => S + (i + 1) * 60));
    // An hour of a minutely job is 60 runs: under the per-job cap.
    expect(await ok(busy.call('account_calendar', { hours: 1 }))).to.include({ truncated: false });
    const five = await ok(busy.call('account_calendar', { limit: 5 }));
    expect(five.truncated).to.equal(true);
    expect(five.runs).to.have.length(5);
    expect(await fails(busy.call('account_calendar', { hours: 25 }), 3)).to.match(/^hours: /);
    expect(await fails(busy.call('account_calendar', { hours: 0 }), 3)).to.match(/^hours: /);
    expect(await fails(busy.call('account_calendar', { limit: 1001 }), 3)).to.match(/^limit: /);
    expect(await fails(busy.call('account_calendar', { hours: 'soon' }), 3)).to.match(/^hours: /);
  });

  it('stays quick for an account of 2000 every-minute jobs: the first runs of each, then only what is answered', async () => {
    const { token } = await system.adminClient.createAccount({ name: 'huge', timezone: 'UTC', jobLimit: 0 });
    const huge = apiClient(system.baseUrl, token);
    let last = 0;
    for (let b = 0; b < 2; b++) {
      const jobs = await ok<any[]>(huge.call('cron_batch_add', { data: Array.from({ length: 1000 }, (_, i) => ({ url: `https://example.com/h${b}-${i}`, expression: '* * * * *' })) }));
      last = jobs.at(-1).id;
    }
    await plannerApplied(system, last);
    const timed = async () => {
      const started = performance.now();
      const answer = await ok(huge.call('account_calendar'));
      return { answer, ms: performance.now() - started };
    };
    const first = await timed();
    const { answer, ms } = await timed();
    expect(answer.truncated).to.equal(true);
    expect(answer.runs).to.have.length(1000);
    // Every job's first run is at S + 60: the earliest 1000 runs are those, 2000 jobs sharing one instant.
    expect(new Set(answer.runs.map((r: any) => r.time))).to.deep.equal(new Set([S + 60]));
    console.log(`      account_calendar of 2000 every-minute jobs: ${Math.round(first.ms)} ms, then ${Math.round(ms)} ms`);
    expect(ms).to.be.below(3000);
  });
});
