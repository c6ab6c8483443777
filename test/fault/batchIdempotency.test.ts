import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayService } from '../../services/gateway/service.ts';
import { APPEND_CHUNK } from '../../services/jobs/batchLimit.ts';
import { batchStream } from '../../services/jobs/batchRecord.ts';
import { startJobsService } from '../../services/jobs/service.ts';
import { systemClock } from '../../shared/clock.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { AdminService, JobsService } from '../../shared/gen/tock/v1/jobs_pb.ts';
import { createClient } from '../../shared/grpc/bridge.ts';
import { loopbackCredentials } from '../../shared/grpc/grpcSecurity.ts';
import { createLogger } from '../../shared/log.ts';
import { openStore } from '../../shared/openStore.ts';
import { rawRequest } from '../support/api.ts';
import { YEARLY } from '../support/jobFixtures.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Fault injector (a fake failure around a real SQLite store): once armed, the Nth append (of
 * those starting with an event of `type`, when given) fails as a store that went away would,
 * without writing anything; every other call is the real store's, delayed when told (slowJobCreation).
 * Each stream of an appendMany counts as an append, and the whole call fails, as the store's own
 * transaction would. `writeFirstJobElsewhere`: the next appendMany of new jobs finds its first job
 * already written, as another jobs replica completing the same batch would have written it.
 */
function failingOnNthAppend(store: EventStore) {
  let countdown = 0;
  let only: string | undefined;
  let lag = 0;
  let elsewhere = false;
  const injector: EventStore & { failNth(n: number, type?: string): void; slowJobCreation(ms: number): void; writeFirstJobElsewhere(): void } = Object.create(store);
  injector.writeFirstJobElsewhere = () => (elsewhere = true);
  injector.failNth = (n, type) => {
    countdown = n;
    only = type;
  };
  injector.slowJobCreation = (ms) => (lag = ms);
  injector.appendToStream = async (stream, events, options) => {
    const counts = only === undefined || events[0]?.type === only;
    if (counts && countdown > 0 && --countdown === 0) throw new Error('disk I/O error (injected)');
    // A loaded store: a job's creation takes a while, so concurrent writers overlap.
    if (lag > 0 && events[0]?.type === 'JobCreated') await new Promise((r) => setTimeout(r, lag));
    return store.appendToStream(stream, events, options);
  };
  injector.appendMany = async (appends) => {
    for (const { events } of appends) {
      const counts = only === undefined || events[0]?.type === only;
      if (counts && countdown > 0 && --countdown === 0) throw new Error('disk I/O error (injected)');
    }
    if (lag > 0 && appends.some((a) => a.events[0]?.type === 'JobCreated')) await new Promise((r) => setTimeout(r, lag));
    const [first] = appends;
    if (elsewhere && first?.events[0]?.type === 'JobCreated') {
      elsewhere = false;
      await store.appendToStream(first.stream, first.events, { expectedRevision: 'no_stream' });
    }
    return store.appendMany(appends);
  };
  injector.readStream = (stream, options) => store.readStream(stream, options);
  injector.subscribe = (options, handler, onError) => store.subscribe(options, handler, onError);
  injector.setStreamMaxCount = (stream, max) => store.setStreamMaxCount(stream, max);
  injector.close = () => store.close();
  return injector;
}

