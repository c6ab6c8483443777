import { expect } from 'chai';
import { AppError } from '../../../shared/errors.ts';
import { PlannerService } from '../../../shared/gen/tock/v1/planner_pb.ts';
import { createClient } from '../../../shared/grpc/bridge.ts';
import { jitterMs } from '../../../services/planner/occurrences.ts';
import { SIGNING_SECRET_GRACE_MS } from '../../../shared/signing.ts';
import {
  HOUR,
  MINUTE,
  SECOND,
  T0,
  jobCreated,
  jobDeleted,
  jobDisabled,
  jobEdited,
  jobEnabled,
  jobPaused,
  runRequested,
} from '../../unit/planner/jobEvents.ts';
import { statsOf, tick, world, type Received } from './harness.ts';

const ids = (rs: Received[]) => rs.map((r) => r.run.runId);
const at = (ms: number) => BigInt(ms);

describe('planner (integration: SQLite store, in-process bus, fake clock)', function () {
  let w: Awaited<ReturnType<typeof world>>;
  beforeEach(async () => (w = await world()));
  afterEach(async () => w.close());

  it('publishes each occurrence at its time: subject, run id, times and a snapshot of the target', async () => {
    await w.append(
      1,
      jobCreated(1, T0, {
        expression: '*/5 * * * *',
        url: 'https://example.test/hook',
        httpMethod: 'POST',
        postData: 'a=1',
        httpHeaders: 'X-A: 1',
        username: 'u',
        password: 'p',
        userAgent: 'ua',
        timeout: 60,
        instances: 2,
        keyword: 'ok',
        pattern: 'error',
      }, 9),
    );
    await w.startPlanner();
    await w.advance(5 * MINUTE - 1);
    expect(w.take()).to.deep.equal([]);
    await w.advance(1);
    const [r, ...rest] = w.take();
    expect(rest).to.deep.equal([]);
    expect(r!.subject).to.equal('tock.runs.due.1');
    const run = r!.run;
    expect(run.runId).to.equal(`1:${T0 + 5 * MINUTE}`);
    expect(run.scheduledAt).to.equal(at(T0 + 5 * MINUTE));
    expect(run.occurrenceAt).to.equal(at(T0 + 5 * MINUTE));
    expect([run.manual, run.missed, run.lateByMs, run.payload]).to.deep.equal([false, 0, 0n, undefined]);
    const { $typeName: _, ...target } = run.target!;
    expect(target).to.deep.equal({
      jobId: 1n,
      accountId: 9n,
      url: 'https://example.test/hook',
      httpMethod: 'POST',
      postData: 'a=1',
      httpHeaders: 'X-A: 1',
      username: 'u',
      password: 'p',
      userAgent: 'ua',
      timeout: 60,
      instances: 2,
      keyword: 'ok',
      pattern: 'error',
      retries: 0,
      retryBackoff: 10,
      // Account 9 has no events here: it has no signing secret, its requests go unsigned.
      signingSecrets: [],
    });
    await w.advance(10 * MINUTE);
    expect(ids(w.take())).to.deep.equal([`1:${T0 + 10 * MINUTE}`, `1:${T0 + 15 * MINUTE}`]);
  });

  it("carries the account's signing secrets from its events: the new one, and the replaced one until its grace ends", async () => {
    const account = (type: string, data: Record<string, unknown>) => w.store.appendToStream('account-9', [{ type, data }]);
    await account('AccountCreated', { id: 9, name: 'a', timezone: 'UTC', tokenHash: 'h', jobLimit: 0, at: T0, signingSecret: 'whsec_first' });
    // Minutes 0 to 2 of each hour: a run in each of the first two minutes, and one just after the
    // day of grace, without the 1,440 runs a job every minute would make on the way there (nor a
    // watermark written every second of that day).
    await w.append(1, jobCreated(1, T0, { expression: '0-2 * * * *', url: 'https://example.test/hook' }, 9));
    const { planner } = await w.startPlanner({ watermarkEveryMs: MINUTE });
    await w.advance(MINUTE);
    const secrets = () => w.take().map((r) => r.run.target!.signingSecrets.map((k) => [k.secret, Number(k.validUntil)]));
    expect(secrets()).to.deep.equal([[['whsec_first', 0]]]);
    await account('SigningSecretRotated', { signingSecret: 'whsec_second', at: T0 + MINUTE + SECOND });
    for (let i = 0; i < 1000 && planner.secrets.keysOf(9, T0).length < 2; i++) await tick();
    await w.advance(MINUTE);
    const graceEnd = T0 + MINUTE + SECOND + SIGNING_SECRET_GRACE_MS;
    expect(secrets()).to.deep.equal([[['whsec_second', 0], ['whsec_first', graceEnd]]]);
    await w.advance(SIGNING_SECRET_GRACE_MS);
    const late = secrets();
    expect(late.at(-1)).to.deep.equal([['whsec_second', 0]]);
  });

  it('delay: published at occurrence + the drawn delay, with both instants in the message', async () => {
    await w.append(2, jobCreated(2, T0, { expression: '0 * * * *', delay: 5 }));
    await w.startPlanner();
    const o = T0 + HOUR;
    const p = o + jitterMs(2, o, 5);
    await w.advance(p - T0 - 1);
    expect(w.take()).to.deep.equal([]);
    await w.advance(1);
    const [r] = w.take();
    expect([r!.run.runId, r!.run.occurrenceAt, r!.run.scheduledAt]).to.deep.equal([`2:${o}`, at(o), at(p)]);
  });

  it('cron_run: a queued run goes out at its time with its payload, one for now goes out at once', async () => {
    await w.append(3, jobCreated(3, T0, { expression: 'manual' }));
    await w.startPlanner();
    await w.append(3, runRequested(T0, '3:later:ab', T0 + 90 * SECOND, '{"k":1}'));
    await w.append(3, runRequested(T0, '3:now:cd', T0, null));
    await w.settle();
    expect(w.take().map((r) => [r.run.runId, r.run.manual, r.run.payload])).to.deep.equal([['3:now:cd', true, undefined]]);
    await w.advance(90 * SECOND);
    expect(w.take().map((r) => [r.run.runId, r.run.manual, r.run.payload, r.run.scheduledAt])).to.deep.equal([
      ['3:later:ab', true, '{"k":1}', at(T0 + 90 * SECOND)],
    ]);
  });

  it('edit, disable, enable, pause and delete take effect for the next occurrence', async () => {
    await w.append(4, jobCreated(4, T0, { expression: '*/10 * * * *' }));
    await w.startPlanner();
    await w.advance(2 * MINUTE);
    await w.append(4, jobEdited(w.clock.now(), { expression: '*/3 * * * *', url: 'http://127.0.0.1/v2' }));
    await w.advance(4 * MINUTE); // 00:06
    const edited = w.take();
    expect(ids(edited)).to.deep.equal([`4:${T0 + 3 * MINUTE}`, `4:${T0 + 6 * MINUTE}`]);
    expect(edited[0]!.run.target!.url).to.equal('http://127.0.0.1/v2');

    await w.append(4, jobDisabled(w.clock.now()));
    await w.advance(10 * MINUTE); // 00:16
    expect(w.take()).to.deep.equal([]);
    await w.append(4, jobEnabled(w.clock.now()));
    await w.advance(3 * MINUTE); // 00:19
    expect(ids(w.take())).to.deep.equal([`4:${T0 + 18 * MINUTE}`]);

    await w.append(4, jobPaused(w.clock.now(), T0 + 30 * MINUTE));
    await w.advance(11 * MINUTE); // 00:30
    expect(ids(w.take())).to.deep.equal([`4:${T0 + 30 * MINUTE}`]); // 00:21..00:27 skipped, resumes by itself

    await w.append(4, jobPaused(w.clock.now(), null));
    await w.advance(10 * MINUTE);
    expect(w.take()).to.deep.equal([]);
    await w.append(4, jobEnabled(w.clock.now()));
    await w.append(4, jobDeleted(w.clock.now()));
    await w.advance(10 * MINUTE);
    expect(w.take()).to.deep.equal([]);
  });

  it('an interval chains from its creation time, and from the edit time after a schedule edit', async () => {
    const created = T0 + 7 * SECOND;
    w.clock.set(created);
    await w.append(5, jobCreated(5, created, { expression: '20 minutes' }));
    await w.startPlanner();
    await w.advance(41 * MINUTE);
    expect(ids(w.take())).to.deep.equal([`5:${created + 20 * MINUTE}`, `5:${created + 40 * MINUTE}`]);
    const edit = w.clock.now();
    await w.append(5, jobEdited(edit, { expression: '30 minutes' }));
    await w.advance(61 * MINUTE);
    expect(ids(w.take())).to.deep.equal([`5:${edit + 30 * MINUTE}`, `5:${edit + 60 * MINUTE}`]);
  });

  it('one-time: its single run, then nothing', async () => {
    await w.append(6, jobCreated(6, T0, { expression: `@${(T0 + 2 * MINUTE) / 1000}` }));
    await w.startPlanner();
    await w.advance(HOUR);
    expect(ids(w.take())).to.deep.equal([`6:${T0 + 2 * MINUTE}`]);
  });

  it('restart after downtime: one late run per job (missed, lateByMs), then on schedule', async () => {
    await w.append(7, jobCreated(7, T0, { expression: '* * * * *' }));
    await w.append(8, jobCreated(8, T0, { expression: '*/15 * * * *' }));
    const first = await w.startPlanner();
    await w.advance(3 * MINUTE);
    expect(ids(w.take())).to.deep.equal([`7:${T0 + MINUTE}`, `7:${T0 + 2 * MINUTE}`, `7:${T0 + 3 * MINUTE}`]);
    await w.stopPlanner(first);
    await w.clock.advance(HOUR + 30 * SECOND); // down: 00:03 -> 01:03:30
    await w.startPlanner();
    await w.settle();
    const late = w.take().map((r) => [r.run.runId, r.run.missed, Number(r.run.lateByMs), r.run.scheduledAt]);
    expect(late).to.have.deep.members([
      [`7:${T0 + HOUR + 3 * MINUTE}`, 60, 30 * SECOND, at(T0 + HOUR + 3 * MINUTE)],
      [`8:${T0 + HOUR}`, 4, 3 * MINUTE + 30 * SECOND, at(T0 + HOUR)],
    ]);
    await w.advance(30 * SECOND);
    expect(ids(w.take())).to.deep.equal([`7:${T0 + HOUR + 4 * MINUTE}`]);
  });

  it('a stalled process (timer fires an hour late) sends one late run, not a burst', async () => {
    await w.append(15, jobCreated(15, T0, { expression: '* * * * *' }));
    await w.startPlanner();
    await w.advance(MINUTE);
    expect(ids(w.take())).to.deep.equal([`15:${T0 + MINUTE}`]);
    w.clock.set(T0 + HOUR + 30 * SECOND); // time jumps without timers firing (suspend, starvation)
    await w.advance(0);
    expect(w.take().map((r) => [r.run.runId, r.run.missed, Number(r.run.lateByMs)])).to.deep.equal([[`15:${T0 + HOUR}`, 59, 30 * SECOND]]);
    await w.advance(30 * SECOND);
    expect(ids(w.take())).to.deep.equal([`15:${T0 + HOUR + MINUTE}`]);
  });

  it('jobs changed while no planner ran: the runs due before each change are made from the version of their time', async () => {
    await w.append(21, jobCreated(21, T0, { expression: '*/2 * * * * *', url: 'http://127.0.0.1/v0' }));
    await w.append(22, jobCreated(22, T0, { expression: '* * * * * *' }));
    w.clock.set(T0 + 500);
    const first = await w.startPlanner();
    await w.advance(2 * SECOND);
    expect(ids(w.take())).to.deep.equal([`22:${T0 + SECOND}`, `21:${T0 + 2 * SECOND}`, `22:${T0 + 2 * SECOND}`]);
    await w.stopPlanner(first);
    // Down from 2.5 s to 9.5 s. Meanwhile job 21 gets a new URL at 5.5 s and a new schedule at
    // 7.5 s; job 22 is deleted at 4.5 s and a job 23, made at 3.5 s, paused at 6.5 s.
    await w.append(21, jobEdited(T0 + 5500, { url: 'http://127.0.0.1/v1' }), jobEdited(T0 + 7500, { expression: '*/3 * * * * *' }));
    await w.append(22, jobDeleted(T0 + 4500));
    await w.append(23, jobCreated(23, T0 + 3500, { expression: '* * * * * *' }), jobPaused(T0 + 6500, null));
    w.clock.set(T0 + 9500);
    await w.startPlanner();
    await w.settle();
    const made = w.take().map((r) => `${r.run.runId} ${r.run.target!.url}`);
    expect(made).to.have.members([
      `21:${T0 + 4 * SECOND} http://127.0.0.1/v0`,
      `21:${T0 + 6 * SECOND} http://127.0.0.1/v1`,
      `21:${T0 + 9 * SECOND} http://127.0.0.1/v1`,
      `22:${T0 + 3 * SECOND} http://127.0.0.1/job/22`,
      `22:${T0 + 4 * SECOND} http://127.0.0.1/job/22`,
      `23:${T0 + 4 * SECOND} http://127.0.0.1/job/23`,
      `23:${T0 + 5 * SECOND} http://127.0.0.1/job/23`,
      `23:${T0 + 6 * SECOND} http://127.0.0.1/job/23`,
    ]);
    await w.advance(3 * SECOND);
    expect(ids(w.take())).to.deep.equal([`21:${T0 + 12 * SECOND}`]);
  });

  it('a crash and restart within the misfire threshold loses nothing and duplicates nothing', async () => {
    await w.append(9, jobCreated(9, T0, { expression: '*/2 * * * * *' }));
    // Watermarks are then written at xx.5 s: a crash at 10.2 s leaves the run of 10 s out but not recorded.
    w.clock.set(T0 + 500);
    const first = await w.startPlanner();
    await w.advance(9700);
    await w.stopPlanner(first, false); // crash
    await w.clock.advance(5 * SECOND);
    const second = await w.startPlanner();
    await w.advance(10 * SECOND);
    const expected = Array.from({ length: 12 }, (_, i) => `9:${T0 + (i + 1) * 2 * SECOND}`);
    expect(ids(w.take())).to.deep.equal(expected);
    expect(statsOf(second).duplicates).to.be.greaterThan(0); // it did re-publish some; the bus dropped them
  });

  it('two planners on one store and one bus: one message per occurrence', async () => {
    await w.append(10, jobCreated(10, T0, { expression: '* * * * *' }));
    await w.append(11, jobCreated(11, T0, { expression: '5 minutes', delay: 1 }));
    const a = await w.startPlanner();
    const b = await w.startPlanner();
    await w.append(10, runRequested(T0, '10:manual:1', T0 + 30 * SECOND));
    await w.advance(10 * MINUTE + 2 * MINUTE);
    const got = ids(w.take());
    expect(new Set(got).size).to.equal(got.length);
    expect(got.filter((id) => id.startsWith('10:'))).to.have.length(12 + 1);
    expect(got.filter((id) => id.startsWith('11:'))).to.have.length(2);
    const [sa, sb] = [statsOf(a), statsOf(b)];
    expect(sa.published + sb.published).to.equal(2 * got.length);
    expect(sa.duplicates + sb.duplicates).to.equal(got.length);
  });

  it('NextRuns and NextRunOf answer over gRPC', async () => {
    await w.append(12, jobCreated(12, T0, { expression: '0 */6 * * *' }, 3));
    await w.append(13, jobCreated(13, T0, { expression: '* * * * *' }, 3), jobDisabled(T0));
    await w.append(14, jobCreated(14, T0, { expression: 'manual' }, 4));
    const server = await w.startPlanner();
    await w.append(14, runRequested(T0, '14:x', T0 + 42 * SECOND));
    const client = createClient(PlannerService, server.addresses.grpc, {});
    try {
      const s = (ms: number) => BigInt(Math.floor(ms / 1000));
      expect((await client.nextRuns({ accountId: 3n, id: 12n, limit: 3 })).times).to.deep.equal([s(T0 + 6 * HOUR), s(T0 + 12 * HOUR), s(T0 + 18 * HOUR)]);
      expect((await client.nextRuns({ accountId: 3n, id: 12n, limit: 0 })).times).to.have.length(10);
      expect((await client.nextRuns({ accountId: 3n, id: 12n, limit: 500 })).times).to.have.length(100);
      expect((await client.nextRuns({ accountId: 3n, id: 13n, limit: 3 })).times).to.deep.equal([]);
      expect((await client.nextRuns({ accountId: 4n, id: 14n, limit: 3 })).times).to.deep.equal([s(T0 + 42 * SECOND)]);
      for (const [accountId, id] of [[3n, 99n], [4n, 12n]]) {
        const error = await client.nextRuns({ accountId, id, limit: 1 }).catch((e) => e);
        expect(error).to.be.instanceOf(AppError);
        expect([error.kind, error.message]).to.deep.equal(['NOT_FOUND', `cron job ${id} not found`]);
      }
      expect((await client.nextRunOf({ accountId: 3n, ids: [12n, 13n, 14n, 99n] })).nextRuns).to.deep.equal([s(T0 + 6 * HOUR), 0n, 0n, 0n]);
    } finally {
      client.close();
    }
  });
});
