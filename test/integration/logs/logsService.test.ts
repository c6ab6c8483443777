import { toBinary } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { randomInt } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bus } from '../../../shared/bus/bus.ts';
import { createInProcessBus } from '../../../shared/bus/inProcessBus.ts';
import { connectNatsBus } from '../../../shared/bus/natsBus.ts';
import { ExecutionOutcome, ExecutionSchema, type Execution } from '../../../shared/gen/tock/v1/events_pb.ts';
import { LogsService } from '../../../shared/gen/tock/v1/logs_pb.ts';
import { createClient } from '../../../shared/grpc/bridge.ts';
import { createLogger } from '../../../shared/log.ts';
import { ensureTopology, type Outcome } from '../../../shared/topology.ts';
import { executionSubject } from '../../../shared/subjects/executor.ts';
import { startLogsService, type LogsServiceHandle } from '../../../services/logs/service.ts';
import { T0, execution, failure } from '../../unit/logs/executions.ts';
import { nth } from '../../support/nth.ts';
import { waitFor } from '../../support/waitFor.ts';
import { privateNats } from '../../support/natsServer.ts';

const log = createLogger('logs-test', {}, 'silent');

const OUTCOME: Record<number, Outcome> = { [ExecutionOutcome.SUCCEEDED]: 'succeeded', [ExecutionOutcome.FAILED]: 'failed', [ExecutionOutcome.SKIPPED]: 'skipped' };
const publish = (bus: Bus, e: Execution, msgId: string | undefined = e.runId) => {
  const outcome = OUTCOME[e.outcome];
  if (!outcome) throw new Error(`test execution ${e.runId} has no outcome`);
  return bus.publish(executionSubject(Number(e.accountId), Number(e.jobId), outcome), toBinary(ExecutionSchema, e), msgId === undefined ? {} : { msgId });
};

type Question = { accountId?: bigint; id?: bigint; failuresOnly?: boolean; keyword?: string; page?: number; limit?: number };

interface Harness {
  bus: Bus;
  /** After the suite: forget what it left on the server. */
  cleanup(accounts: bigint[], durables: string[]): Promise<void>;
}

