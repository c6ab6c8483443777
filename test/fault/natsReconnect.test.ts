import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { connectNatsBus } from '../../shared/bus/natsBus.ts';
import { connectNatsLeases } from '../../shared/leases/natsLeases.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import type { NatsAuth } from '../../shared/bus/natsAuth.ts';
import { createLogger } from '../../shared/log.ts';
import { freePort } from '../support/processes.ts';
import { natsServer } from '../support/natsServer.ts';
import { sleep, waitFor } from '../support/waitFor.ts';

const NATS_SERVER = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
const USER = ['--user', 'tock', '--pass', 'right'];
const WRONG_USER = ['--user', 'tock', '--pass', 'changed'];
// Long enough for the client to be refused several times (it retries a second or so apart).
const AUTH_WINDOW_MS = 5000;

/** A logger whose JSON lines the test can read. */
function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: createLogger('bus', {}, 'info', destination), lines };
}

/** Publishes until the bus takes it (the connection may still be coming back), then waits for the consumer to get it. */
async function roundTrip(bus: Bus, got: string[], body: string) {
  await waitFor(() => bus.publish('rt.x', new TextEncoder().encode(body)).then(() => true, () => false), `publish of ${body}`, 30_000);
  await waitFor(() => got.includes(body), `${body} consumed`, 30_000);
}

describe('NATS connections never give up: a restart, a window of refused credentials, a connection nats.js closed', function () {
  this.timeout(120_000);
  let dir: string;
  let nats: ReturnType<typeof natsServer>;

  beforeEach(async function () {
    if (!existsSync(NATS_SERVER)) {
      console.log(`      (skipped: no nats-server at ${NATS_SERVER}; the test starts and stops one of its own)`);
      this.skip();
    }
    dir = mkdtempSync(join(tmpdir(), 'tock-nats-reconnect-'));
    nats = natsServer(await freePort(), dir, NATS_SERVER);
    await nats.start(USER);
  });
  afterEach(async () => {
    await nats?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function openBus(auth: NatsAuth) {
    const { log, lines } = recordingLogger();
    const bus = await connectNatsBus(nats.url, { name: 'reconnect-test', log, auth });
    await bus.ensureStream({ name: 'RT', subjects: ['rt.>'], retention: 'workqueue', duplicateWindowMs: 60_000 });
    const got: string[] = [];
    await bus.consume({ stream: 'RT', durable: 'rt', ackWaitMs: 5000 }, async (m) => {
      got.push(new TextDecoder().decode(m.data));
      await m.ack();
    });
    const heard: string[] = [];
    await bus.subscribe('live.x', (_s, data) => heard.push(new TextDecoder().decode(data)));
    return { bus, got, heard, lines };
  }

  it('rides out a restart during which the server refuses its credentials, and logs why', async () => {
    const { bus, got, heard, lines } = await openBus({ user: 'tock', pass: 'right' });
    try {
      await roundTrip(bus, got, 'before');
      await nats.kill();
      // The user's password changed for a while (a Secret rolled out in two steps, say): refused.
      await nats.start(WRONG_USER);
      await sleep(AUTH_WINDOW_MS);
      const refusals = lines.filter((l) => l.msg === 'NATS error' && /authorization violation/i.test(String(l.error)));
      expect(refusals.length, 'authorization errors seen and logged').to.be.at.least(2);
      expect(lines.some((l) => l.msg === 'disconnected from NATS'), 'disconnect logged').to.equal(true);
      await nats.kill();
      await nats.start(USER);
      await roundTrip(bus, got, 'after');
      // The same connection came back: nats.js did not give up on it.
      expect(lines.filter((l) => l.msg === 'NATS connection closed by the client; opening a new one')).to.deep.equal([]);
      expect(lines.some((l) => l.msg === 'reconnected to NATS')).to.equal(true);
      await waitFor(async () => (await bus.notify('live.x', new TextEncoder().encode('live')), heard.includes('live')), 'live message heard', 10_000);
    } finally {
      await bus.close();
    }
  });

  it('opens a new connection when nats.js closes one, and consumes and hears on it again', async () => {
    // A credentials source that fails for a while (a .creds file being rewritten): nats.js closes
    // the connection for good when the authenticator throws.
    let broken = false;
    const authenticator = () => {
      if (broken) throw new Error('credentials unreadable');
      return { user: 'tock', pass: 'right' };
    };
    const { bus, got, heard, lines } = await openBus({ authenticator });
    const leases = await connectNatsLeases(nats.url, 'rt_leases', Date.now, { auth: { authenticator }, log: recordingLogger().log });
    try {
      await roundTrip(bus, got, 'before');
      broken = true;
      await nats.kill();
      await nats.start(USER);
      await waitFor(() => lines.some((l) => l.msg === 'NATS connection closed by the client; opening a new one'), 'the closed connection noticed', 20_000);
      broken = false;
      await roundTrip(bus, got, 'after');
      expect(lines.some((l) => l.msg === 'new NATS connection open')).to.equal(true);
      await waitFor(async () => (await bus.notify('live.x', new TextEncoder().encode('live')), heard.includes('live')), 'live message heard on the new connection', 10_000);
      expect(await waitFor(() => leases.acquire('k', 'me', 1, 10_000).catch(() => false), 'lease taken on the new connection', 20_000)).to.equal(true);
    } finally {
      await leases.close();
      await bus.close();
    }
  });
});
