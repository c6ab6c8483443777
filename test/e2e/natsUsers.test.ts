import { expect } from 'chai';
import { jetstream, jetstreamManager, AckPolicy } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboxOf } from '../../shared/bus/natsAuth.ts';
import { apiClient, ok } from '../support/api.ts';
import { runsDrained } from '../support/busDrained.ts';
import { startNatsWithUsers, type NatsUser } from '../support/natsServer.ts';
import { capture } from '../support/capture.ts';
import { distributedEnv, runCli, startService, type ServiceProcess } from '../support/processes.ts';
import { startTarget } from '../support/target.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * deploy/k8s/base/nats.conf on a real nats-server: every Tock service runs as its own user and the
 * system works end to end; a user that tries a subject not its own is refused.
 */
describe('NATS users with least privilege (deploy/k8s/base/nats.conf on a real nats-server)', function () {
  this.timeout(180_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-nats-users-'));
  let nats: Awaited<ReturnType<typeof startNatsWithUsers>>;
  const procs: ServiceProcess[] = [];
  const conns: NatsConnection[] = [];
  let target: Awaited<ReturnType<typeof startTarget>>;

  const as = async (user: NatsUser, inboxPrefix = user === 'subscriber' ? undefined : inboxOf(user)) => {
    const nc = await connect({ servers: nats.url, user, pass: nats.passwords[user], inboxPrefix, timeout: 5_000 });
    conns.push(nc);
    return nc;
  };
  const runsKept = async () => (await (await jetstreamManager(await as('planner'))).streams.info('RUNS')).state.messages;
  const executionsKept = async () => (await (await jetstreamManager(await as('jobs'))).streams.info('EXECUTIONS')).state.messages;

  before(async () => {
    nats = await startNatsWithUsers();
    target = await startTarget();
  });
  after(async () => {
    for (const nc of conns) await nc.close().catch(() => undefined);
    for (const p of procs.reverse()) await p.kill();
    await target?.close();
    await nats?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs the whole system with each service as its own user: a job runs and its execution is in the logs', async () => {
    const env = await distributedEnv(dataDir, { NATS_URL: nats.url, TOCK_ALLOW_NETWORKS: '127.0.0.0/8' });
    const start = (name: string, user: NatsUser, ready: RegExp) => startService(name, { ...env, ...nats.envOf(user) }, ready, 120_000);
    // Each kept as soon as it is up, so a slow one failing leaves none of the others running.
    const kept = (p: Promise<ServiceProcess>) => p.then((proc) => void procs.push(proc));
    await Promise.all([
      kept(start('jobs', 'jobs', /jobs service listening/)),
      kept(start('logs', 'logs', /logs service listening/)),
      kept(start('planner', 'planner', /planner service listening/)),
      kept(start('executor', 'executor', /executor consuming due runs/)),
    ]);
    procs.push(await startService('gateway', env, /gateway listening/));
    const created = await runCli(['account', 'create', '--name', 'nats-users'], env);
    expect(created.code, created.stderr).to.equal(0);
    const api = apiClient(`http://127.0.0.1:${env.PORT}`, capture(/token: ([A-Za-z0-9]{32})/, created.stdout));
    const job = await ok<any>(api.call('cron_add', { url: `${target.url}/users`, expression: '* * * * * *', instances: 1 }));
    await waitFor(() => target.received.length >= 2, 'the job to be called', 30_000);
    const logs = await waitFor(async () => {
      const entries = await ok<any[]>(api.call('cron_logs', { id: job.id }));
      return entries.length >= 2 && entries;
    }, 'executions in cron_logs', 30_000);
    expect(logs[0].result).to.include({ status: 0, httpStatus: 200 });
    // cron_test: the jobs user asks on tock.runs.test.>, the executor user answers on tock.tests.answer.>.
    const tested = await ok<any>(api.call('cron_test', { url: `${target.url}/tested` }));
    expect(tested).to.include({ status: 0, httpStatus: 200 });
    expect(target.received.filter((r) => r.url === '/tested')).to.have.length(1);
    // Stop the job (and let runs already on the bus drain) so the stream counts below hold still.
    await ok(api.call('cron_delete', { id: job.id }));
    await runsDrained(await as('executor'));
  });

  it("refuses the executor's user publishing a due run, and keeps none", async () => {
    const before = await runsKept();
    const js = jetstream(await as('executor'));
    const error = await js.publish('tock.runs.due.1', new Uint8Array([1]), { timeout: 3_000 }).then(() => null, (e: Error) => e);
    expect(error, 'the publish went through').to.be.instanceOf(Error);
    expect(String(error)).to.match(/permission/i);
    expect(await runsKept()).to.be.at.most(before);
  });

  it('refuses a subscriber (and the jobs service) publishing an execution', async () => {
    const before = await executionsKept();
    for (const user of ['subscriber', 'jobs'] as const) {
      const js = jetstream(await as(user));
      const error = await js.publish('tock.executions.1.1.failed', new Uint8Array([1]), { timeout: 3_000 }).then(() => null, (e: Error) => e);
      expect(error, `${user} published`).to.be.instanceOf(Error);
      expect(String(error)).to.match(/permission/i);
    }
    expect(await executionsKept()).to.equal(before);
  });

  it('lets a subscriber create, read, pull from, ack and delete a consumer of its own (sub-...)', async () => {
    const nc = await as('subscriber');
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add('EXECUTIONS', { durable_name: 'sub-executions', ack_policy: AckPolicy.Explicit, filter_subject: 'tock.executions.>' });
    const consumer = await jetstream(nc).consumers.get('EXECUTIONS', 'sub-executions');
    let read = 0;
    for await (const m of await consumer.fetch({ max_messages: 1, expires: 5_000 })) {
      read++;
      await m.ackAck();
    }
    expect(read).to.equal(1);
    expect((await jsm.consumers.info('EXECUTIONS', 'sub-executions')).ack_floor.stream_seq, 'the ack counted').to.be.at.least(1);
    expect(await jsm.consumers.delete('EXECUTIONS', 'sub-executions')).to.equal(true);
    expect(await jsm.consumers.info('EXECUTIONS', 'sub-executions').then(() => 'still there', (e: Error) => String(e))).to.match(/consumer not found/i);
  });

  it("refuses a subscriber every other consumer: Tock's own (the logs durable, jobs-failures) and names not given to it", async () => {
    const logsDurable = capture(/"durable":"(logs-[0-9a-f]+)"/, procs.find((p) => p.name === 'logs')!.output.join(''));
    const tockConsumers = async () => {
      const jsm = await jetstreamManager(await as('logs'));
      return Promise.all([logsDurable, 'jobs-failures'].map(async (name) => {
        const { created, config } = await jsm.consumers.info('EXECUTIONS', name);
        return { name, created, config };
      }));
    };
    const before = await tockConsumers();
    const nc = await as('subscriber');
    const jsm = await jetstreamManager(nc, { timeout: 3_000 });
    const refused = (what: string, attempt: Promise<unknown>) =>
      attempt.then(
        () => expect.fail(`${what} went through`),
        (e: Error) => expect(String(e), what).to.match(/permission/i),
      );
    for (const name of [logsDurable, 'jobs-failures', 'notifier', 'third-party', 'sub-not-listed']) {
      await refused(`info of ${name}`, jsm.consumers.info('EXECUTIONS', name));
      await refused(`delete of ${name}`, jsm.consumers.delete('EXECUTIONS', name));
      await refused(`create of ${name}`, jsm.consumers.add('EXECUTIONS', { durable_name: name, ack_policy: AckPolicy.Explicit, filter_subject: 'tock.executions.>' }));
      await refused(`pull from ${name}`, nc.request(`$JS.API.CONSUMER.MSG.NEXT.EXECUTIONS.${name}`, JSON.stringify({ batch: 1, expires: 1_000_000_000 }), { timeout: 3_000 }));
    }
    // The older create subjects, with the name only in the request: refused too.
    await refused('the pre-2.9 durable create', nc.request(`$JS.API.CONSUMER.DURABLE.CREATE.EXECUTIONS.${logsDurable}`, '{}', { timeout: 3_000 }));
    await refused('an ephemeral consumer', jsm.consumers.add('EXECUTIONS', { ack_policy: AckPolicy.Explicit }));
    await refused('an ordered consumer', jetstream(nc).consumers.get('EXECUTIONS').then((c) => c.next({ expires: 1_000 })));
    // Its own name in the subject, another's in the request: the server holds them to agree.
    const smuggled = await nc.request('$JS.API.CONSUMER.CREATE.EXECUTIONS.sub-failures', JSON.stringify({ stream_name: 'EXECUTIONS', config: { durable_name: logsDurable, ack_policy: 'explicit', deliver_policy: 'all' } }), { timeout: 3_000 });
    expect(smuggled.json<{ error?: { err_code: number } }>().error?.err_code, 'a name in the request that differs from the subject').to.equal(10017);
    // An ack forged for the logs durable's next message never reaches the server.
    const errors: string[] = [];
    void (async () => {
      for await (const s of nc.status()) if (s.type === 'error') errors.push(String(s.error));
    })();
    nc.publish(`$JS.ACK.EXECUTIONS.${logsDurable}.1.1.1.${Date.now()}000000.0`);
    await nc.flush();
    await waitFor(() => errors.some((e) => /permission/i.test(e)), 'the forged ack refused', 5_000);

    expect(await tockConsumers(), "Tock's consumers untouched").to.deep.equal(before);
  });

  it('refuses a connection without a user or with a wrong password', async () => {
    for (const options of [{}, { user: 'executor', pass: 'not-the-password' }]) {
      const error = await connect({ servers: nats.url, timeout: 3_000, ...options }).then(
        (nc) => nc.close().then(() => null),
        (e: Error) => e,
      );
      expect(String(error)).to.match(/authorization/i);
    }
  });
});
