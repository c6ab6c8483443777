/**
 * `npm run test:chaos [-- --minutes N] [--seed S] [--keep]`: the distributed mode under a random
 * nemesis (kill -9, SIGSTOP, NATS and PostgreSQL restarts, partitions), then a quiet period, then
 * the checker's verdict from the target's record, cron_logs, the event store and cron_list. Exits 1
 * on any anomaly. Prints the seed first: `--seed` picks the same faults again.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { capture } from '../support/capture.ts';
import { runCli } from '../support/processes.ts';
import { startTarget } from '../support/target.ts';
import { check } from './checker.ts';
import { startCluster, STORE_SCHEMA } from './cluster.ts';
import type { Delivery, FinalJob, History, LogResult, StoreEvent } from './history.ts';
import { createNemesis, seeded } from './nemesis.ts';
import { chaosApi, createEditor, startChaosTarget } from './workload.ts';
import { sleep } from '../support/waitFor.ts';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '3' }, seed: { type: 'string' }, keep: { type: 'boolean', default: false }, quiet: { type: 'string', default: '45' } } });
const minutes = Number(values.minutes);
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
if (!Number.isFinite(minutes) || minutes <= 0 || !Number.isInteger(seed)) throw new Error('usage: test:chaos [-- --minutes N] [--seed S] [--keep] [--quiet SECONDS]');
const print = (line: string) => console.log(`[chaos +${((Date.now() - began) / 1000).toFixed(1)}s] ${line}`);
const began = Date.now();
console.log(`chaos run: seed ${seed}, ${minutes} min of faults (repeat with: npm run test:chaos -- --minutes ${minutes} --seed ${seed})`);

const dir = mkdtempSync(join(tmpdir(), `tock-chaos-${seed}-`));
const random = seeded(seed);
let failed = true;
const cluster = await startCluster(dir);
const target = await startChaosTarget();
const receiver = await startTarget();
try {
  print(`cluster up (logs in ${dir})`);
  const created = await runCli(['account', 'create', '--name', 'chaos'], cluster.env);
  if (created.code !== 0) throw new Error(`account create failed: ${created.stderr}`);
  const token = capture(/token: ([A-Za-z0-9]{32})/, created.stdout);
  const api = chaosApi(cluster.gatewayUrl, token);
  const channel = await api('channel_add', { type: 'webhook', url: `${receiver.url}/hook` });
  if (channel.status !== 'success') throw new Error(`channel_add failed: ${JSON.stringify(channel)}`);
  const editor = createEditor(api, target.url, random, print);
  await editor.setUp(6, 5);
  const fromMs = Date.now() + 2000;
  const faultsUntil = fromMs + minutes * 60_000;
  print(`${editor.jobs.size} jobs added; faults until ${new Date(faultsUntil).toISOString()}`);
  const nemesis = createNemesis(cluster, random, print);
  const over = () => Date.now() >= faultsUntil;
  await Promise.all([nemesis.run(over), editor.run(over)]);
  const toMs = Date.now();
  print(`faults over, every fault healed; quiet for at least ${values.quiet} s`);
  await sleep(Number(values.quiet) * 1000);
  // On a loaded machine runs and their results arrive minutes late: wait until neither the target's
  // record nor cron_logs has grown for 30 s (at most 10 minutes), so what is judged is what stays.
  // Only the judged occurrences count: the jobs keep running every second, so the whole record
  // never stops growing (and waiting on it ran to the 10 minutes every time).
  const judged = (ms: number) => ms <= toMs;
  const progress = async () => {
    let results = 0;
    for (const job of editor.jobs.values()) {
      const got = job.id === undefined ? undefined : await api('cron_logs', { id: job.id, limit: 1000 });
      results += got?.status === 'success' ? (got.data as any[]).filter((e) => judged(e.result.time * 1000)).length : 0;
    }
    return `${(await target.arrivals()).filter((a) => judged(parseInt(a.runId.split(':')[1] ?? '', 10))).length}/${results}`;
  };
  for (let last = '', still = 0, until = Date.now() + 600_000; still < 3 && Date.now() < until; ) {
    const now = await progress();
    still = now === last ? still + 1 : 0;
    last = now;
    if (still < 3) await sleep(10_000);
  }
  print('the target and cron_logs have settled');

  // The record. The services may still be catching up on a loaded machine: a call that is not
  // answered, or answered 503, is asked again for up to two minutes.
  const settled = async (fn: string, params: Record<string, unknown>) => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const got = await api(fn, params);
      if (got.status === 'success' || got.code === 5 || Date.now() > deadline) return got;
      await sleep(1000);
    }
  };
  const arrivals = await target.arrivals();
  const logs: LogResult[] = [];
  const logsFrom: Record<string, number> = {};
  for (const [key, job] of editor.jobs) {
    if (job.id === undefined) continue;
    const entries: any[] = [];
    for (let page = 1; ; page++) {
      const got = await settled('cron_logs', { id: job.id, limit: 1000, page });
      if (got.status !== 'success') {
        if (got.code !== 5) throw new Error(`cron_logs of job ${job.id} failed: ${JSON.stringify(got)}`);
        // A deleted job's results are no longer served: its runs are judged from the target alone.
        logsFrom[key] = Number.POSITIVE_INFINITY;
        break;
      }
      entries.push(...(got.data as any[]));
      if ((got.data as any[]).length < 1000) break;
    }
    for (const { result: r } of entries) logs.push({ key, time: r.time, status: r.status, httpStatus: r.httpStatus, error: r.error, missed: r.missed ?? 0 });
  }
  const listed = await settled('cron_list', { limit: 1000 });
  if (listed.status !== 'success') throw new Error(`final cron_list failed: ${JSON.stringify(listed)}`);
  const finalJobs: FinalJob[] = (listed.data as any[]).map((j) => ({ id: j.id, path: new URL(j.url).pathname, expression: j.expression, status: j.status }));
  const store: StoreEvent[] = (
    await cluster.query<{ stream: string; type: string; at: string | null }>(`SELECT stream, type, data->>'at' AS at FROM ${STORE_SCHEMA}.events WHERE stream LIKE 'cronjob-%' ORDER BY position`)
  ).map((e) => ({ jobId: Number(e.stream.slice('cronjob-'.length)), type: e.type, at: Number(e.at) }));
  const deliveries: Delivery[] = receiver.received.map((r) => {
    const body = JSON.parse(r.body);
    return { at: r.at, items: (body.notifications as any[]).map((n) => ({ id: n.id, time: n.time, event: n.event })) };
  });
  const history: History = { fromMs, toMs, ops: editor.ops, arrivals, logs, logsFrom, store, finalJobs, deliveries, faults: nemesis.faults, misfireMs: 10_000 };
  writeFileSync(join(dir, 'history.json'), JSON.stringify({ seed, ...history }, null, 1));
  const verdict = check(history);

  console.log(`\nseed ${seed}`);
  console.log(`faults injected (${nemesis.faults.length}):`);
  for (const f of nemesis.faults) console.log(`  ${f.kind.padEnd(16)} ${f.target.padEnd(20)} ${new Date(f.startMs).toISOString()} .. ${new Date(f.endMs).toISOString()}`);
  console.log(`operations: ${editor.ops.length} (${editor.ops.filter((o) => !o.acknowledged).length} not acknowledged, read back)`);
  console.log(`occurrences checked: ${JSON.stringify(verdict.occurrences)}; target calls ${arrivals.length}, cron_logs results ${logs.length}, store events ${store.length}`);
  console.log(`repeated with the same run id (at-least-once exception): ${verdict.redelivered.total} ${JSON.stringify(verdict.redelivered.byFault)}`);
  console.log(`notifications: ${JSON.stringify(verdict.notifications)}`);
  const byKind = new Map<string, number>();
  for (const a of verdict.anomalies) byKind.set(a.kind, (byKind.get(a.kind) ?? 0) + 1);
  console.log(`anomalies: ${verdict.anomalies.length} ${JSON.stringify(Object.fromEntries(byKind))}`);
  for (const a of verdict.anomalies.slice(0, 200)) console.log(`  ${a.kind}: ${a.detail}`);
  failed = verdict.anomalies.length > 0 || verdict.occurrences.ran === 0;
  if (verdict.occurrences.ran === 0) console.log('nothing ran: the run proves nothing');
  // One paragraph to quote: the seed, what was done to the system, what was checked, what broke.
  const faultKinds = new Map<string, number>();
  for (const f of nemesis.faults) faultKinds.set(f.kind, (faultKinds.get(f.kind) ?? 0) + 1);
  const { checked, required, optional, ran, collapsed } = verdict.occurrences;
  console.log(`\n== chaos summary: ${failed ? 'FAILED' : 'passed'}`);
  console.log(`seed ${seed}, ${minutes} min of faults; faults injected: ${nemesis.faults.length} (${[...faultKinds].map(([k, n]) => `${k} ${n}`).join(', ')})`);
  console.log(`occurrences checked: ${checked} (${required} required, ${optional} optional; ${ran} ran, ${collapsed} collapsed into a late run); API operations ${editor.ops.length}; notifications ${verdict.notifications.items} items in ${verdict.notifications.messages} messages`);
  console.log(`runs repeated with the same run id near an executor or NATS fault (the at-least-once exception): ${verdict.redelivered.total}`);
  console.log(`anomalies: ${verdict.anomalies.length}${byKind.size ? ` (${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')})` : ''}`);
} finally {
  target.stop();
  await receiver.close();
  await cluster.close();
  if (failed || values.keep) console.log(`history and service logs kept in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
