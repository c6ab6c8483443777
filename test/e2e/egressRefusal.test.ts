import { expect } from 'chai';
import { createLogger } from '../../shared/log.ts';
import { ok } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

describe('an egress refusal: the tenant learns that the target is not allowed, the operator where it resolved', function () {
  this.timeout(30_000);

  it('cron_logs says only "not an allowed target"; the operator\'s log has the address and the reason', async () => {
    const target = await startTarget();
    const lines: Array<Record<string, any>> = [];
    const log = createLogger('test', {}, 'warn', { write: (line: string) => void lines.push(JSON.parse(line)) });
    // Loopback is not opened: a job naming this machine must be refused, whatever it is called.
    const system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '' }, log });
    try {
      const port = new URL(target.url).port;
      const job: any = await ok(system.api.call('cron_add', { url: `http://localhost:${port}/internal`, expression: 'manual' }));
      await ok(system.api.call('cron_run', { id: job.id }));
      const [entry] = await waitFor(async () => {
        const list = await ok<any[]>(system.api.call('cron_logs', { id: job.id }));
        return list.length > 0 && list;
      }, 'the run in cron_logs', 10_000);
      expect(entry.result).to.include({ status: 1, httpStatus: 0, ip: '', error: 'refused by egress policy: localhost is not an allowed target' });
      expect(JSON.stringify(entry), 'no address nor reason in the answer').to.not.match(/127\.0\.0\.1|::1|loopback/);
      expect(target.received).to.have.length(0);

      const line = await waitFor(() => lines.find((l) => l.msg === 'job target refused by egress policy'), 'the operator\'s log line', 5000);
      expect(line).to.include({ level: 'warn', jobId: String(job.id), host: 'localhost', reason: 'loopback' });
      expect(line.ip).to.match(/^(127\.0\.0\.1|::1)$/);
    } finally {
      await system.destroy();
      await target.close();
    }
  });
});
