import { create } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { badgeLabel, badgeState, badgeSvg, xmlText, BADGE_STATES } from '../../../services/gateway/badge.ts';
import { CronJobSchema } from '../../../shared/gen/tock/v1/jobs_pb.ts';

const NOW = Date.UTC(2030, 0, 1, 12, 0, 0);
const S = NOW / 1000;
const job = (fields: Partial<{ status: number; fail: number; points: number; expression: string; createdAt: bigint }>) =>
  create(CronJobSchema, { id: 7n, expression: '* * * * *', timezone: 'UTC', points: 1440, createdAt: BigInt(S - 86_400), ...fields });

describe('badge states and the SVG (services/gateway/badge.ts)', () => {
  it('names the job state first: disabled, auto-disabled, paused, done', () => {
    expect(badgeState(job({ status: 1 }), null, NOW)).to.equal('disabled');
    expect(badgeState(job({ status: 4, fail: 5 }), null, NOW)).to.equal('auto-disabled');
    expect(badgeState(job({ status: 5 }), { time: S - 10, status: 1 }, NOW)).to.equal('paused');
    expect(badgeState(job({ status: 6, expression: '@2029-12-31 10:00' }), null, NOW)).to.equal('done');
  });

  it('an active job: failing on a failure count or a failed last run, else ok, or pending before its first run', () => {
    expect(badgeState(job({ fail: 1 }), { time: S - 10, status: 0 }, NOW)).to.equal('failing');
    expect(badgeState(job({}), { time: S - 10, status: 1 }, NOW)).to.equal('failing');
    expect(badgeState(job({}), { time: S - 10, status: 0 }, NOW)).to.equal('ok');
    expect(badgeState(job({ createdAt: BigInt(S - 30) }), null, NOW)).to.equal('pending');
  });

  it('late: no run for more than twice the average interval plus a minute, only for schedules that run more than once a day', () => {
    // Every minute: late after 180 s.
    expect(badgeState(job({}), { time: S - 180, status: 0 }, NOW)).to.equal('ok');
    expect(badgeState(job({}), { time: S - 181, status: 0 }, NOW)).to.equal('late');
    // Never ran, created long ago.
    expect(badgeState(job({}), null, NOW)).to.equal('late');
    // Hourly (24 points): late after 2 h 1 min.
    expect(badgeState(job({ expression: '0 * * * *', points: 24 }), { time: S - 7200, status: 0 }, NOW)).to.equal('ok');
    expect(badgeState(job({ expression: '0 * * * *', points: 24 }), { time: S - 7261, status: 0 }, NOW)).to.equal('late');
    // Daily, weekly, one-time and manual jobs are never called late.
    expect(badgeState(job({ expression: '0 9 * * *', points: 1 }), { time: S - 30 * 86_400, status: 0 }, NOW)).to.equal('ok');
    expect(badgeState(job({ expression: 'manual', points: 1 }), null, NOW)).to.equal('pending');
    expect(badgeState(job({ expression: '@2031-01-01 10:00', points: 1 }), null, NOW)).to.equal('pending');
  });

  it('escapes markup and drops what XML cannot hold', () => {
    expect(xmlText(`<a href="x">&'`)).to.equal('&lt;a href=&quot;x&quot;&gt;&amp;&#39;');
    expect(xmlText('a\u0000b\u001bc\ud800d\uffffe\u{1f600}')).to.equal('abcde\u{1f600}');
  });

  it('labels with the name (cut to 40 characters) or "cron", and colours by state', () => {
    expect(badgeLabel('  ')).to.equal('cron');
    expect(badgeLabel('x'.repeat(41))).to.equal(`${'x'.repeat(39)}…`);
    expect(badgeLabel('x'.repeat(40))).to.equal('x'.repeat(40));
    const svg = badgeSvg('my job', 'failing');
    expect(svg).to.contain(`fill="${BADGE_STATES.failing}"`);
    expect(svg).to.contain('aria-label="my job: failing"');
    expect(badgeSvg('my job', 'ok')).to.contain(`fill="${BADGE_STATES.ok}"`);
    // Wider text, wider badge.
    const width = (s: string) => Number(/width="(\d+)"/.exec(s)![1]);
    expect(width(badgeSvg('a much longer job name', 'ok'))).to.be.greaterThan(width(svg) - 10);
  });
});
