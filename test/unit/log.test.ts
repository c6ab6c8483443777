import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createLogger } from '../../shared/log.ts';

/** A destination that keeps every line written to it. */
function capture() {
  const lines: any[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

describe('logger', () => {
  it('writes JSON lines with time, level, service, message and fields', () => {
    const { lines, stream } = capture();
    createLogger('jobs', { mode: 'embedded' }, 'info', stream).child({ component: 'x' }).info('started', { jobs: 3, big: 5n });
    expect(lines).to.have.length(1);
    expect(lines[0]).to.include({ level: 'info', service: 'jobs', mode: 'embedded', component: 'x', msg: 'started', jobs: 3, big: '5' });
    expect(new Date(lines[0].time).toISOString()).to.equal(lines[0].time);
  });

  it('honours the level', () => {
    const { lines, stream } = capture();
    const log = createLogger('t', {}, 'warn', stream);
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.error('e');
    expect(lines.map((l) => l.msg)).to.deep.equal(['w', 'e']);
    const silent = capture();
    createLogger('t', {}, 'silent', silent.stream).error('nothing');
    expect(silent.lines).to.have.length(0);
  });

  it("never writes an account's signing secrets (an account event's field, a due run's target)", () => {
    const { lines, stream } = capture();
    const log = createLogger('t', {}, 'info', stream);
    log.info('event', { data: { signingSecret: 'whsec_aaa', at: 1 } });
    log.warn('run', { run: { target: { signingSecrets: [{ secret: 'whsec_bbb', validUntil: 0 }] } } });
    expect(JSON.stringify(lines)).not.to.include('whsec_');
    expect(lines[0].data).to.include({ signingSecret: '[redacted]', at: 1 });
  });

  it('never writes a password, token, authorization header or URL credentials, at any place', () => {
    const { lines, stream } = capture();
    const log = createLogger('t', {}, 'info', stream);
    const error = new Error('connect to https://alice:s3cret@db.example.com:5432/x failed');
    log.error('request to https://bob:hunter2@example.com/hook failed', {
      password: 'p4ss-top',
      token: 'tok-top',
      job: { id: 1, password: 'p4ss-nested', url: 'https://carol:pw-in-url@example.com/a?b=1', httpHeaders: 'X-Key: hdr-secret' },
      request: { headers: { authorization: 'Bearer tok-header' } },
      urls: ['ftp://dave:pw-in-array@files.example.com/'],
      deep: { a: { b: { c: { password: 'p4ss-deep', token: 'tok-deep' } } } },
      error,
    });
    const text = JSON.stringify(lines);
    for (const secret of ['p4ss-deep', 'tok-deep', 'p4ss-top', 'tok-top', 'p4ss-nested', 'pw-in-url', 'hdr-secret', 'tok-header', 'pw-in-array', 's3cret', 'hunter2', 'alice:', 'bob:']) {
      expect(text, secret).not.to.include(secret);
    }
    const [line] = lines;
    expect(line.password).to.equal('[redacted]');
    expect(line.job.url).to.equal('https://***@example.com/a?b=1');
    expect(line.msg).to.equal('request to https://***@example.com/hook failed');
    expect(line.error.message).to.equal('connect to https://***@db.example.com:5432/x failed');
    expect(line.error.stack).to.be.a('string');
    expect(line.job.id).to.equal(1);
  });
});
