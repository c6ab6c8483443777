import { expect } from 'chai';
import { fails, ok } from '../../support/api.ts';
import { startTestSystem } from '../../support/embedded.ts';

/** The last Sunday of March or October in UTC: the nights Europe/London changes its clocks. */
const isChangeNight = (t: number) => {
  const d = new Date(t * 1000);
  const month = d.getUTCMonth();
  return (month === 2 || month === 9) && d.getUTCDay() === 0 && d.getUTCDate() + 7 > 31;
};

/**
 * A job's own DST rule through the API: 01:30 London time on every Sunday of March and October, so
 * the next 20 runs hold at least one night of each kind, whatever today's date.
 */
describe('DST by choice through the API', function () {
  this.timeout(60_000);
  let system: Awaited<ReturnType<typeof startTestSystem>>;
  before(async () => {
    system = await startTestSystem();
  });
  after(() => system.destroy());

  const add = (settings: Record<string, unknown>) =>
    ok(system.api.call('cron_add', { url: 'https://example.com/', expression: '30 1 * 3,10 0', timezone: 'Europe/London', ...settings }));
  const detail = async (id: number) => ok<{ time: number; dst: { kind: string; pass?: number } | null }[]>(system.api.call('cron_next', { id, limit: 20, detail: true }));

  it('keeps the classic rule by default and marks what the changes did', async () => {
    const job = await add({});
    expect(job.dstGap).to.equal('classic');
    expect(job.dstOverlap).to.equal('classic');
    const runs = await detail(job.id);
    expect(await ok(system.api.call('cron_next', { id: job.id, limit: 20 }))).to.deep.equal(runs.map((r) => r.time));
    const nights = runs.filter((r) => isChangeNight(r.time));
    expect(nights.length).to.be.greaterThan(0);
    for (const run of runs) {
      const d = new Date(run.time * 1000);
      if (!isChangeNight(run.time)) expect(run.dst, d.toISOString()).to.equal(null);
      // March: 01:30 is skipped and runs at the jump (01:00 UTC); October: the first 01:30 (00:30 UTC).
      else if (d.getUTCMonth() === 2) expect([d.getUTCHours(), d.getUTCMinutes(), run.dst]).to.deep.equal([1, 0, { kind: 'moved' }]);
      else expect([d.getUTCHours(), d.getUTCMinutes(), run.dst]).to.deep.equal([0, 30, { kind: 'repeated', pass: 1 }]);
    }
  });

  it('skips a skipped time and runs a repeated one twice when the job says so', async () => {
    const job = await add({ dstGap: 'skip', dstOverlap: 'Both' });
    expect([job.dstGap, job.dstOverlap]).to.deep.equal(['skip', 'both']);
    const runs = await detail(job.id);
    const march = runs.filter((r) => isChangeNight(r.time) && new Date(r.time * 1000).getUTCMonth() === 2);
    const october = runs.filter((r) => isChangeNight(r.time) && new Date(r.time * 1000).getUTCMonth() === 9);
    expect(march).to.deep.equal([]);
    expect(october.length % 2).to.equal(0);
    expect(october.slice(0, 2).map((r) => r.dst)).to.deep.equal([{ kind: 'repeated', pass: 1 }, { kind: 'repeated', pass: 2 }]);
    expect(october[1]!.time - october[0]!.time).to.equal(3600);
  });

  it('re-plans on an edit of the rule, and refuses what it cannot do, naming the setting', async () => {
    const job = await add({});
    await ok(system.api.call('cron_edit', { id: job.id, dstOverlap: 'last' }));
    const october = (await detail(job.id)).filter((r) => isChangeNight(r.time) && new Date(r.time * 1000).getUTCMonth() === 9);
    expect(october.map((r) => r.dst)).to.deep.include({ kind: 'repeated', pass: 2 });
    expect(october.every((r) => new Date(r.time * 1000).getUTCHours() === 1)).to.equal(true);

    expect(await fails(system.api.call('cron_edit', { id: job.id, dstGap: 'later' }), 3)).to.match(/^dstGap: must be one of classic, shift, skip/);
    expect(await fails(system.api.call('cron_add', { url: 'https://example.com/', expression: '1 day 01:30', dstOverlap: 'both' }), 3)).to.match(
      /^dstOverlap: applies to crontab expressions only/,
    );
    // Refused edits change nothing.
    expect((await ok(system.api.call('cron_get', { id: job.id }))).dstGap).to.equal('classic');
  });
});