function logsServiceSuite(name: string, open: () => Promise<Harness>) {
  describe(`logs service over ${name}`, function () {
    this.timeout(60_000);
    // Ids no other run of this suite (or another suite on a shared server) uses.
    const base = BigInt(randomInt(1, 2 ** 40)) * 1000n;
    const [acct, other] = [base + 1n, base + 2n];
    const [job1, job2, theirJob] = [base + 11n, base + 12n, base + 13n];
    let harness: Harness;
    let dir: string;
    const durables: string[] = [];
    let service: LogsServiceHandle | undefined;
    let client: ReturnType<typeof createClient<(typeof LogsService)['method']>> | undefined;

    const start = async () => {
      service = await startLogsService({ bus: harness.bus, dbPath: join(dir, 'logs.db'), log, address: '127.0.0.1:0' });
      durables.push(service.durable);
      client = createClient(LogsService, service.addresses.grpc, {}, { deadlineMs: 10_000 });
    };
    const stop = async () => {
      client?.close();
      await service?.stop();
      [client, service] = [undefined, undefined];
    };
    const ask = async (request: Question) => (await client!.logs({ accountId: acct, limit: 1000, ...request })).entries;

    // The questions asked before and after restarts; the answers must not change.
    const QUESTIONS: Question[] = [
      { id: job1 },
      { id: job2 },
      { id: job1, failuresOnly: true },
      { id: 0n, failuresOnly: true },
      { id: job1, keyword: 'TIMEOUT' },
      { id: job1, keyword: '2024-10-17' },
      { id: job1, limit: 7, page: 2 },
      { id: theirJob },
      { accountId: other, id: 0n, failuresOnly: true },
    ];
    const answers = () => Promise.all(QUESTIONS.map(ask));

    before(async () => {
      harness = await open();
      dir = mkdtempSync(join(tmpdir(), 'tock-logs-it-'));
      await ensureTopology(harness.bus);
    });
    after(async () => {
      await stop();
      await harness.cleanup([acct, other], durables);
      rmSync(dir, { recursive: true, force: true });
    });

    it('records what is published, answers over gRPC, and rebuilds identically from the stream', async () => {
      await start();
      const published: Execution[] = [];
      for (let i = 0; i < 30; i++) {
        const time = T0 + BigInt(i * 3600);
        const e = i % 5 === 0
          ? failure({ runId: `${job1}:${i}`, accountId: acct, jobId: job1, time, error: i === 10 ? 'Timeout after 30 s' : 'HTTP 503' })
          : execution({ runId: `${job1}:${i}`, accountId: acct, jobId: job1, time });
        published.push(e);
      }
      published.push(failure({ runId: `${job2}:1`, accountId: acct, jobId: job2 }), execution({ runId: `${job2}:2`, accountId: acct, jobId: job2, time: T0 + 60n }));
      published.push(failure({ runId: `${theirJob}:1`, accountId: other, jobId: theirJob }));
      for (const e of published) await publish(harness.bus, e);
      // A republish the stream drops, one it keeps (outside its window: no msgId) that the view drops, and garbage.
      expect((await publish(harness.bus, nth(published, 3))).duplicate).to.equal(true);
      await publish(harness.bus, nth(published, 4), undefined);
      await harness.bus.publish(executionSubject(Number(acct), Number(job1), 'failed'), new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]));
      const last = execution({ runId: `${job1}:last`, accountId: acct, jobId: job1, time: T0 - 1n });
      await publish(harness.bus, last);

      await waitFor(async () => (await ask({ id: job1 })).some((e) => e.execution?.runId === last.runId), 'the last execution to be recorded', 15_000);
      const before = await answers();
      // One answer per question: the `!` below index within QUESTIONS.length.
      expect(before).to.have.length(QUESTIONS.length);
      const [log1, log2, fail1, failAll, timeout, day, page2, theirs, otherAccount] = before;
      expect(log1!.map((e) => e.execution!.runId)).to.deep.equal([...Array.from({ length: 30 }, (_, i) => `${job1}:${29 - i}`), last.runId]);
      expect(new Set(log1!.map((e) => e.id)).size).to.equal(31);
      expect(log2!.map((e) => e.execution!.runId)).to.deep.equal([`${job2}:2`, `${job2}:1`]);
      expect(fail1!.map((e) => e.execution!.runId)).to.deep.equal([25, 20, 15, 10, 5, 0].map((i) => `${job1}:${i}`));
      // job2:1 and job1:0 share their scheduled time: the later arrival comes first.
      expect(failAll!.map((e) => e.execution!.runId)).to.deep.equal([...[25, 20, 15, 10, 5].map((i) => `${job1}:${i}`), `${job2}:1`, `${job1}:0`]);
      expect(timeout!.map((e) => e.execution!.runId)).to.deep.equal([`${job1}:10`]);
      expect(day!.map((e) => e.execution!.runId)).to.deep.equal(Array.from({ length: 14 }, (_, i) => `${job1}:${29 - i}`)); // 16:30 on the 16th to 15:30 on the 17th
      expect(page2!.map((e) => e.execution!.runId)).to.deep.equal(Array.from({ length: 7 }, (_, i) => `${job1}:${22 - i}`));
      expect(theirs).to.deep.equal([]);
      expect(otherAccount!.map((e) => e.execution!.runId)).to.deep.equal([`${theirJob}:1`]);
      expect(log1![0]!.execution).to.deep.equal(published[29]);

      // A restart on the same file resumes its durable: nothing is recorded twice.
      const firstDurable = service!.durable;
      await stop();
      await start();
      expect(service!.durable).to.equal(firstDurable);
      expect(await answers()).to.deep.equal(before);

      // A lost file: a new durable replays the whole stream into a new one, with the same ids.
      await stop();
      for (const suffix of ['', '-wal', '-shm']) rmSync(join(dir, `logs.db${suffix}`), { force: true });
      expect(existsSync(join(dir, 'logs.db'))).to.equal(false);
      await start();
      expect(service!.durable).to.not.equal(firstDurable);
      const rebuilt = await waitFor(async () => {
        const a = await answers();
        return JSON.stringify(a, big) === JSON.stringify(before, big) && a;
      }, 'the rebuilt answers to match', 15_000);
      expect(rebuilt).to.deep.equal(before);
    });

    it('never answers with URL credentials, also for a record an older executor wrote with them', async () => {
      if (!service) await start();
      const job = base + 14n;
      await publish(harness.bus, execution({ runId: `${job}:1`, accountId: acct, jobId: job, url: 'https://old:Cleartext-41@h.example/p' }));
      const [entry] = await waitFor(async () => {
        const entries = await ask({ id: job });
        return entries.length === 1 && entries;
      }, 'the old record', 15_000);
      expect(entry!.execution!.url).to.equal('https://***@h.example/p');
    });
  });
}

const big = (_key: string, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value);

logsServiceSuite('the in-process bus', async () => {
  const bus = createInProcessBus();
  return { bus, cleanup: () => bus.close() };
});

logsServiceSuite('NATS JetStream (a server of its own)', async () => {
  const nats = await privateNats();
  const bus = await connectNatsBus(nats.url, { name: 'tock-logs-test' });
  return {
    bus,
    async cleanup() {
      await bus.close();
      await nats.stop();
    },
  };
});
