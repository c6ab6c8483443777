import { expect } from 'chai';
import fc from 'fast-check';
import { isValidTimeZone } from '../../../shared/schedule/index.ts';
import { getZone, type GapInfo } from '../../../shared/schedule/zone.ts';

/** The offset straight from Intl, the slow way, to check the cached table against. */
function intlOffset(zone: string, t: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
  }).formatToParts(t);
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - Math.floor(t / 1000) * 1000;
}

describe('time zones', () => {
  it('accepts IANA names and UTC, rejects the rest', () => {
    for (const name of ['UTC', 'Etc/UTC', 'Europe/London', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'US/Eastern', 'europe/london']) {
      expect(isValidTimeZone(name), name).to.equal(true);
    }
    for (const name of ['Mars/Olympus_Mons', '', '+05:00', 'UTC+1', 'Europe/', 'Z', ' UTC']) {
      expect(isValidTimeZone(name), name).to.equal(false);
    }
  });

  it('gives the same offsets as Intl at any instant, in any zone', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    fc.assert(
      fc.property(fc.constantFrom(...zones), fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2040, 0, 1) }), (name, t) => {
        expect(getZone(name)!.offsetAt(t), `${name} ${new Date(t).toISOString()}`).to.equal(intlOffset(name, t));
      }),
      { numRuns: 2000 },
    );
  });

  it('finds transitions to the second (Lord Howe moves by 30 minutes)', () => {
    const z = getZone('Australia/Lord_Howe')!;
    const change = Date.parse('2024-10-05T15:30:00Z');
    expect(z.offsetAt(change - 1000)).to.equal(10.5 * 3600000);
    expect(z.offsetAt(change)).to.equal(11 * 3600000);
    expect(z.spanEnd(change - 5000)).to.equal(change);
  });

  it('maps wall times in gaps and overlaps as the rules say', () => {
    const ny = getZone('America/New_York')!;
    const gap: GapInfo = { transition: 0, offsetBefore: 0 };
    // 2024-03-10 02:30 does not exist: the clock jumps at 07:00Z from -5 h.
    expect(ny.instantOf(Date.UTC(2024, 2, 10, 2, 30), gap)).to.be.NaN;
    expect(gap).to.deep.equal({ transition: Date.parse('2024-03-10T07:00:00Z'), offsetBefore: -5 * 3600000 });
    expect(ny.instantOfShifted(Date.UTC(2024, 2, 10, 2, 30))).to.equal(Date.parse('2024-03-10T07:30:00Z'));
    // 2024-11-03 01:30 exists twice: the earlier (EDT) instant.
    expect(ny.instantOf(Date.UTC(2024, 10, 3, 1, 30))).to.equal(Date.parse('2024-11-03T05:30:00Z'));
    expect(getZone('Asia/Kathmandu')!.instantOf(Date.UTC(2024, 9, 16, 17, 30))).to.equal(Date.parse('2024-10-16T11:45:00Z'));
  });
});
