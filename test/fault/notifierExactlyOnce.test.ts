import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { NotifierService } from '../../shared/gen/tock/v1/notifier_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { createLogger } from '../../shared/log.ts';
import { openStore } from '../../shared/openStore.ts';
import { ensureTopology } from '../../shared/topology.ts';
import { NotifierView } from '../../services/notifier/notifierView.ts';
import { createJob, execute, startReceiver } from '../integration/notifier/harness.ts';
import { batchStream } from '../../shared/notify/index.ts';
import { randomToken } from '../../shared/grpc/grpcAuth.ts';
import { freePort, startService, TEST_SECRET_KEY, type ServiceProcess } from '../support/processes.ts';
import { waitFor } from '../support/waitFor.ts';
import { natsForThisSuite } from '../support/natsServer.ts';

const WINDOW_MS = 4000;
const ACCOUNTS = [1, 2, 3];
const JOBS_PER_ACCOUNT = 20;

/**
 * The notifier as its own process on NATS and a shared SQLite store: killed with SIGKILL while
 * notifications are due (triggers recorded, merge window still open), then started again with a
 * second replica beside it. Every account's channel gets its one merged message, once.
 */
describe('notifier exactly once under kill -9, with a second replica (NATS, SQLite, processes)', function () {
  const nats = natsForThisSuite();
  this.timeout(120_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-notifier-fault-'));
  const procs: ServiceProcess[] = [];
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  // The notifier's gRPC port wants this token, as every distributed service's does.
  const grpcToken = randomToken();
  const startNotifier = async (port: number) => {
    const env = {
      NATS_URL: nats.url,
      TOCK_GRPC_TOKEN: grpcToken,
      // Both replicas seal and open channel secrets with the same key.
      TOCK_SECRET_KEY: TEST_SECRET_KEY,
      DATA_DIR: dataDir,
      NOTIFIER_GRPC_PORT: String(port),
      TOCK_ALLOW_NETWORKS: '127.0.0.0/8',
      TOCK_NOTIFY_WINDOW_MS: String(WINDOW_MS),
      TOCK_NOTIFY_RETRY_MS: '500',
      LOG_LEVEL: 'info',
    };
    const proc = await startService('notifier', env, /notifier listening/, 60_000);
    procs.push(proc);
    return proc;
  };

  after(async () => {
    for (const p of procs) await p.kill('SIGKILL');
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
    await nats.stop();
  });

  it('kill -9 while messages are due, restart plus a second replica: each account gets its one message, once', async () => {
    receiver = await startReceiver();
    const store = await openStore({ DATA_DIR: dataDir, EVENTSTORE_URL: undefined, ESDB_URL: undefined });
    const bus = await connectNatsBus(nats.url, { name: 'notifier-fault-test' });
    await ensureTopology(bus);
    const port1 = await freePort();
    const first = await startNotifier(port1);
    const client = createClient(NotifierService, `127.0.0.1:${port1}`, { token: grpcToken });
    for (const accountId of ACCOUNTS) {
      await client.channelAdd({ accountId: BigInt(accountId), type: 'webhook', url: `${receiver.url}/account/${accountId}` });
      for (let j = 1; j <= JOBS_PER_ACCOUNT; j++) await createJob(store, accountId * 1000 + j, {}, accountId);
    }
    client.close();
    // Each account was notified a moment ago (a decision with nothing left to deliver), so it is
    // not quiet: what fails now is merged until the window after that notification closes.
    for (const accountId of ACCOUNTS) {
      await store.appendToStream(batchStream(accountId), [{ type: 'NotificationDecided', data: { id: `earlier-${accountId}`, accountId, at: Date.now(), triggers: [], routes: [] } }]);
    }
    await new Promise((r) => setTimeout(r, 300));
    for (const accountId of ACCOUNTS) {
      for (let j = 1; j <= JOBS_PER_ACCOUNT; j++) await execute(bus as never, accountId * 1000 + j, true, {}, accountId);
    }
    // Every trigger is recorded (the rules ran and stored their decision), the windows still open.
    await waitFor(async () => {
      let n = 0;
      for (const accountId of ACCOUNTS) for (let j = 1; j <= JOBS_PER_ACCOUNT; j++) n += (await store.readStream(`notifyjob-${accountId * 1000 + j}`)).length ? 1 : 0;
      return n === ACCOUNTS.length * JOBS_PER_ACCOUNT;
    }, 'every trigger recorded', 20_000);
    expect(receiver.received).to.have.length(0);
    await first.kill('SIGKILL');

    await Promise.all([startNotifier(await freePort()), startNotifier(await freePort())]);
    await waitFor(() => receiver.received.length >= ACCOUNTS.length, 'a notification for every account', 30_000);
    // The store holds no trigger left to merge and no delivery left open: no replica has anything
    // left to send, so no duplicate can still come (a second send needs a claim the store refuses).
    const view = new NotifierView();
    await view.start(store, { log: createLogger('notifier-fault-test', {}, 'silent') });
    try {
      await waitFor(() => [...view.pendingByAccount().values()].every((p) => p.size === 0) && [...view.openNotifications()].length === 0, 'every notification merged and delivered', 30_000);
    } finally {
      await view.stop();
    }
    expect(receiver.received.map((r) => r.url).sort()).to.deep.equal(ACCOUNTS.map((a) => `/account/${a}`));
    for (const request of receiver.received) {
      const body = JSON.parse(request.body);
      expect(body.count).to.equal(JOBS_PER_ACCOUNT);
    }
    await bus.close();
    await store.close();
  });
});
