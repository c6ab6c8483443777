import { expect } from 'chai';
import { defaultSettings, diffSettings, jobVersions, versionSettings, type JobEvent, type JobSettings } from '../../../shared/job/index.ts';

const settings: JobSettings = { ...defaultSettings('UTC'), url: 'https://example.com/v', password: 'p1' };
const created: JobEvent = { type: 'JobCreated', data: { id: 7, accountId: 1, settings, at: 1 } };
const edited = (changes: Partial<JobSettings>, rollbackTo?: number): JobEvent => ({ type: 'JobEdited', data: { changes, at: 2, ...(rollbackTo ? { rollbackTo } : {}) } });
const paused: JobEvent = { type: 'JobPaused', data: { until: null, at: 3 } };
const failed: JobEvent = { type: 'FailureCounted', data: { fail: 1, runId: 'r1', at: 4 } };

describe("a job's versions, from its events", () => {
  const events = [created, failed, edited({ name: 'second', timeout: 60 }), paused, edited({ password: 'p2' }), edited({ name: '', timeout: 30, password: 'p1' }, 1)];

  it('numbers the creation 1 and each change of the settings the next; other events make none', () => {
    expect(jobVersions(events).map((m) => m?.version ?? null)).to.deep.equal([1, null, 2, null, 3, 4]);
  });

  it('says what each version changed, and which version a rollback restored', () => {
    const marks = jobVersions(events);
    expect(marks[0]).to.deep.equal({ version: 1, changes: diffSettings(null, settings), rollbackTo: null });
    expect(marks[2]).to.deep.equal({ version: 2, changes: [{ field: 'name', before: '', after: 'second' }, { field: 'timeout', before: 30, after: 60 }], rollbackTo: null });
    expect(marks[4]).to.deep.equal({ version: 3, changes: [{ field: 'password', secret: true }], rollbackTo: null });
    expect(marks[5]).to.deep.equal({
      version: 4,
      changes: [{ field: 'name', before: 'second', after: '' }, { field: 'password', secret: true }, { field: 'timeout', before: 60, after: 30 }],
      rollbackTo: 1,
    });
  });

  it('gives the settings of every version, secrets included, for a rollback', () => {
    const versions = versionSettings(events);
    expect(versions).to.have.length(4);
    expect(versions[0]).to.deep.equal(settings);
    expect(versions[1]).to.deep.equal({ ...settings, name: 'second', timeout: 60 });
    expect(versions[2]).to.deep.equal({ ...settings, name: 'second', timeout: 60, password: 'p2' });
    expect(versions[3]).to.deep.equal(settings);
  });

  it('a version made before a setting existed has that setting at its default', () => {
    const { retries: _retries, ...older } = settings;
    const [first] = versionSettings([{ type: 'JobCreated', data: { id: 7, accountId: 1, settings: older as JobSettings, at: 1 } }]);
    expect(first!.retries).to.equal(0);
  });

  it('a stream without its creation (none in the store) has no version', () => {
    expect(jobVersions([failed, edited({ name: 'x' })])).to.deep.equal([null, null]);
    expect(versionSettings([])).to.deep.equal([]);
  });
});
