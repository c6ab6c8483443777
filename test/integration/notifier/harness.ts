import { create, toBinary } from '@bufbuild/protobuf';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { createInProcessBus } from '../../../shared/bus/inProcessBus.ts';
import { FakeClock } from '../../../shared/clock.ts';
import { createKeyring, generateKey, secretBox } from '../../../shared/crypto/envelope.ts';
import type { EventStore } from '../../../shared/eventStore/eventStore.ts';
import { ExecutionOutcome, ExecutionSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { createLogger } from '../../../shared/log.ts';
import { openStore } from '../../../shared/openStore.ts';
import { ensureTopology } from '../../../shared/topology.ts';
import { executionSubject } from '../../../shared/subjects/executor.ts';
import { startNotifierService, type NotifierOptions } from '../../../services/notifier/service.ts';

export const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);

/** A fresh key for the channel secrets of one test process. */
export const testSecrets = secretBox(createKeyring([{ key: generateKey() }]));

/** What a job's stream holds, written as the jobs service writes it (the notifier's input contract). */
export async function createJob(store: EventStore, id: number, settings: Record<string, unknown> = {}, accountId = 1) {
  await store.appendToStream(`cronjob-${id}`, [
    {
      type: 'JobCreated',
      data: {
        id,
        accountId,
        at: T0,
        settings: { url: `https://example.com/job/${id}`, name: `job ${id}`, notify: true, notifyEvery: 1, notifyMatch: '', notifyTime: null, failureThreshold: 20, group: null, password: '', httpHeaders: '', ...settings },
      },
    },
  ]);
}

export async function jobEvent(store: EventStore, id: number, type: string, data: Record<string, unknown> = {}) {
  await store.appendToStream(`cronjob-${id}`, [{ type, data: { at: T0, ...data } }]);
}

let runs = 0;
/** Publishes an execution as an executor does. */
export async function execute(bus: ReturnType<typeof createInProcessBus>, jobId: number, failed: boolean, over: Record<string, unknown> = {}, accountId = 1) {
  const runId = `${jobId}:${++runs}`;
  const execution = create(ExecutionSchema, {
    runId,
    jobId: BigInt(jobId),
    accountId: BigInt(accountId),
    outcome: failed ? ExecutionOutcome.FAILED : ExecutionOutcome.SUCCEEDED,
    time: BigInt(T0 / 1000),
    httpStatus: failed ? 503 : 200,
    error: failed ? 'HTTP status 503' : '',
    output: failed ? 'upstream down' : 'ok',
    downloaded: 13n,
    executionTime: 0.5,
    ...over,
  });
  await bus.publish(executionSubject(accountId, jobId, failed ? 'failed' : 'succeeded'), toBinary(ExecutionSchema, execution), { msgId: runId });
  return runId;
}

/**
 * The notifier on a fresh SQLite store and in-process bus, on a fake clock that starts at T0, or
 * at `startAt` (a receiver whose library checks timestamps against its own clock needs today).
 */
export async function startHarness(options: Partial<NotifierOptions> & { seed?: (store: EventStore) => Promise<void>; startAt?: number } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-notifier-'));
  const clock = new FakeClock(options.startAt ?? T0);
  const store = await openStore({ DATA_DIR: dataDir, EVENTSTORE_URL: undefined, ESDB_URL: undefined });
  await options.seed?.(store);
  const bus = createInProcessBus({ clock });
  await ensureTopology(bus);
  const notifier = await startNotifierService({
    store,
    secrets: testSecrets,
    bus,
    clock,
    log: createLogger('test', {}, 'silent'),
    address: '127.0.0.1:0',
    allowNetworks: ['127.0.0.0/8'],
    windowMs: 60_000,
    retry: { baseMs: 1000, maxMs: 10_000 },
    random: () => 0.5,
    ...options,
  });
  return {
    clock,
    store,
    bus,
    notifier,
    dataDir,
    /** Moves the fake clock and lets the notifier act on it. */
    async advance(ms: number) {
      await clock.advance(ms);
      await notifier.dispatcher.tick();
    },
    async destroy() {
      await notifier.stop();
      await bus.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local HTTP receiver; `answer` picks each response's status (and headers). */
export async function startReceiver(answer: (n: number) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 })) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
      const { status, headers } = answer(received.length);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(status < 300 ? '{"ok":true}' : '{"error":"receiver says no"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export interface Mail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP peer (smtp-server), plain text on loopback, accepting any sender. */
export async function startSmtp() {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString() });
        callback();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Decodes a quoted-printable MIME part body (soft line breaks and =XX bytes). */
export const decodeQp = (text: string) =>
  Buffer.from(text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');

export const settle = (ms = 200) => new Promise((r) => setTimeout(r, ms));

/** The Subject header of a raw message: unfolded, RFC 2047 encoded words decoded. */
export function subjectOf(raw: string): string {
  const headers = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  const line = headers.split(/\r?\n/).find((l) => /^subject:/i.test(l)) ?? '';
  return line
    .replace(/^subject:\s*/i, '')
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?Q\?(.*?)\?=/gi, (_, q: string) => decodeQp(q.replace(/_/g, ' ')))
    .replace(/=\?UTF-8\?B\?(.*?)\?=/gi, (_, b: string) => Buffer.from(b, 'base64').toString('utf8'));
}
