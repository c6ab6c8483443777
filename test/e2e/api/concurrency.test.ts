import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminService } from '../../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient } from '../../../shared/grpc/bridge.ts';
import { apiClient, ok, type ApiClient } from '../../support/api.ts';
import { TEST_TOKEN } from '../../support/embedded.ts';
import { credentialsOf, distributedEnv, startService, type ServiceProcess } from '../../support/processes.ts';
import { embeddedTarget, streamEvents, type ApiTarget } from '../../support/targets.ts';

/** One edit per field, each to a value no other edit sets: if any update were lost, its value would be missing. */
const EDITS: Record<string, unknown>[] = [
  { name: 'renamed' },
  { timeout: 77 },
  { delay: 9 },
  { instances: 3 },
  { notifyEvery: 4 },
  { failureThreshold: 8 },
  { keyword: 'kw' },
  { pattern: 'pt' },
  { userAgent: 'agent' },
  { notifyMatch: 'nm' },
  { postData: 'a=1' },
  { username: 'user' },
  { notify: false },
  { httpHeaders: 'X-A: 1' },
  { filter: "hour != 3" },
  { notifyTime: 120 },
];
const expected = Object.assign({}, ...EDITS);

/** Polls until `check` passes: another process's view learns new events a poll interval later. */
async function converge<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: never converged; last ${JSON.stringify(value).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('concurrency: ids and updates', function () {
  this.timeout(90_000);

  describe('one process (embedded mode)', () => {
    let target: ApiTarget;
    let api: ApiClient;
    before(async () => {
      target = await embeddedTarget();
      api = await target.newAccount();
    });
    after(() => target.stop());

    it('gives every concurrent add a unique id (single and batch adds, jobs and groups)', async () => {
      const results = await Promise.all([
        ...Array.from({ length: 60 }, (_, i) => ok(api.call('cron_add', { url: `https://example.com/c${i}`, expression: 'manual' }))),
        ...Array.from({ length: 5 }, (_, i) => ok<any[]>(api.call('cron_batch_add', { data: Array.from({ length: 8 }, (_, j) => ({ url: `https://example.com/b${i}/${j}`, expression: 'manual' })) }))),
      ]);
      const ids = results.flat().map((j: any) => j.id);
      expect(ids).to.have.length(100);
      expect(new Set(ids).size).to.equal(100);
      // A batch takes one block of ids, in order.
      for (const batch of results.slice(60) as any[][]) expect(batch.map((j) => j.id - batch[0].id)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
      expect((await ok<any[]>(api.call('cron_list'))).map((j) => j.id).sort((a, b) => a - b)).to.deep.equal([...ids].sort((a, b) => a - b));
      const groups = await Promise.all(Array.from({ length: 20 }, (_, i) => ok(api.call('group_add', { name: `g${i}` }))));
      expect(new Set(groups.map((g) => g.id)).size).to.equal(20);
    });

    it('never loses an update when many edits of one job run at once', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/edit', expression: 'manual' }));
      const answers = await Promise.all(EDITS.map((edit) => api.call('cron_edit', { id: job.id, ...edit })));
      expect(answers.map((a) => a.code)).to.deep.equal(EDITS.map(() => 0));
      expect(await ok(api.call('cron_get', { id: job.id }))).to.include(expected);
      const edited = streamEvents(target.dataDir, `cronjob-${job.id}`).filter((e) => e.type === 'JobEdited');
      expect(edited).to.have.length(EDITS.length);
      for (const e of edited) expect(Object.keys(e.data.changes)).to.have.length(1);
    });

    it('mixes edits with enable/disable/pause on one job without losing either', async () => {
      const job = await ok(api.call('cron_add', { url: 'https://example.com/mixed', expression: 'manual' }));
      await Promise.all([
        ...EDITS.slice(0, 6).map((edit) => ok(api.call('cron_edit', { id: job.id, ...edit }))),
        ok(api.call('cron_disable', { id: job.id })),
      ]);
      const after = await ok(api.call('cron_get', { id: job.id }));
      expect(after).to.include({ ...Object.assign({}, ...EDITS.slice(0, 6)), status: 1 });
    });
  });

  describe('two jobs services and two gateways on one data dir', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tock-two-'));
    const procs: ServiceProcess[] = [];
    let one: ApiClient;
    let two: ApiClient;

    before(async () => {
      // Two deployments of jobs + gateway on one data dir; no planner or logs service runs.
      const env1 = await distributedEnv(dataDir, { NATS_URL: '' });
      const env2 = await distributedEnv(dataDir, { NATS_URL: '' });
      procs.push(...(await Promise.all([startService('jobs', env1, /jobs service listening/), startService('jobs', env2, /jobs service listening/)])));
      procs.push(...(await Promise.all([startService('gateway', env1, /gateway listening/), startService('gateway', env2, /gateway listening/)])));
      const admin = createClient(AdminService, env1.ADMIN_ADDR, credentialsOf(env1, 'admin'));
      await admin.createAccount({ name: 'shared', timezone: 'UTC', token: TEST_TOKEN, jobLimit: 0 });
      admin.close();
      one = apiClient(`http://127.0.0.1:${env1.PORT}`, TEST_TOKEN);
      two = apiClient(`http://127.0.0.1:${env2.PORT}`, TEST_TOKEN);
    });
    after(async () => {
      for (const p of procs.reverse()) await p.kill();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('knows an account created through the other process at once', async () => {
      expect((await ok(two.call('account_get'))).name).to.equal('shared');
    });

    it('hands out unique ids to adds hammering both processes at once', async () => {
      const add = (api: ApiClient, i: number) =>
        i % 10 === 0
          ? ok<any[]>(api.call('cron_batch_add', { data: Array.from({ length: 5 }, (_, j) => ({ url: `https://example.com/${i}/${j}`, expression: 'manual' })) }))
          : ok(api.call('cron_add', { url: `https://example.com/${i}`, expression: 'manual' }));
      const results = await Promise.all(Array.from({ length: 120 }, (_, i) => add(i % 2 ? one : two, i)));
      const ids = results.flat().map((j: any) => j.id);
      expect(ids).to.have.length(108 + 12 * 5);
      expect(new Set(ids).size).to.equal(ids.length);
      const sorted = [...ids].sort((a, b) => a - b);
      for (const api of [one, two]) {
        await converge(() => ok<any[]>(api.call('cron_list')), (list) => list.length === ids.length, 'cron_list');
        expect((await ok<any[]>(api.call('cron_list'))).map((j) => j.id)).to.deep.equal(sorted);
      }
    });

    it('never loses an update when both processes edit one job at once', async () => {
      const job = await ok(one.call('cron_add', { url: 'https://example.com/shared-edit', expression: 'manual' }));
      await converge(() => two.call('cron_get', { id: job.id }), (r) => r.code === 0, 'job seen by the second process');
      const answers = await Promise.all(EDITS.map((edit, i) => (i % 2 ? one : two).call('cron_edit', { id: job.id, ...edit })));
      expect(answers.map((a) => a.code), JSON.stringify(answers.find((a) => a.code))).to.deep.equal(EDITS.map(() => 0));
      for (const api of [one, two]) {
        const final = await converge(() => ok(api.call('cron_get', { id: job.id })), (j) => Object.entries(expected).every(([k, v]) => j[k] === v), 'all edits');
        expect(final).to.include(expected);
      }
      const history = await ok<any[]>(two.call('cron_history', { id: job.id }));
      expect(history.filter((h) => h.type === 'JobEdited')).to.have.length(EDITS.length);
    });
  });
});
