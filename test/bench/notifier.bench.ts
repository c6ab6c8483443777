/**
 * Notifier: failed executions turned into recorded triggers per second (one load/decide/append on
 * the job's notification stream each), healthy runs settled per second (the fast path: no store
 * access), and the time from 500 jobs failing at once to the one merged webhook arriving; next to
 * a yardstick measured in the same run: bare appends of one event to as many fresh streams of the
 * same SQLite store.
 *
 * Run: npx tsx test/bench/notifier.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInProcessBus } from '../../shared/bus/inProcessBus.ts';
import { systemClock } from '../../shared/clock.ts';
import { createLogger } from '../../shared/log.ts';
import { openStore } from '../../shared/openStore.ts';
import { ensureTopology } from '../../shared/topology.ts';
import { startNotifierService } from '../../services/notifier/service.ts';
import { createJob, execute, startReceiver, testSecrets } from '../integration/notifier/harness.ts';
import { waitFor } from '../support/waitFor.ts';

const FAILURES = 2000;
const SUCCESSES = 20_000;
const BURST = 500;

const dataDir = mkdtempSync(join(tmpdir(), 'tock-notifier-bench-'));
const store = await openStore({ DATA_DIR: dataDir, EVENTSTORE_URL: undefined, ESDB_URL: undefined });
const bus = createInProcessBus();
await ensureTopology(bus);

let t = performance.now();
for (let i = 0; i < FAILURES; i++) await store.appendToStream(`yardstick-${i}`, [{ type: 'X', data: { i } }]);
const yardstick = FAILURES / ((performance.now() - t) / 1000);

const receiver = await startReceiver();
const notifier = await startNotifierService({
  store,
  secrets: testSecrets,
  bus,
  clock: systemClock,
  log: createLogger('bench', {}, 'silent'),
  address: '127.0.0.1:0',
  allowNetworks: ['127.0.0.0/8'],
  windowMs: 1000,
});
await notifier.channels.add(1, { type: 'webhook', name: 'bench', address: { url: receiver.url } });
for (let i = 1; i <= FAILURES + BURST; i++) await createJob(store, i, { notifyEvery: 100 });
await waitFor(() => notifier.view.facts(FAILURES + BURST), 'the notifier view to hold every job', 60_000);

// Failures with notifyEvery 100: every one is a load/decide/append, none a notification.
t = performance.now();
for (let i = 1; i <= FAILURES; i++) await execute(bus, i, true);
await waitFor(async () => (await store.readStream(`notifyjob-${FAILURES}`)).length > 0, 'the last failing job\'s notification', 120_000);
const failuresPerSecond = FAILURES / ((performance.now() - t) / 1000);

// Healthy runs of plain jobs: settled from the subject and the view.
t = performance.now();
const before = (await store.readStream(`notifyjob-1`)).length;
for (let i = 0; i < SUCCESSES; i++) await execute(bus, FAILURES + BURST, false);
await execute(bus, 1, false); // job 1 has a failure on record: this one is decided, and marks the end
await waitFor(async () => (await store.readStream(`notifyjob-1`)).length > before, 'another notification of job 1', 120_000);
const successesPerSecond = SUCCESSES / ((performance.now() - t) / 1000);

// 500 jobs failing at once, each notifying on its first failure: one merged webhook.
const burstJobs = Array.from({ length: BURST }, (_, i) => FAILURES + 1 + i);
for (const id of burstJobs) await store.appendToStream(`cronjob-${id}`, [{ type: 'JobEdited', data: { changes: { notifyEvery: 1 }, at: Date.now() } }]);
await waitFor(() => notifier.view.facts(burstJobs.at(-1)!)?.notifyEvery === 1, 'the burst jobs\' settings in the view', 30_000);
t = performance.now();
for (const id of burstJobs) await execute(bus, id, true);
await waitFor(() => receiver.received.length > 0, 'a request at the receiver', 120_000);
const burstMs = performance.now() - t;
await new Promise((r) => setTimeout(r, 2000));

console.log(`yardstick: bare appends to fresh streams   ${yardstick.toFixed(0)} /s`);
console.log(`failed executions recorded                 ${failuresPerSecond.toFixed(0)} /s (${((failuresPerSecond / yardstick) * 100).toFixed(0)} % of the yardstick)`);
console.log(`healthy executions settled                 ${successesPerSecond.toFixed(0)} /s`);
console.log(`${BURST} jobs failing at once -> webhooks         ${receiver.received.length} request(s), ${JSON.parse(receiver.received[0]!.body).count} jobs in the first, ${(burstMs - 1000).toFixed(0)} ms after the 1 s merge window`);

await notifier.stop();
await receiver.close();
await bus.close();
await store.close();
rmSync(dataDir, { recursive: true, force: true });
