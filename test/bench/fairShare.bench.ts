// Fair share: one account's 10,000 jobs call a target that never answers (each call waits out its
// 5 s timeout); another account has one job due on the same two seconds, on the same target. The
// bound: the other account's runs come no later than the usual lateness, next to one undici
// request fired at an instant (the raw yardstick, measured in the same run). Without the share the
// other run waits out the crowd's timeouts behind connections the crowd holds.
// Run: npm run bench -- fairShare   (TOCK_FAIR_CROWD changes the crowd)
import { ok } from '../support/api.ts';
import { waitFor } from '../support/waitFor.ts';
import { embeddedTarget } from '../support/targets.ts';
import { startTargetProcess } from '../support/targetProcess.ts';
import { bound } from './bound.ts';
import { rawBurst } from './support.ts';

const CROWD = Number(process.env.TOCK_FAIR_CROWD ?? 10_000);
// The crowd's share of calls in flight: small, so the target (sharing this machine) need not
// accept thousands of connections at once for the bench to show the point.
const SHARE = 200;
const LATENESS_BOUND_MS = 300;

const target = await startTargetProcess();
await target.warmUp(SHARE, 3);
const tock = await embeddedTarget({ TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_ACCOUNT_CONCURRENCY: String(SHARE) });
try {
  const crowd = await tock.newAccount({ name: 'crowd', jobLimit: CROWD });
  const other = await tock.newAccount({ name: 'other', jobLimit: 10 });
  // The jobs are made without a schedule, then given one for two whole seconds far enough ahead
  // for that one edit to land (how far depends on how fast this machine adds them).
  const started = Date.now();
  const group = await ok<any>(crowd.call('group_add', { name: 'crowd' }));
  for (let b = 0; b < Math.ceil(CROWD / 1000); b++) {
    const data = Array.from({ length: Math.min(1000, CROWD) }, (_, i) => ({ url: `${target.url}/hang/${b * 1000 + i}`, expression: 'manual', timezone: 'UTC', timeout: 5, group: group.id }));
    await ok(crowd.call('cron_batch_add', { data }));
  }
  const mine0 = await ok<any>(other.call('cron_add', { url: `${target.url}/other`, expression: 'manual', timezone: 'UTC' }));
  let at = Math.ceil(Date.now() / 1000) + Math.max(8, Math.ceil((Date.now() - started) / 1000));
  if (new Date(at * 1000).getUTCSeconds() === 59) at += 1;
  const d = new Date(at * 1000);
  const expression = `${d.getUTCSeconds()},${d.getUTCSeconds() + 1} ${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
  await ok(crowd.call('cron_group_edit', { id: group.id, expression }));
  await ok(other.call('cron_edit', { id: mine0.id, expression }));
  if (Date.now() > at * 1000 - 2000) throw new Error('the schedules were set too late for their first run');

  let arrivals = await target.arrivals();
  await waitFor(async () => {
    arrivals = await target.arrivals();
    return Date.now() > (at + 2) * 1000 && arrivals.filter((a) => a.url === '/other').length >= 2;
  }, "the other account's two runs", (at + 20) * 1000 - Date.now());
  const lateness = arrivals.filter((a) => a.url === '/other').map((a) => a.at - Number(a.scheduled) * 1000);
  const crowdCalls = arrivals.filter((a) => a.url.startsWith('/hang/') && Number(a.scheduled) >= at).length;

  const rawTarget = await startTargetProcess();
  const instant = Math.ceil(Date.now() / 1000) * 1000 + 1000;
  await rawBurst(rawTarget.url, 1, instant);
  const raw = (await rawTarget.arrivals()).filter((a) => a.url.startsWith('/raw/')).map((a) => a.at - instant);
  await rawTarget.stop();

  console.log(`${CROWD} hanging jobs of one account (share ${SHARE} calls in flight), one job of another, due on the same two seconds:`);
  console.log(`  raw undici, one request at an instant: ${raw.join(', ')} ms late`);
  console.log(`  the other account's runs: ${lateness.map((l) => `${l} ms`).join(', ')} late; the crowd's calls that reached the target: ${crowdCalls}`);
  bound("the other account's latest run", Math.max(...lateness), LATENESS_BOUND_MS);
  bound("the crowd's calls in flight beyond its share", crowdCalls - SHARE, 1, 'calls');
} finally {
  await target.stop();
  await tock.stop();
}
process.exit(process.exitCode ?? 0);
