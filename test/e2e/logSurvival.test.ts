import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { TEST_TOKEN } from '../support/embedded.ts';
import { sampleSum } from '../support/metricsText.ts';
import { serviceCommand } from '../support/build.ts';
import { freePort } from '../support/processes.ts';
import { waitFor } from '../support/waitFor.ts';

/**
 * Logging must never take the service down: Tock as a real process whose standard output is a
 * full disk (/dev/full answers every write with ENOSPC) or a pipe nobody reads any more (EPIPE).
 */
describe('a process whose log destination fails keeps serving', function () {
  // Starting Tock as a process is slow on a loaded machine; nothing here is timed.
  this.timeout(180_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tock-logfail-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  async function start(stdout: 'pipe' | number, stderr: 'pipe' | number) {
    const [port, opsPort] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, serviceCommand('embedded'), {
      env: { ...process.env, DATA_DIR: join(dataDir, String(port)), PORT: String(port), HOST: '127.0.0.1', OPS_PORT: String(opsPort), LOG_LEVEL: 'debug', TOCK_RATE_LIMIT: '0', TOCK_BOOTSTRAP_TOKEN: TEST_TOKEN },
      stdio: ['ignore', stdout, stderr],
    });
    let exited: number | string | null = null;
    child.once('exit', (code, signal) => (exited = code ?? signal));
    return { child, base: `http://127.0.0.1:${port}`, ops: `http://127.0.0.1:${opsPort}`, exited: () => exited };
  }

  // Every API request writes an access line; a bad one writes a warning or more.
  async function exercise(base: string) {
    for (let i = 0; i < 40; i++) {
      const r = await fetch(`${base}/api/v1/cron_list`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
      expect(r.status).to.equal(200);
      await fetch(`${base}/api/v1/cron_get?id=x`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
    }
  }

  async function stop(child: ChildProcess) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }

  it('standard output and error on a full disk (/dev/full)', async () => {
    const full = openSync('/dev/full', 'w');
    const p = await start(full, full);
    closeSync(full);
    try {
      await waitFor(async () => p.exited() !== null || (await fetch(`${p.base}/healthz`).then((r) => r.ok, () => false)), 'the gateway', 120_000);
      expect(p.exited(), 'still running after its start-up lines').to.equal(null);
      await exercise(p.base);
      const metrics = await (await fetch(`${p.ops}/metrics`)).text();
      expect(sampleSum(metrics, 'tock_log_write_errors_total'), 'the lost lines are counted').to.be.above(0);
      expect(p.exited()).to.equal(null);
    } finally {
      await stop(p.child);
    }
  });

  it('standard output on a pipe whose reader went away (EPIPE)', async () => {
    const p = await start('pipe', 'pipe');
    try {
      let seen = '';
      p.child.stdout!.on('data', (c) => (seen += c));
      await waitFor(() => p.exited() !== null || /Tock is running/.test(seen), 'the start line', 120_000);
      expect(p.exited()).to.equal(null);
      // The reader goes away: from now on every write to stdout and stderr fails with EPIPE.
      p.child.stdout!.destroy();
      p.child.stderr!.destroy();
      await exercise(p.base);
      expect(p.exited()).to.equal(null);
      expect((await fetch(`${p.base}/healthz`)).status).to.equal(200);
    } finally {
      await stop(p.child);
    }
  });
});
