import { expect } from 'chai';
import { hashToken } from '../../../services/jobs/account.ts';
import { sharedReads } from '../../../services/gateway/sharedReads.ts';
import type { Clients } from '../../../services/gateway/call.ts';
import { apiClient, ok } from '../../support/api.ts';
import { embeddedTarget } from '../../support/targets.ts';

type Target = Awaited<ReturnType<typeof embeddedTarget>>;

/** The real clients, counting the calls that reach each service by method name. */
function counted(clients: Clients) {
  const calls: Record<string, number> = {};
  const wrap = <T extends object>(client: T): T =>
    new Proxy(client, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function' || name === 'close') return value;
        return (...args: unknown[]) => {
          calls[String(name)] = (calls[String(name)] ?? 0) + 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return { calls, clients: { jobs: wrap(clients.jobs), planner: wrap(clients.planner!), logs: wrap(clients.logs!) } satisfies Clients };
}

/** A promise's value, or its error's kind and message: what a request would be answered. */
const outcome = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (e: { kind?: string; message?: string }) => ({ error: `${e.kind}: ${e.message}` }),
  );

describe('the gateway shares the reads of concurrent requests (real services, embedded)', function () {
  this.timeout(60_000);
  let target: Target;
  const accounts: { id: bigint; tokenHash: string; jobs: bigint[] }[] = [];

  before(async () => {
    target = await embeddedTarget();
    for (const count of [3, 1]) {
      const { account, token } = await target.admin.createAccount({ name: `shared${count}`, timezone: 'UTC', jobLimit: 0 });
      const api = apiClient(target.baseUrl, token);
      const jobs = await ok<{ id: number }[]>(api.call('cron_batch_add', { data: Array.from({ length: count }, (_, i) => ({ url: `https://example.com/${count}/${i}`, expression: '0 3 * * *' })) }));
      accounts.push({ id: account!.id, tokenHash: hashToken(token), jobs: jobs.map((j) => BigInt(j.id)) });
      // The first account's last job deleted: reads must answer it as they would alone.
      if (count === 3) await ok(api.call('cron_delete', { id: jobs[2]!.id }));
    }
  });
  after(() => target.stop());

  it('checks each token once per turn, and answers every request as its own call would', async () => {
    const { calls, clients } = counted(target.system.clients);
    const shared = sharedReads(clients);
    const [a, b] = accounts;
    const hashes = [a!.tokenHash, b!.tokenHash, a!.tokenHash, hashToken('Nope0123456789abcdefghijklmnopqr'), a!.tokenHash];
    const answers = await Promise.all(hashes.map((tokenHash) => outcome(shared.jobs.authenticate({ tokenHash }))));
    const alone = await Promise.all(hashes.map((tokenHash) => outcome(target.jobs.authenticate({ tokenHash }))));
    expect(answers).to.deep.equal(alone);
    expect(answers[3]).to.have.property('error').that.matches(/^UNAUTHENTICATED/);
    expect(calls.authenticate).to.equal(3);
  });

  it("reads one account's jobs in one call; a job it does not have gets GetJob's own error", async () => {
    const { calls, clients } = counted(target.system.clients);
    const shared = sharedReads(clients);
    const [a, b] = accounts;
    const asks = [
      { accountId: a!.id, id: a!.jobs[0]! },
      { accountId: a!.id, id: a!.jobs[1]! },
      { accountId: a!.id, id: a!.jobs[0]! },
      { accountId: a!.id, id: b!.jobs[0]! },
      { accountId: a!.id, id: 987_654n },
      { accountId: b!.id, id: b!.jobs[0]! },
    ];
    const answers = await Promise.all(asks.map((r) => outcome(shared.jobs.getJob(r))));
    const alone = await Promise.all(asks.map((r) => outcome(target.jobs.getJob(r))));
    expect(answers).to.deep.equal(alone);
    expect(answers[3]).to.have.property('error').that.matches(/^NOT_FOUND/);
    // Account a: one GetJobs, then a GetJob each for the two it does not have; account b: one GetJob.
    expect(calls).to.include({ getJobs: 1, getJob: 3 });
  });

  it("asks the planner and the logs once per account for the union of the jobs, and gives each request its own", async () => {
    const { calls, clients } = counted(target.system.clients);
    const shared = sharedReads(clients);
    const [a, b] = accounts;
    const [j0, j1, j2] = a!.jobs as [bigint, bigint, bigint];
    const next = [
      { accountId: a!.id, ids: [j0, j1] },
      { accountId: a!.id, ids: [j1, j2, 5555n] },
      { accountId: b!.id, ids: b!.jobs },
    ];
    const many = Array.from({ length: 150 }, (_, i) => BigInt(i + 1));
    const since = BigInt(Math.floor(Date.now() / 1000) - 86_400);
    const summaries = [
      { accountId: a!.id, ids: many.slice(0, 90), recent: 20, since, hoursFrom: 0n, hours: 0 },
      { accountId: a!.id, ids: many.slice(60), recent: 20, since, hoursFrom: 0n, hours: 0 },
      { accountId: a!.id, ids: [j0], recent: 5, since, hoursFrom: 0n, hours: 0 },
    ];
    const [nextShared, summariesShared] = await Promise.all([
      Promise.all(next.map((r) => shared.planner!.nextRunOf(r))),
      Promise.all(summaries.map((r) => shared.logs!.summaries(r))),
    ]);
    expect(nextShared).to.deep.equal(await Promise.all(next.map((r) => target.system.clients.planner.nextRunOf(r))));
    expect(summariesShared).to.deep.equal(await Promise.all(summaries.map((r) => target.system.clients.logs.summaries(r))));
    expect(nextShared[0]!.nextRuns.every((s) => s > 0n)).to.equal(true);
    // nextRunOf: one per account. summaries: the two alike share 150 jobs in two calls of at most 100; the third asks another question.
    expect(calls).to.include({ nextRunOf: 2, summaries: 3 });
  });
});
