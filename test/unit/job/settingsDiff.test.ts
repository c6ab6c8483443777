import { expect } from 'chai';
import { defaultSettings, diffSettings, type JobSettings } from '../../../shared/job/index.ts';

const base: JobSettings = { ...defaultSettings('Europe/Paris'), url: 'https://example.com/hook' };
const withOver = (over: Partial<JobSettings>): JobSettings => ({ ...base, ...over });

describe('diffSettings: what changed between two versions of a job', () => {
  it('lists each changed setting with its value before and after, in the order of the settings table', () => {
    expect(diffSettings(base, withOver({ timeout: 60, name: 'nightly', notifyTime: 30, group: null }))).to.deep.equal([
      { field: 'name', before: '', after: 'nightly' },
      { field: 'timeout', before: 30, after: 60 },
      { field: 'notifyTime', before: null, after: 30 },
    ]);
  });

  it('nothing changed: an empty list', () => {
    expect(diffSettings(base, { ...base })).to.deep.equal([]);
  });

  it('a password only as changed: no value, before or after', () => {
    expect(diffSettings(withOver({ password: 'old' }), withOver({ password: 'new' }))).to.deep.equal([{ field: 'password', secret: true }]);
    expect(diffSettings(base, withOver({ password: 'set' }))).to.deep.equal([{ field: 'password', secret: true }]);
    expect(diffSettings(withOver({ password: 'gone' }), base)).to.deep.equal([{ field: 'password', secret: true }]);
  });

  it('URL credentials: the URL masked as cron_get shows it; a change of the credentials only is flagged, never shown', () => {
    const a = withOver({ url: 'https://alice:pw1@example.com/a' });
    expect(diffSettings(a, withOver({ url: 'https://alice:pw2@example.com/a' }))).to.deep.equal([{ field: 'url', secret: true }]);
    expect(diffSettings(a, withOver({ url: 'https://alice:pw1@example.com/b' }))).to.deep.equal([{ field: 'url', before: 'https://***@example.com/a', after: 'https://***@example.com/b' }]);
    expect(diffSettings(a, withOver({ url: 'https://bob:pw2@example.com/b' }))).to.deep.equal([{ field: 'url', before: 'https://***@example.com/a', after: 'https://***@example.com/b', secret: true }]);
    expect(diffSettings(a, base)).to.deep.equal([{ field: 'url', before: 'https://***@example.com/a', after: 'https://example.com/hook', secret: true }]);
  });

  it('header values: names shown, values never; a change of a value only is flagged', () => {
    const a = withOver({ httpHeaders: 'X-Key: k1\r\nAccept: text/plain' });
    expect(diffSettings(a, withOver({ httpHeaders: 'X-Key: k2\r\nAccept: text/plain' }))).to.deep.equal([{ field: 'httpHeaders', secret: true }]);
    expect(diffSettings(a, withOver({ httpHeaders: 'X-Key: k1\r\nX-More: k1' }))).to.deep.equal([
      { field: 'httpHeaders', before: 'X-Key: ***\r\nAccept: ***', after: 'X-Key: ***\r\nX-More: ***', secret: true },
    ]);
    expect(diffSettings(a, withOver({ httpHeaders: 'X-Key: k1\r\nAccept: text/plain\r\nX-Empty:' }))).to.deep.equal([
      { field: 'httpHeaders', before: 'X-Key: ***\r\nAccept: ***', after: 'X-Key: ***\r\nAccept: ***\r\nX-Empty:' },
    ]);
  });

  it('no secret value, clear or sealed, is ever in a change', () => {
    const sealed = 'enc:v1:c2VhbGVk';
    const before = withOver({ url: `https://u:${sealed}@example.com/`, password: sealed, httpHeaders: `X-Key: ${sealed}` });
    const after = withOver({ url: 'https://u:clear-1@example.com/', password: 'clear-2', httpHeaders: 'X-Key: clear-3' });
    const text = JSON.stringify([diffSettings(before, after), diffSettings(after, before), diffSettings(null, before), diffSettings(null, after)]);
    for (const secret of ['enc:v1', 'clear-1', 'clear-2', 'clear-3', 'u:']) expect(text).not.to.contain(secret);
  });

  it('the creation (no version before): every setting that has a value, from null; secrets flagged', () => {
    const created = withOver({ name: 'first', password: 'pw', httpHeaders: 'X-Key: k', notify: false });
    expect(diffSettings(null, created)).to.deep.equal([
      { field: 'name', before: null, after: 'first' },
      { field: 'expression', before: null, after: '15 minutes' },
      { field: 'timezone', before: null, after: 'Europe/Paris' },
      { field: 'dstGap', before: null, after: 'classic' },
      { field: 'dstOverlap', before: null, after: 'classic' },
      { field: 'url', before: null, after: 'https://example.com/hook' },
      { field: 'httpMethod', before: null, after: 'GET' },
      { field: 'httpHeaders', before: null, after: 'X-Key: ***', secret: true },
      { field: 'password', secret: true },
      { field: 'timeout', before: null, after: 30 },
      { field: 'instances', before: null, after: 0 },
      { field: 'delay', before: null, after: 0 },
      { field: 'notify', before: null, after: false },
      { field: 'notifyEvery', before: null, after: 1 },
      { field: 'notifyFailureWindow', before: null, after: 60 },
      { field: 'notifySkipped', before: null, after: false },
      { field: 'failureThreshold', before: null, after: 20 },
      { field: 'retries', before: null, after: 0 },
      { field: 'retryBackoff', before: null, after: 10 },
    ]);
  });
});
