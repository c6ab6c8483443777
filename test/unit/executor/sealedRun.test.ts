import { create } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { failedExecution, requestFor } from '../../../services/executor/dueRunMessages.ts';
import { createKeyring, EnvelopeError, secretBox } from '../../../shared/crypto/envelope.ts';
import { DueRunSchema, ExecutionOutcome } from '../../../shared/gen/tock/v1/events_pb.ts';
import { defaultSettings, targetOf } from '../../../shared/job/index.ts';
import { sealSecrets } from '../../../shared/job/index.ts';

const box = secretBox(createKeyring([{ key: Buffer.alloc(32, 5) }]));
const otherBox = secretBox(createKeyring([{ key: Buffer.alloc(32, 6) }]));

const dueRun = (settings: Record<string, unknown>) =>
  create(DueRunSchema, {
    runId: '7:1000',
    target: { jobId: 7n, accountId: 1n, ...targetOf(sealSecrets({ ...defaultSettings('UTC'), ...settings }, box)) },
    scheduledAt: 1000n,
    occurrenceAt: 1000n,
  });

describe('executor: a due run carries job secrets sealed', () => {
  it('opens them for the request only: Authorization and headers as the job says', () => {
    const run = dueRun({ url: 'https://carol:s3cr3t@api.example.com/x', httpHeaders: 'X-Key: abc' });
    expect(run.target!.url).to.not.include('s3cr3t');
    const spec = requestFor(run, 'ua', box);
    expect(spec.url).to.equal('https://api.example.com/x');
    expect(spec.headers.Authorization).to.equal(`Basic ${Buffer.from('carol:s3cr3t').toString('base64')}`);
    expect(spec.headers['X-Key']).to.equal('abc');
  });

  it('an executor without the key refuses to call (EnvelopeError), and the failed execution shows no credential', () => {
    const run = dueRun({ url: 'https://carol:s3cr3t@api.example.com/x', password: 'pw' });
    expect(() => requestFor(run, 'ua', otherBox)).to.throw(EnvelopeError, /does not have/);
    const execution = failedExecution(run, 'exec-1', 2000, 'job secrets: ...');
    expect(execution.outcome).to.equal(ExecutionOutcome.FAILED);
    expect(execution.url).to.equal('https://***@api.example.com/x');
  });
});