describe('cron_batch_add when the event store fails part way (real SQLite, gRPC, gateway)', function () {
  this.timeout(30_000);
  const log = createLogger('test', {}, 'silent');
  let dataDir: string;
  let store: ReturnType<typeof failingOnNthAppend>;
  let jobs: Awaited<ReturnType<typeof startJobsService>>;
  let gateway: Awaited<ReturnType<typeof startGatewayService>>;
  let token: string;
  let accountId: number;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tock-batch-fault-'));
    store = failingOnNthAppend(await openStore({ DATA_DIR: dataDir, ESDB_URL: undefined, EVENTSTORE_URL: undefined }));
    const credentials = loopbackCredentials();
    jobs = await startJobsService({
      store,
      clock: systemClock,
      log,
      address: '127.0.0.1:0',
      credentials: credentials.service,
      admin: { address: '127.0.0.1:0', credentials: credentials.admin },
    });
    const client = createClient(JobsService, jobs.addresses.grpc, credentials.service);
    gateway = await startGatewayService({ clients: { jobs: client }, rateLimit: { rate: 0, burst: 0 }, log, host: '127.0.0.1', port: 0 });
    const created = await createClient(AdminService, jobs.addresses.admin, credentials.admin).createAccount({ name: 'batch', timezone: 'UTC', jobLimit: 0 });
    token = created.token;
    accountId = Number(created.account!.id);
  });
  after(async () => {
    await gateway.stop();
    await jobs.stop();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const batch = (names: string[], headers: Record<string, string> = {}) =>
    rawRequest(`http://${gateway.addresses.http}`, '/api/v1/cron_batch_add', {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ data: names.map((name) => ({ url: `https://example.com/${name}`, name, expression: YEARLY, run: 1 })) }),
    });
  const list = async () =>
    (await rawRequest(`http://${gateway.addresses.http}`, '/api/v1/cron_list', { headers: { authorization: `Bearer ${token}` } })).json.data as { id: number; name: string }[];

  it('with X-Idempotency-Key: 503 + Retry-After, then a retry writes every job exactly once, under the same ids', async () => {
    // More jobs than one store transaction takes (APPEND_CHUNK): the creation of a job of the
    // second transaction fails, after the first one's jobs are stored.
    const names = Array.from({ length: APPEND_CHUNK + 50 }, (_, i) => `k${i}`);
    store.failNth(APPEND_CHUNK + 10, 'JobCreated');
    const failed = await batch(names, { 'X-Idempotency-Key': 'batch-1' });
    expect(failed.http).to.equal(503);
    expect(failed.headers.get('retry-after')).to.equal('1');
    expect(failed.json).to.include({ status: 'error', code: 1 });
    expect(failed.json.message).to.match(/same idempotency key/);
    const partial = await waitFor(async () => {
      const written = (await list()).filter((j) => names.includes(j.name));
      return written.length >= APPEND_CHUNK && written;
    }, 'the jobs of the first transaction in the list');
    expect(partial.length, 'the first transaction, not the failed one').to.equal(APPEND_CHUNK);

    const retried = await batch(names, { 'X-Idempotency-Key': 'batch-1' });
    expect(retried.http, retried.text).to.equal(200);
    const ids = retried.json.data.map((j: { id: number }) => j.id);
    expect(retried.json.data.map((j: { name: string }) => j.name)).to.deep.equal(names);
    for (const job of partial) expect(ids).to.include(job.id);
    const again = await batch(names, { 'X-Idempotency-Key': 'batch-1' });
    expect(again.text, 'the answer of the retry that completed the batch').to.equal(retried.text);

    const all = (await list()).filter((j) => names.includes(j.name));
    expect(all.map((j) => j.name).sort(), 'each job exactly once').to.deep.equal([...names].sort());
    // The run order of each element was written once too.
    for (const id of ids) expect((await store.readStream(`cronjob-${id}`)).filter((e) => e.type === 'RunRequested')).to.have.length(1);
  });

  it('the key is also accepted as the idempotencyKey parameter, and a key reused for another batch is error 3', async () => {
    const body = (names: string[], key: string) =>
      rawRequest(`http://${gateway.addresses.http}`, '/api/v1/cron_batch_add', {
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ idempotencyKey: key, data: names.map((name) => ({ url: `https://example.com/${name}`, name, expression: YEARLY })) }),
      });
    const first = await body(['p1', 'p2'], 'param-key');
    expect(first.http, first.text).to.equal(200);
    const second = await body(['p1', 'p2'], 'param-key');
    expect(second.json.data.map((j: { id: number }) => j.id)).to.deep.equal(first.json.data.map((j: { id: number }) => j.id));
    const other = await body(['p3'], 'param-key');
    expect(other.http).to.equal(400);
    expect(other.json).to.include({ code: 3 });
    expect(other.json.message).to.match(/^idempotencyKey: already used for a different batch/);
    const bad = await body(['p4'], 'has space');
    expect(bad.json).to.include({ code: 3 });
    expect((await list()).filter((j) => /^p\d$/.test(j.name)).map((j) => j.name).sort()).to.deep.equal(['p1', 'p2']);
  });

  it('concurrent sends of one batch with one key answer the same bytes, one answer kept', async () => {
    const names = ['c1', 'c2', 'c3'];
    store.slowJobCreation(30);
    const answers = await Promise.all([1, 2, 3, 4].map(() => batch(names, { 'X-Idempotency-Key': 'concurrent-1' }))).finally(() => store.slowJobCreation(0));
    for (const a of answers) expect(a.http, a.text).to.equal(200);
    expect(new Set(answers.map((a) => a.text)).size).to.equal(1);
    expect((await list()).filter((j) => names.includes(j.name))).to.have.length(3);
    const recorded = await store.readStream(batchStream(accountId, 'concurrent-1'));
    expect(recorded.map((e) => e.type)).to.deep.equal(['BatchStarted', 'BatchAnswered']);
  });

  it('completes a batch whose first job another replica wrote meanwhile: that job read back, none twice', async () => {
    const names = ['r1', 'r2', 'r3'];
    store.writeFirstJobElsewhere();
    const answer = await batch(names, { 'X-Idempotency-Key': 'raced-1' });
    expect(answer.http, answer.text).to.equal(200);
    const ids = answer.json.data.map((j: { id: number }) => j.id);
    expect(answer.json.data.map((j: { name: string }) => j.name)).to.deep.equal(names);
    expect((await list()).filter((j) => names.includes(j.name)).map((j) => j.id).sort()).to.deep.equal([...ids].sort());
    for (const id of ids) expect((await store.readStream(`cronjob-${id}`)).map((e) => e.type), `cronjob-${id}`).to.deep.equal(['JobCreated', 'RunRequested']);
  });

  it('without a key: 503 + Retry-After, and the answer says the batch may be partly written', async () => {
    store.failNth(4);
    const failed = await batch(['n1', 'n2', 'n3']);
    expect(failed.http).to.equal(503);
    expect(failed.headers.get('retry-after')).to.equal('1');
    expect(failed.json.message).to.match(/may be partly written/);
    expect(failed.json.message).to.not.match(/disk I\/O|injected/);
  });
});
