import { expect } from 'chai';
import { defaultValues, fieldOfMessage, fieldsFromOpenApi, maskedSecretLeft, paramsFromValues, PRIMARY, secretsNotCopied, valuesFromRecord } from '../../../services/gateway/dashboard/src/fields.ts';
import { previewLines } from '../../../services/gateway/dashboard/src/preview.ts';
import { openApiDocument } from '../../../services/gateway/openapi.ts';
import { SETTING_NAMES } from '../../../shared/job/index.ts';

describe('dashboard: the job form from the OpenAPI document', () => {
  // The document the gateway serves, as the page fetches it (through JSON).
  const fields = fieldsFromOpenApi(JSON.parse(JSON.stringify(openApiDocument())));
  const byName = new Map(fields.map((f) => [f.name, f]));

  it('has one field per setting of the settings table, the primary ones first', () => {
    expect([...byName.keys()].sort()).to.deep.equal([...SETTING_NAMES].sort());
    expect(fields.slice(0, PRIMARY.length).map((f) => f.name)).to.deep.equal(PRIMARY);
    expect(byName.get('url')).to.include({ kind: 'text', required: true, maxLength: 2048 });
    expect(byName.get('timeout')).to.include({ kind: 'int', min: 5, max: 7200, default: 30 });
    expect(byName.get('notifyTime')).to.include({ kind: 'optionalInt' });
    expect(byName.get('notify')).to.include({ kind: 'bool', default: true });
    expect(byName.get('password')).to.include({ kind: 'secret' });
    expect(byName.get('httpHeaders')).to.include({ kind: 'multiline' });
    expect(byName.get('group')).to.include({ kind: 'group' });
    expect(byName.get('httpMethod')!.options).to.include('POST');
  });

  it('refuses a document without the cron_add body', () => {
    expect(() => fieldsFromOpenApi({ paths: {} })).to.throw(/cron_add/);
  });

  it('sends a new job its given values, defaults aside from what is typed', () => {
    const values = { ...defaultValues(fields, 'Europe/Paris'), url: ' example.com/x ', expression: '*/5 * * * *', retries: '2', notify: false, password: '' };
    expect(defaultValues(fields, 'Europe/Paris')).to.include({ timezone: 'Europe/Paris', timeout: '30', notify: true, expression: '15 minutes', name: '' });
    const params = paramsFromValues(fields, values);
    expect(params).to.include({ url: 'example.com/x', expression: '*/5 * * * *', timezone: 'Europe/Paris', retries: '2', notify: false, timeout: '30' });
    for (const absent of ['password', 'name', 'group', 'notifyTime']) expect(params, absent).not.to.have.property(absent);
  });

  it('sends an edit only what changed: a masked URL left alone is kept, emptied "none" numbers clear', () => {
    const record = { id: 4, url: 'https://***@example.com/x', expression: '0 9 * * *', timezone: 'UTC', name: 'n', group: 3, notifyTime: 60, timeout: 30, notify: true, hasPassword: true, httpHeaders: 'A: ***' };
    const original = valuesFromRecord(fields, record);
    expect(original).to.include({ url: 'https://***@example.com/x', group: '3', notifyTime: '60', password: '', notify: true });
    expect(paramsFromValues(fields, { ...original }, original)).to.deep.equal({});
    const edited = { ...original, name: '', group: '', notifyTime: '', timeout: '', notify: false, expression: '0 10 * * *', password: 'new secret' };
    expect(paramsFromValues(fields, edited, original)).to.deep.equal({ name: '', group: '0', notifyTime: '0', notify: false, expression: '0 10 * * *', password: 'new secret' });
  });

  it('stops an edit that would send a masked secret back as the secret itself', () => {
    const original = { url: 'https://***@example.com/x', httpHeaders: 'X-Key: ***\nAccept: ***' };
    expect(maskedSecretLeft({ ...original }, original)).to.equal(undefined);
    expect(maskedSecretLeft({ ...original, url: 'https://***@example.com/y' }, original)).to.include({ field: 'url' });
    expect(maskedSecretLeft({ ...original, url: 'https://me:pw@example.com/y' }, original)).to.equal(undefined);
    expect(maskedSecretLeft({ ...original, url: 'https://example.com/y?q=***' }, original)).to.equal(undefined);
    expect(maskedSecretLeft({ ...original, httpHeaders: 'X-Key: ***\nAccept: text/plain' }, original)).to.include({ field: 'httpHeaders' });
    expect(maskedSecretLeft({ ...original, httpHeaders: 'X-Key: k2\r\nAccept: text/plain' }, original)).to.equal(undefined);
    expect(maskedSecretLeft({ url: 'https://***@example.com/' }, undefined), 'a new job').to.equal(undefined);
  });

  it('finds the field an API error names', () => {
    const names = fields.map((f) => f.name);
    expect(fieldOfMessage("expression: unknown word 'banana'", names)).to.equal('expression');
    expect(fieldOfMessage('data[0].url: must not be empty', names)).to.equal('url');
    expect(fieldOfMessage('notifyChannels: channel 9 not found', names)).to.equal('notifyChannels');
    expect(fieldOfMessage('id: is required', names)).to.equal(undefined);
    expect(fieldOfMessage('rate limit exceeded; retry in 1 second', names)).to.equal(undefined);
  });
});

describe('dashboard: a clone of a job', () => {
  it('names the secrets its form cannot copy: the password, masked URL credentials, masked header values', () => {
    expect(secretsNotCopied({ hasPassword: true, url: 'https://***@example.com/x', httpHeaders: 'X-A: ***\nX-B: ***' })).to.deep.equal(['the password', "the URL's credentials", 'the header values']);
    expect(secretsNotCopied({ hasPassword: false, url: 'https://example.com/a***@b', httpHeaders: 'X-Note: 3 *** stars' })).to.deep.equal([]);
  });
  it('stops a masked secret left in a clone, as in a changed field', () => {
    expect(maskedSecretLeft({ url: 'https://***@example.com/', httpHeaders: '' }, {})?.field).to.equal('url');
    expect(maskedSecretLeft({ url: 'https://example.com/', httpHeaders: 'X-A: ***' }, {})?.field).to.equal('httpHeaders');
  });
});

describe('dashboard: schedule preview', () => {
  const now = Date.UTC(2026, 10, 23, 12, 0, 0);
  it('lists the next five runs in the schedule\'s zone, after a description', () => {
    // 12:00 UTC is 07:00 in New York, a Monday: that day's 09:00 is still to come.
    const { text, error } = previewLines('0 9 * * 1-5', 'America/New_York', '', undefined, now);
    expect(error).to.equal(undefined);
    expect(text.slice(1)).to.deep.equal(['2026-11-23 09:00:00', '2026-11-24 09:00:00', '2026-11-25 09:00:00', '2026-11-26 09:00:00', '2026-11-27 09:00:00']);
  });
  it('uses the default expression when none is typed and says when nothing will run', () => {
    expect(previewLines('', 'UTC', '', undefined, now).text).to.have.length(6);
    expect(previewLines('2020-01-01 10:00', 'UTC', '', undefined, now).text.at(-1)).to.equal('no future run');
  });
  it('shows the schedule module\'s message for a bad expression or zone', () => {
    expect(previewLines('every banana', 'UTC', '', undefined, now).error).to.be.a('string').and.not.equal('');
    expect(previewLines('* * * * *', 'Mars/Olympus', '', undefined, now).error).to.match(/time zone/);
  });
});
