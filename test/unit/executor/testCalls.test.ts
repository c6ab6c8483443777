import { expect } from 'chai';
import { buildRequest, type RunJob } from '../../../services/executor/buildRequest.ts';
import { answerOf, maskAll, secretsOf } from '../../../services/executor/testCalls.ts';
import type { HttpResult } from '../../../services/executor/httpCall.ts';
import { defaultSettings, targetOf } from '../../../shared/job/index.ts';

const job = (over: Partial<RunJob>): RunJob => ({ ...targetOf(defaultSettings('UTC')), id: 0, ...over });
const result = (over: Partial<HttpResult>): HttpResult => ({
  httpStatus: 200,
  output: '',
  downloaded: 0,
  error: '',
  ip: '203.0.113.7',
  startTime: 0,
  executionTime: 0.25,
  connectFailed: false,
  transient: false,
  retryAfter: null,
  ...over,
});

describe('executor: the answer to a test call', () => {
  const j = job({ url: 'https://robot:hunter22@example.com/x', httpHeaders: 'X-Key: k3y-value\nX-Short: ab', password: '', keyword: 'ok' });
  const spec = buildRequest(j, { runId: 'test-1', scheduledAt: 0, payload: null, signing: [{ secret: 'signing-secret-1', validUntil: 0 }], test: true }, { userAgent: 'Tock' });

  it('knows every secret the call sends, longest first, but not those too short to mask', () => {
    expect(spec.headers['X-Tock-Test']).to.equal('1');
    expect(secretsOf(j, spec)).to.have.members(['hunter22', 'robot:hunter22', Buffer.from('robot:hunter22').toString('base64'), 'k3y-value', 'signing-secret-1']);
    const lengths = secretsOf(j, spec).map((s) => s.length);
    expect(lengths).to.deep.equal([...lengths].sort((a, b) => b - a));
  });

  it('masks them in the headers, the body and the error, and judges the result as a run would be', () => {
    const answer = answerOf('t1', j, spec, result({ output: 'ok; you sent robot:hunter22 and k3y-value', headers: { 'x-echo': 'k3y-value', 'set-cookie': ['a=1', 'b=2'] } }), 'exec-1');
    expect(answer).to.include({ testId: 't1', succeeded: true, httpStatus: 200, error: '', output: 'ok; you sent *** and ***', server: 'exec-1', ip: '203.0.113.7' });
    expect(answer.headers).to.deep.equal([{ name: 'x-echo', value: '***' }, { name: 'set-cookie', value: 'a=1' }, { name: 'set-cookie', value: 'b=2' }]);
    expect(answerOf('t2', j, spec, result({ output: 'nothing here' }), 'e').error).to.equal('keyword "ok" not found in the output');
    expect(maskAll('ab ab', ['ab'])).to.equal('*** ***');
  });
});
