// chai 6 ships no type declarations and @types/chai is not installed (yet); expect is `any` until then.
import { expect } from 'chai';
import fc from 'fast-check';
import type { HttpResult } from '../../../services/executor/httpCall.ts';
import { judge } from '../../../services/executor/judge.ts';
import { OutputCapture, TRUNCATION_MARKER } from '../../../services/executor/outputCapture.ts';

function result(over: Partial<HttpResult> = {}): HttpResult {
  return { httpStatus: 200, output: 'all good', downloaded: 8, error: '', ip: '203.0.113.5', startTime: 0, executionTime: 0.1, connectFailed: false, transient: false, retryAfter: null, ...over };
}
const none = { keyword: '', pattern: '' };

describe('judge', () => {
  it('passes any 2xx without keyword or pattern', () => {
    for (const httpStatus of [200, 201, 204, 299]) expect(judge(result({ httpStatus }), none)).to.deep.equal({ ok: true, error: '' });
  });

  it('fails other statuses with "HTTP <status>"', () => {
    expect(judge(result({ httpStatus: 503 }), none)).to.deep.equal({ ok: false, error: 'HTTP 503' });
    expect(judge(result({ httpStatus: 302 }), none)).to.deep.equal({ ok: false, error: 'HTTP 302' });
    expect(judge(result({ httpStatus: 404 }), none).error).to.equal('HTTP 404');
  });

  it('fails with the transport error when there is one, even after a 200', () => {
    expect(judge(result({ httpStatus: 0, error: 'connection refused by 10.0.0.1:80' }), none)).to.deep.equal({
      ok: false,
      error: 'connection refused by 10.0.0.1:80',
    });
    expect(judge(result({ httpStatus: 200, error: 'timed out after 1 s while reading the body' }), none).ok).to.equal(false);
    expect(judge(result({ httpStatus: 0 }), none)).to.deep.equal({ ok: false, error: 'no HTTP response' });
  });

  it('requires the keyword in the output', () => {
    expect(judge(result({ output: 'status: ok' }), { keyword: 'ok', pattern: '' }).ok).to.equal(true);
    expect(judge(result({ output: 'status: bad' }), { keyword: 'ok', pattern: '' })).to.deep.equal({
      ok: false,
      error: 'keyword "ok" not found in the output',
    });
  });

  it('fails when the pattern is in the output', () => {
    expect(judge(result({ output: 'fine' }), { keyword: '', pattern: 'ERROR' }).ok).to.equal(true);
    expect(judge(result({ output: 'an ERROR here' }), { keyword: '', pattern: 'ERROR' })).to.deep.equal({
      ok: false,
      error: 'pattern "ERROR" found in the output',
    });
  });

  it('checks status before keyword, keyword before pattern', () => {
    expect(judge(result({ httpStatus: 500, output: 'ERROR' }), { keyword: 'ok', pattern: 'ERROR' }).error).to.equal('HTTP 500');
    expect(judge(result({ output: 'ERROR' }), { keyword: 'ok', pattern: 'ERROR' }).error).to.match(/^keyword/);
    expect(judge(result({ output: 'ok ERROR' }), { keyword: 'ok', pattern: 'ERROR' }).error).to.match(/^pattern/);
  });

  it('finds a keyword in the kept tail but never in the marker Tock inserted', () => {
    const output = `head${TRUNCATION_MARKER}tail ok`;
    expect(judge(result({ output }), { keyword: 'ok', pattern: '' }).ok).to.equal(true);
    expect(judge(result({ output }), { keyword: '', pattern: 'truncated' }).ok).to.equal(true);
  });
});

describe('OutputCapture', () => {
  const feed = (chunks: Buffer[]) => {
    const c = new OutputCapture();
    for (const chunk of chunks) c.push(chunk);
    return c;
  };

  it('keeps a body up to 8 KiB whole', () => {
    const body = Buffer.from('x'.repeat(8192));
    const c = feed([body.subarray(0, 100), body.subarray(100)]);
    expect(c.text()).to.equal(body.toString());
    expect(c.total).to.equal(8192);
  });

  it('keeps the first and last 4 KiB of a larger body, with the marker between', () => {
    const body = Buffer.concat([Buffer.alloc(4096, 'a'), Buffer.alloc(10_000, 'm'), Buffer.alloc(4096, 'z')]);
    const c = feed([body.subarray(0, 3000), body.subarray(3000, 9000), body.subarray(9000, 9001), body.subarray(9001)]);
    expect(c.total).to.equal(body.length);
    expect(c.text()).to.equal('a'.repeat(4096) + TRUNCATION_MARKER + 'z'.repeat(4096));
  });

  it('matches the reference for any chunking', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 6000 }), { maxLength: 8 }), (parts) => {
        const all = Buffer.concat(parts.map((p) => Buffer.from(p)));
        const c = feed(parts.map((p) => Buffer.from(p)));
        expect(c.total).to.equal(all.length);
        const expected =
          all.length <= 8192 ? all.toString('utf8') : all.subarray(0, 4096).toString('utf8') + TRUNCATION_MARKER + all.subarray(-4096).toString('utf8');
        expect(c.text()).to.equal(expected);
      }),
    );
  });
});
