// Fair share: one account's 10,000 jobs call a target that never answers (each call waits out its
// 5 s timeout); another account has one job due on the same two seconds, on the same target. The
// bound: the other account's runs come no later than the usual lateness, next to one undici
// request fired at an instant (the raw yardstick, measured in the same run). Without the share the
// other run waits out the crowd's timeouts behind connections the crowd holds.
// Run: npm run bench -- fairShare   (TOCK_FAIR_CROWD changes the crowd)
import { fairShareScenario } from '../support/fairShareScenario.ts';
import { startTargetProcess } from '../support/targetProcess.ts';
import { bound } from './bound.ts';
import { rawBurst } from './support.ts';

const CROWD = Number(process.env.TOCK_FAIR_CROWD ?? 10_000);
// The crowd's share of calls in flight: small, so the target (sharing this machine) need not
// accept thousands of connections at once for the bench to show the point.
const SHARE = 200;
const LATENESS_BOUND_MS = 300;

const { at, arrivals, stop } = await fairShareScenario(CROWD, SHARE);
try {
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
  await stop();
}
process.exit(process.exitCode ?? 0);
