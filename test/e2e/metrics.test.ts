import { expect } from 'chai';
import { ok, rawRequest } from '../support/api.ts';
import { startTestSystem } from '../support/embedded.ts';
import { sampleSum, samples } from '../support/metricsText.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

/** Embedded mode: /metrics on the operations port shows every service, the executor thread's runs included. */
describe('metrics (embedded /metrics on the operations port)', function () {
  this.timeout(30_000);

  for (const thread of ['on', 'off']) {
    it(`counts runs by outcome, their lateness and API calls by function (executor thread ${thread})`, async () => {
      const target = await startTarget((r) => ({ status: r.url.startsWith('/fail') ? 500 : 200 }));
      const system = await startTestSystem({ env: { TOCK_ALLOW_NETWORKS: '127.0.0.0/8', TOCK_EXECUTOR_THREAD: thread } });
      try {
        // Counters of every account together: never on the public port.
        const onPublic = await rawRequest(system.baseUrl, '/metrics', { method: 'GET' });
        expect(onPublic.http).to.equal(404);
        expect(onPublic.text).not.to.include('tock_');
        expect((await rawRequest(system.baseUrl, '/healthz', { method: 'GET' })).http, 'probes keep the public port').to.equal(200);
        const scrape = async () => {
          const r = await rawRequest(system.opsUrl, '/metrics', { method: 'GET' });
          expect(r.http).to.equal(200);
          expect(r.headers.get('content-type')).to.match(/^text\/plain/);
          return r.text;
        };
        const before = await scrape();
        const count = (t: string, name: string, labels: Record<string, string>) => sampleSum(t, name, labels) - sampleSum(before, name, labels);
        const good = await ok<any>(system.api.call('cron_add', { url: `${target.url}/ok`, expression: '* * * * * *' }));
        const bad = await ok<any>(system.api.call('cron_add', { url: `${target.url}/fail`, expression: '* * * * * *' }));
        const text = await waitFor(async () => {
          const t = await scrape();
          return count(t, 'tock_executions_total', { outcome: 'succeeded' }) > 0 && count(t, 'tock_executions_total', { outcome: 'failed' }) > 0 && t;
        }, 'a succeeded and a failed execution in /metrics', 10_000);
        expect(count(text, 'tock_run_lateness_seconds_count', {})).to.be.above(0);
        expect(count(text, 'tock_target_request_duration_seconds_count', { outcome: 'failed' })).to.be.above(0);
        expect(count(text, 'tock_api_request_duration_seconds_count', { function: 'cron_add', code: '0' })).to.equal(2);
        // Appends of the two jobs (and the account).
        expect(count(text, 'tock_eventstore_append_duration_seconds_count', {})).to.be.at.least(2);
        // The planner's figures are summed over every planner of this process, and other systems
        // of this test process may still hold jobs, or stop between two scrapes (a difference
        // from \`before\` then read 0 once in CI, once here). So: this system's planner holds both
        // jobs, and a fresh scrape counts at least its figures.
        const own = system.planner.planner.stats();
        expect(own).to.include({ jobs: 2 });
        expect(own.heap).to.be.at.least(2);
        await waitFor(async () => {
          const t = await scrape();
          return sampleSum(t, 'tock_planner_jobs') >= own.jobs && sampleSum(t, 'tock_planner_heap_entries') >= own.heap;
        }, "this planner's jobs and heap in /metrics", 5000);
        for (const durable of [system.logs.durable, 'jobs-failures']) expect(samples(text, 'tock_bus_consumer_pending_messages', { stream: 'EXECUTIONS', durable })).to.have.length(1);
        expect(samples(text, 'tock_bus_consumer_pending_messages', { stream: 'RUNS', durable: 'executors' })).to.have.length(1);
        expect(samples(text, 'tock_eventstore_catchup_seconds', { category: 'cronjob' }).length + samples(text, 'tock_eventstore_catchup_seconds', { category: '$all' }).length).to.be.above(0);
        expect(text).to.include('# TYPE tock_notifications_total counter');
        expect(sampleSum(text, 'process_cpu_user_seconds_total')).to.be.above(0);
        // Once each, though two threads' registries are merged.
        expect(text.match(/^# TYPE tock_executions_total /gm)).to.have.length(1);

        // An unknown function is counted as 'unknown', never under a name taken from the path.
        await rawRequest(system.baseUrl, '/api/v1/no_such_thing', { method: 'GET' });
        const after = await scrape();
        expect(count(after, 'tock_api_request_duration_seconds_count', { function: 'unknown' })).to.equal(1);
        expect(after).not.to.include('no_such_thing');
        for (const job of [good, bad]) await ok(system.api.call('cron_delete', { id: job.id }));
      } finally {
        await system.destroy();
        await target.close();
      }
    });
  }
});
