import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { inboxOf } from '../../shared/bus/natsAuth.ts';
import { apiClient, ok, type ApiClient } from '../support/api.ts';
import { runsDrained } from '../support/busDrained.ts';
import { capture } from '../support/capture.ts';
import { startNatsWithUsers, type NatsUser } from '../support/natsServer.ts';
import { distributedEnv, runCli, startService, type DistributedEnv, type ServiceProcess, SERVICE_READY } from '../support/processes.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

const READY: Partial<Record<string, RegExp>> = SERVICE_READY;
const RETRY_AFTER_S = 4;

/**
 * A retry is a message on the bus, not a timer in the executor that made the failed attempt: kill
 * -9 that executor while the retry waits, start another, and the occurrence still completes,
 * once, with both attempts in the logs. Every service its own process, on a NATS of the test's own.
 */
describe('a retry outlives the executor that scheduled it (kill -9, every service its own process)', function () {
  this.timeout(180_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-retry-fault-'));
  const running = new Map<string, ServiceProcess>();
  let nats: Awaited<ReturnType<typeof startNatsWithUsers>>;
  let env: DistributedEnv;
  let api: ApiClient;
  // The first call is refused with 503 and Retry-After, every later one answered 200.
  let calls = 0;
  const target = startTarget((req) => (req.url === '/flaky' && calls++ === 0 ? { status: 503, headers: { 'retry-after': String(RETRY_AFTER_S) } } : { status: 200, body: 'ok' }));

  const start = async (key: string) => {
    const name = key.replace(/-\d+$/, '');
    const user = name === 'gateway' ? {} : nats.envOf(name as NatsUser);
    running.set(key, await startService(name, { ...env, ...user, TOCK_SERVER_NAME: key }, READY[name]!, 120_000));
  };

  before(async () => {
    nats = await startNatsWithUsers();
    env = await distributedEnv(dataDir, { NATS_URL: nats.url, TOCK_ALLOW_NETWORKS: '127.0.0.0/8', LOG_LEVEL: 'info' });
    await Promise.all(['jobs', 'logs', 'executor-1'].map(start));
    await start('planner');
    await start('gateway');
    const created = await runCli(['account', 'create', '--name', 'retry-fault'], env);
    expect(created.code, created.stderr).to.equal(0);
    api = apiClient(`http://127.0.0.1:${env.PORT}`, capture(/token: ([A-Za-z0-9]{32})/, created.stdout));
  });

  after(async () => {
    for (const p of running.values()) await p.kill('SIGKILL');
    await nats?.stop();
    await (await target).close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('completes the occurrence once, on another executor, with every attempt logged', async () => {
    const t = await target;
    const job = await ok<any>(api.call('cron_add', { url: `${t.url}/flaky`, expression: 'manual', retries: 2, retryBackoff: 1 }));
    await ok(api.call('cron_run', { id: job.id }));
    const logsOf = async () => (await ok<any[]>(api.call('cron_logs', { id: job.id }))).map((e) => e.result).reverse();
    // The failed attempt is logged once the next one is on the bus (it is published first).
    const [first] = await waitFor(async () => ((await logsOf()).length >= 1 ? logsOf() : false), 'the first attempt logged', 30_000);
    expect([first.attempt, first.httpStatus, first.willRetry], JSON.stringify([t.received.map((r) => [r.url, r.at, r.headers["x-tock-attempt"]]), await logsOf()])).to.deep.equal([1, 503, true]);
    await running.get('executor-1')!.kill('SIGKILL');
    running.delete('executor-1');
    const killedAt = Date.now();
    expect(t.received.length, 'the retry had not gone out when its executor died').to.equal(1);
    await start('executor-2');

    await waitFor(async () => (await logsOf()).length >= 2, 'the second attempt logged', 60_000);
    // Nothing left on the bus, not even the dead executor's copy of the retry: no doubled attempt can come.
    const nc = await connect({ servers: nats.url, user: 'executor', pass: nats.passwords.executor, inboxPrefix: inboxOf('executor') });
    try {
      await runsDrained(nc);
    } finally {
      await nc.close();
    }
    const seen = t.received.filter((r) => r.url === '/flaky');
    console.log(`      second attempt ${((seen[1]!.at - seen[0]!.at) / 1000).toFixed(1)} s after the first (Retry-After ${RETRY_AFTER_S} s), ${((seen[1]!.at - killedAt) / 1000).toFixed(1)} s after the kill`);
    expect(seen.map((r) => r.headers['x-tock-attempt'] ?? '1'), 'each attempt called once').to.deep.equal(['1', '2']);
    expect(new Set(seen.map((r) => r.headers['x-tock-run-id'])).size, 'one occurrence').to.equal(1);
    expect(seen[1]!.at - seen[0]!.at).to.be.at.least(RETRY_AFTER_S * 1000);
    expect((await logsOf()).map((l) => [l.attempt, l.status, l.httpStatus, l.willRetry])).to.deep.equal([
      [1, 1, 503, true],
      [2, 0, 200, false],
    ]);
    expect((await ok<any>(api.call('cron_get', { id: job.id }))).fail, 'no failure counted').to.equal(0);
  });
});
