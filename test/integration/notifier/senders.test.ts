import { expect } from 'chai';
import type { Channel, Trigger } from '../../../shared/notify/index.ts';
import { createSenders } from '../../../services/notifier/senders.ts';
import { startReceiver, testSecrets } from './harness.ts';

const NOW = Date.UTC(2026, 10, 23, 12);
const trigger: Trigger = {
  key: 'r1:failed',
  kind: 'failed',
  reasons: ['the run failed'],
  at: NOW,
  fail: 1,
  job: { id: 1, accountId: 1, name: 'job', url: 'https://example.com/1', group: null, groupName: '', failureThreshold: 20, channels: null },
  execution: { runId: 'r1', time: NOW / 1000, failed: true, httpStatus: 502, error: 'HTTP 502', output: '', downloaded: 0, executionTime: 1 },
};
const webhook = (url: string): Channel => ({
  id: 3,
  accountId: 1,
  type: 'webhook',
  name: 'hook',
  address: { url: testSecrets.seal(url) },
  secret: testSecrets.seal('whsec_x'),
  previousSecret: null,
  escalateAfter: 0,
  enabled: true,
  failures: 0,
  lastError: '',
  deleted: false,
  createdAt: NOW,
});

describe('notifier senders: an egress refusal', () => {
  it('tells the account only that its channel\'s address is not allowed, and gives the operator the address', async () => {
    const receiver = await startReceiver();
    const senders = createSenders({ allowNetworks: [], secrets: testSecrets });
    try {
      const port = new URL(receiver.url).port;
      for (const [url, detail] of [
        [`http://localhost:${port}/hook`, /^localhost resolved to (127\.0\.0\.1|::1), a loopback address$/],
        [`http://127.0.0.1:${port}/hook`, /^127\.0\.0\.1 is a loopback address$/],
      ] as const) {
        const outcome = await senders.send(webhook(url), [trigger], NOW, 'msg_1');
        expect(outcome, url).to.include({ ok: false, error: "refused by egress policy: the channel's address is not an allowed target" });
        expect(outcome.detail, url).to.match(detail);
      }
      expect(receiver.received).to.have.length(0);
    } finally {
      await senders.close();
      await receiver.close();
    }
  });
});
