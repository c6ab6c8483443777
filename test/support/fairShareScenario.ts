import { ok } from './api.ts';
import { embeddedTarget } from './targets.ts';
import { startTargetProcess, type Arrival } from './targetProcess.ts';
import { waitFor } from './waitFor.ts';

/**
 * The fair-share scenario, shared by its test (a small crowd, what must hold) and its bench (the
 * 10,000-job crowd, how late): one account's `crowd` jobs call a target that never answers (each
 * call waits out its 5 s timeout); another account has one job due on the same two seconds, on the
 * same target. Resolves once the other account's two runs have arrived; the caller stops it.
 */
export async function fairShareScenario(crowdSize: number, share: number) {
  const target = await startTargetProcess();
  await target.warmUp(share, 3);
  const tock = await embeddedTarget({ TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_ACCOUNT_CONCURRENCY: String(share) });
  const stop = async () => {
    await target.stop();
    await tock.stop();
  };
  try {
    const crowd = await tock.newAccount({ name: 'crowd', jobLimit: crowdSize });
    const other = await tock.newAccount({ name: 'other', jobLimit: 10 });
    // The jobs are made without a schedule, then given one for two whole seconds far enough ahead
    // for that one edit to land (how far depends on how fast this machine adds them).
    const started = Date.now();
    const group = await ok<any>(crowd.call('group_add', { name: 'crowd' }));
    for (let b = 0; b < Math.ceil(crowdSize / 1000); b++) {
      const data = Array.from({ length: Math.min(1000, crowdSize) }, (_, i) => ({ url: `${target.url}/hang/${b * 1000 + i}`, expression: 'manual', timezone: 'UTC', timeout: 5, group: group.id }));
      await ok(crowd.call('cron_batch_add', { data }));
    }
    const mine = await ok<any>(other.call('cron_add', { url: `${target.url}/other`, expression: 'manual', timezone: 'UTC' }));
    let at = Math.ceil(Date.now() / 1000) + Math.max(8, Math.ceil((Date.now() - started) / 1000));
    if (new Date(at * 1000).getUTCSeconds() === 59) at += 1;
    const d = new Date(at * 1000);
    const expression = `${d.getUTCSeconds()},${d.getUTCSeconds() + 1} ${d.getUTCMinutes()} ${d.getUTCHours()} * * *`;
    await ok(crowd.call('cron_group_edit', { id: group.id, expression }));
    await ok(other.call('cron_edit', { id: mine.id, expression }));
    if (Date.now() > at * 1000 - 2000) throw new Error('the schedules were set too late for their first run');

    let arrivals: Arrival[] = [];
    await waitFor(async () => {
      arrivals = await target.arrivals();
      return Date.now() > (at + 2) * 1000 && arrivals.filter((a) => a.url === '/other').length >= 2;
    }, "the other account's two runs", (at + 20) * 1000 - Date.now());
    return { at, arrivals, crowd, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
