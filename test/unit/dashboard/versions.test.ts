import { expect } from 'chai';
import { changeText, versionSummary, type VersionEntry } from '../../../services/gateway/dashboard/src/versions.ts';

describe("dashboard: a job's versions in an owner's words", () => {
  it('writes a change with the form label, before and after; empty and none in words', () => {
    expect(changeText({ field: 'name', before: 'first', after: 'second' })).to.equal('Name: "first" → "second"');
    expect(changeText({ field: 'timeout', before: 30, after: 60 })).to.equal('Give up after (seconds): 30 → 60');
    expect(changeText({ field: 'filter', before: '', after: "hour > 3" })).to.equal(`Only on (filter): empty → "hour > 3"`);
    expect(changeText({ field: 'group', before: 4, after: null })).to.equal('Group: 4 → none');
    expect(changeText({ field: 'aNewSetting', before: false, after: true })).to.equal('aNewSetting: false → true');
  });

  it('a secret only as changed: no value at all', () => {
    expect(changeText({ field: 'password', secret: true })).to.equal('Password (Basic auth): changed (a secret, not shown)');
    expect(changeText({ field: 'url', before: 'https://***@a.example/', after: 'https://***@b.example/', secret: true })).to.equal(
      'URL to call: "https://***@a.example/" → "https://***@b.example/" (and its secret)',
    );
  });

  it('says what a version is: created, changed, or an earlier version restored', () => {
    const entry = (over: Partial<VersionEntry>): VersionEntry => ({ version: 2, time: 1, type: 'JobEdited', changes: [], rollbackTo: null, ...over });
    expect(versionSummary(entry({ version: 1, type: 'JobCreated' }))).to.equal('Created');
    expect(versionSummary(entry({}))).to.equal('Changed');
    expect(versionSummary(entry({ version: 4, rollbackTo: 1 }))).to.equal('Restored version 1');
  });
});
