import { expect } from 'chai';
import { dstNote, offsetMinutes } from '../../../services/gateway/dashboard/src/dst.ts';

describe('dashboard: daylight-saving notes', () => {
  it('reads a zone offset at an instant', () => {
    expect(offsetMinutes(Date.UTC(2027, 0, 1), 'Europe/London')).to.equal(0);
    expect(offsetMinutes(Date.UTC(2027, 6, 1), 'Europe/London')).to.equal(60);
    expect(offsetMinutes(Date.UTC(2027, 0, 1), 'America/New_York')).to.equal(-300);
  });

  it('marks the run the clocks jump forward at, and a run in the hour they repeat, first or second', () => {
    // London, 28 March 2027: 01:00 GMT becomes 02:00 BST at 01:00 UTC.
    expect(dstNote(Date.UTC(2027, 2, 28, 1, 0), 'Europe/London')).to.match(/^the clocks go forward at this run \(01:00 becomes 02:00\): times from 01:00 to 01:59/);
    expect(dstNote(Date.UTC(2027, 2, 28, 1, 30), 'Europe/London')).to.equal(undefined);
    // London, 31 October 2027: 02:00 BST becomes 01:00 GMT at 01:00 UTC; 01:30 comes at 00:30 and 01:30 UTC.
    expect(dstNote(Date.UTC(2027, 9, 31, 0, 30), 'Europe/London')).to.match(/^01:30 happens twice .*the first one, at UTC\+01:00$/);
    expect(dstNote(Date.UTC(2027, 9, 31, 1, 30), 'Europe/London')).to.match(/^01:30 happens twice .*the second one, at UTC\+00:00$/);
    expect(dstNote(Date.UTC(2027, 9, 31, 3, 0), 'Europe/London')).to.equal(undefined);
    expect(dstNote(Date.UTC(2027, 5, 1, 9, 0), 'Europe/London')).to.equal(undefined);
    expect(dstNote(Date.UTC(2027, 2, 28, 1, 0), 'UTC')).to.equal(undefined);
  });
});
